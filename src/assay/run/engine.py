"""The run engine: stream items, evaluate every criterion, write output items as they finish.

    sample = item's own sample (a later generator step fills it from a target)
    inputs = criterion.mapping.resolve(item, sample)
    result = await criterion.evaluator(inputs)
    store.add_output_items(...)

Concurrency is a fixed pool of worker tasks pulling from a bounded queue, so memory stays flat
whatever the dataset size. A single writer batches finished items into one transaction every
``flush_every`` items (``COMPUTED_FLUSH_EVERY`` for a run that only computes) or ``flush_seconds``;
items already stored (a resumed run) are skipped before any work is done. Criteria that only
compute (F1, a string check) are judged as each item is read, with no task or queue between
reading, judging and writing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from assay.config.settings import settings
from assay.dataset import Dataset
from assay.dataset.readers import Row
from assay.errors import ConfigError, DataError, Filtered, ModelUnreachable
from assay.llm import Model, ModelRegistry
from assay.llm.batch import Batching, batched
from assay.llm.batch import current as current_batching
from assay.llm.model import watch_outages
from assay.llm.registry import UNREACHABLE_HINT
from assay.results import OutputItem, Result
from assay.run.criteria import BoundCriterion
from assay.store import Store
from assay.store.base import now
from assay.store.item_rows import ItemRows, Verdict, encode_verdicts
from assay.store.tally import RunTally
from assay.targets.base import TRIAL, Target, target_failed

if TYPE_CHECKING:
    from assay.run.definition import RunBinding

ProgressCallback = Callable[[int], None]
"""Told how many more items were stored (from another thread when a run spreads over processes)."""
SampleCallback = Callable[[dict[str, Any]], None]
Finished = OutputItem | ItemRows
"""An evaluated item for the writer: as evaluated, or already encoded as the rows it is stored as
(by an executor whose processes only compute, so the writer's process only inserts them)."""


log = logging.getLogger("assay.run")

# Items in flight. Model-free evaluators do not await, so this matters only for model calls, where
# a judge call spends most of its time waiting on the network.
DEFAULT_CONCURRENCY = 64


class Share(Protocol):
    """The output items one of the processes a run spreads over executes (``assay.run.processes``)."""

    process: int
    """Which of them this is (0: the one that started the others)."""

    def owns(self, index: int) -> bool:
        """Whether this process executes output item ``index``; asked of every index in turn."""
        ...


class WriteTurn(Protocol):
    """Taken before a write and given back after it, by each of the processes a run spreads over
    (``assay.run.processes``): a store that takes one writer at a time is written by one at a time."""

    def take(self, *, wait: bool) -> bool: ...

    def give(self) -> None: ...


FLUSH_EVERY = 200
"""Items written in one transaction, in a run that waits on models."""
COMPUTED_FLUSH_EVERY = 1000
"""Items written in one transaction in a run that only computes. Each commit writes every page the
transaction touched to the write-ahead log, the last leaf and inner pages of each table and index
again each time: at 200 items a transaction an F1 run spent about 4 µs an item more than at 1,000
(``bench/run_overhead.py``). More items a batch gained nothing further; ``flush_seconds`` still
bounds how long an item waits for its write, so a slow metric's progress moves as often."""
TURN_RETRY_ITEMS = 50
"""A batch whose write had to wait its turn is offered again after this many more items."""


class Executor(Protocol):
    """Evaluates rows from ``rows`` (None: no more) and puts each output item on ``finished``."""

    async def __call__(
        self, rows: asyncio.Queue[Row | None], finished: asyncio.Queue[Finished | None], job: RunJob
    ) -> None: ...


@dataclass
class RunOptions:
    concurrency: int = DEFAULT_CONCURRENCY
    flush_every: int | None = None
    """A batch of items is written in one transaction once it holds this many; None: ``FLUSH_EVERY``,
    or ``COMPUTED_FLUSH_EVERY`` for a run that only computes. ``flush_seconds`` bounds how long an
    item waits either way."""
    flush_seconds: float = 0.5
    keep_going: Callable[[], bool] | None = None
    """Asked every ``check_seconds`` (off the event loop); False stops the run (it was canceled)."""
    check_seconds: float = 1.0
    worker: str | None = None
    """The worker holding the run's lease: each write is conditional on it still holding it."""
    executor: Executor | None = None
    """Evaluates the queued rows instead of the local pool of ``concurrency`` tasks (``assay.ray``)."""
    processes: int | None = None
    """Processes a run that waits on no model spreads over (``assay.run.processes``); None: the
    setting ``ASSAY_RUN_PROCESSES``."""
    before_complete: Callable[[], None] | None = None
    """Called once every item is stored, before the run is marked completed (a simulation saves
    its conversations as a dataset here, so a completed run already names it)."""
    batch: bool = False
    """Send the run's chat calls through the provider's Batch API (``assay.llm.batch``); set from
    the run's stored settings, so every way of running it does the same."""


@dataclass
class RunJob:
    """Everything one execution of a run needs; nothing is global."""

    run_id: str
    dataset: Dataset
    criteria: list[BoundCriterion]
    store: Store
    options: RunOptions = field(default_factory=RunOptions)
    on_stored: ProgressCallback | None = None
    models: ModelRegistry | None = None
    target: Target | None = None
    on_sample: SampleCallback | None = None
    """Told of each sample the target generated (before the judges see it), for progress."""
    stopped: bool = False
    """Set when ``keep_going`` said stop: the run ends canceled, with what was done kept."""
    lost: bool = False
    """Set when another worker took the run over: this one stops and writes nothing more."""
    write_error: Exception | None = None
    """Why the store refused a batch; the run stops and ``execute`` raises it."""
    crash: Exception | None = None
    """A worker's unexpected exception (a bug, not an item's failure): the run stops and ``execute``
    raises it, where the other workers and the reader would otherwise wait on the dead one for ever."""
    held_back: int = 0
    """Items not stored because a model's endpoint was unreachable: ``execute`` then raises
    ``ModelUnreachable`` and the run ends resumable."""
    outage: Model | None = None
    """The model whose endpoint held items back."""
    binding: RunBinding | None = None
    """What the criteria and target were bound from, for an executor that binds them again elsewhere."""
    trials: int = 1
    """The target runs this many times per item; trial ``t`` of item ``i`` is output item ``i·trials + t``."""
    share: Share | None = None
    """This process executes only the output items its share owns (the run spreads over processes)."""
    stored: set[int] | None = None
    """The output items already stored, when the caller has read them (else ``execute`` does)."""
    write_turn: WriteTurn | None = None
    """With ``share``: what the run's processes take turns at writing with. A batch that finds the
    turn taken is written later, bigger; meanwhile this process evaluates on."""
    tally: RunTally | None = None
    """Counts what this execution wrote (a spread run's processes each their own, added up at the
    end): the run's summary without reading its rows back."""
    in_flight: set[asyncio.Task[OutputItem]] = field(default_factory=set)
    """The items being evaluated now: a canceled run cancels them (a resume evaluates them again)
    rather than wait on calls that may take minutes."""


@dataclass
class Part:
    """Some criteria's results for one item, by each criterion's index, with the item and sample they
    judged: an executor that splits the criteria between processes assembles the item from its parts."""

    row: Row
    groups: dict[int, list[Result]]


async def evaluate_part(
    row: Row,
    criteria: list[BoundCriterion],
    indices: Sequence[int] | None = None,
    target: Target | None = None,
    on_sample: SampleCallback | None = None,
) -> Part:
    """sample = await generate(item) → the inputs of each criterion in ``indices`` (default: all) → its results."""
    assert row.item is not None
    item = row.item
    sample = row.sample
    if target is not None:
        TRIAL.set(row.trial)  # this task's own context: the target reads it for its seed
        sample = await target(item)
        if row.trial is not None:
            sample = {**sample, "trial": row.trial}
        if sample.get("item_fields"):
            # A source with its own row shape (stored responses) supplies query, response, ... itself.
            item = {**item, **sample.pop("item_fields")}
        if on_sample is not None:
            on_sample(sample)
    if indices is None:
        chosen = [(i, criterion) for i, criterion in enumerate(criteria) if criterion.applies(item)]
    else:
        chosen = [(i, criteria[i]) for i in indices if criteria[i].applies(item)]
    failure = target_failed(sample)
    if failure is not None:
        # What a provider's filter did is data to a criterion that judges it (promptfoo's guardrails).
        judged = isinstance(failure, Filtered)
        found = [
            await c.evaluate_all(item, sample) if judged and c.judges_filtered else c.failed_for(item, failure)
            for _, c in chosen
        ]
    elif len(chosen) == 1 or all(c.computes_only for _, c in chosen):
        # Criteria that never wait are awaited in turn, with no task each (gathered, their tasks would
        # run a second time after the item's).
        found = [await c.evaluate_all(item, sample) for _, c in chosen]
    else:
        found = list(await asyncio.gather(*(c.evaluate_all(item, sample) for _, c in chosen)))
    groups = {i: [c.annotate(r, item) for r in group] for (i, c), group in zip(chosen, found, strict=True)}
    if item is not row.item or sample is not row.sample:
        row = dataclasses.replace(row, item=item, sample=sample)
    return Part(row, groups)


def assemble(parts: list[Part]) -> OutputItem:
    """One output item from its parts, its results in the criteria's order; the last part's row has
    the item and the sample every part judged."""
    row = parts[-1].row
    assert row.item is not None
    if len(parts) == 1:  # its groups are in the criteria's order already
        results = [r for group in parts[0].groups.values() for r in group]
    else:
        groups = {i: group for part in parts for i, group in part.groups.items()}
        results = [r for i in sorted(groups) for r in groups[i]]
    # Every part is already typed (the row read and checked, each result a Result): validating them
    # again would copy the item and the sample for nothing, on every item of every run.
    return OutputItem.checked(row.index, row.item, row.sample, results)


async def evaluate_item(
    row: Row, criteria: list[BoundCriterion], target: Target | None = None, on_sample: SampleCallback | None = None
) -> OutputItem:
    """sample = await generate(item) → each criterion's inputs → its result."""
    return assemble([await evaluate_part(row, criteria, None, target, on_sample)])


async def execute(job: RunJob) -> int:
    """Evaluate every item not yet stored for the run; returns how many were evaluated now."""
    if not job.options.batch:
        return await _execute(job)
    if job.options.executor is not None:
        raise ConfigError(
            "batch mode runs in one process: its batches are gathered from every item's calls",
            hint="run it without --ray, or without batch",
        )
    with batched(Batching(RunBatches(job.store, job.run_id))):
        return await _execute(job)


BATCH_IN_FLIGHT = 5_000
"""Items in flight in batch mode: each step of theirs (a target's call, a judge's) goes up as one batch."""


@dataclass
class RunBatches:
    """A run's batches in the store (``assay.llm.batch.BatchLedger``)."""

    store: Store
    run_id: str

    def recorded(self) -> list[tuple[str, str]]:
        return self.store.model_batches(self.run_id)

    def record(self, model: str, batch_id: str) -> None:
        self.store.record_model_batch(self.run_id, model, batch_id)


async def _execute(job: RunJob) -> int:
    if job.models is not None:
        await job.models.check_reachable()
    ready = getattr(job.target, "ready", None)
    if ready is not None:  # its tools opened once: a tools file that will not load stops the run, not each item
        await ready()
    if job.stored is not None:
        done = job.stored
    elif _writes_on_loop(job):  # read where the writes are made: nothing else needs the loop meanwhile
        done = job.store.done_item_ids(job.run_id)
    else:
        done = await asyncio.to_thread(job.store.done_item_ids, job.run_id)
    concurrency = max(job.options.concurrency, BATCH_IN_FLIGHT) if job.options.batch else job.options.concurrency
    rows: asyncio.Queue[Row | None] = asyncio.Queue(maxsize=concurrency * 4)
    # Bounded too: when the store falls behind, workers wait instead of piling items up in memory.
    computes = only_computes(job)
    flush_every = job.options.flush_every or (COMPUTED_FLUSH_EVERY if computes else FLUSH_EVERY)
    finished: asyncio.Queue[Finished | None] = asyncio.Queue(maxsize=flush_every * 2)
    if job.options.executor is not None:
        workers = [asyncio.create_task(job.options.executor(rows, finished, job))]
    elif computes:
        workers = []  # each item is evaluated as it is read, below
    else:
        workers = [asyncio.create_task(_work(rows, finished, job)) for _ in range(concurrency)]
    writer = _Writer(job, flush_every)
    # Items that are judged as they are read go straight to the writer; others pass a queue to its task.
    writing = None if computes else asyncio.create_task(_write(finished, writer))
    watcher = asyncio.create_task(_watch(job)) if job.options.keep_going is not None else None
    evaluated = 0
    block: list[Row] = []  # items read but not yet judged, when they are judged as they are read
    try:
        try:
            for trial in _to_evaluate(job, done):
                if not computes:
                    await rows.put(trial)
                elif len(block) == JUDGED_TOGETHER - 1:
                    whole, block = [*block, trial], []
                    await _judge_now(whole, job, writer)
                else:
                    block.append(trial)
                evaluated += 1
        except Exception:
            # What was read before the reading failed (a bad row, this process's share of a spread run
            # failing) is judged and stored, as it would have been; a resume then has only the rest to do.
            await _judge_now(block, job, writer)
            raise
        await _judge_now(block, job, writer)
        for _ in workers:
            await rows.put(None)
        await asyncio.gather(*workers)
    finally:
        try:
            if watcher is not None:
                watcher.cancel()
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            if writing is None:
                await writer.flush(last=True)
            else:
                await finished.put(None)
                await writing
        finally:
            # Also when Ctrl-C cancelled every task of the loop at once (the writer too, so the wait
            # above was cut short): connections left open are reported by aiohttp as it exits.
            await _close_clients(job)
    if job.crash is not None:
        raise job.crash
    if job.write_error is not None:
        raise job.write_error
    outage = _outage_error(job)
    if outage is not None:
        raise outage
    return evaluated


def only_computes(job: RunJob) -> bool:
    """Whether judging an item never waits: no target, no model, every criterion pure computation."""
    return (
        job.options.executor is None
        and not waits_on_model(job)
        and all(criterion.computes_only for criterion in job.criteria)
    )


JUDGED_TOGETHER = 100
"""Items that only compute are judged this many at a time, each stage over all of them in turn
(``judged_now``)."""


def judged_now(rows: list[Row], criteria: list[BoundCriterion], run_id: str, created: int) -> list[Finished | None]:
    """The output items of ``rows`` from criteria that only compute, judged here with no queue and no
    worker task between reading the items and judging them, a criterion at a time over the block
    (``BoundCriterion.judge_block``). An item whose every result is plain comes as the rows it is
    stored as (``encode_verdicts``; ``created`` their time). None for an item one of the criteria
    waited on after all; being pure, it is judged again the usual way."""
    items = [row.item for row in rows if row.item is not None]  # every row read has its item
    samples = [row.sample for row in rows]
    assert len(items) == len(rows)
    by_criterion = [criterion.judge_block(items, samples) for criterion in criteria]
    judged: list[Finished | None] = []
    for index, row in enumerate(rows):
        groups = [found[index] for found in by_criterion]
        if None in groups:
            judged.append(None)
            continue
        results = groups[0] if len(groups) == 1 else [r for group in groups for r in group or ()]
        if results and (type(results[0]) is tuple if len(results) == 1 else all(type(r) is tuple for r in results)):
            # Each one is a Verdict (a tuple): the check above, spelt for speed rather than for mypy.
            verdicts: list[Verdict] = results  # type: ignore[assignment]
            judged.append(
                encode_verdicts(run_id, row.index, items[index], row.sample, verdicts, created, finite=row.finite)
            )
        else:
            whole = [r if isinstance(r, Result) else r[0].result(r[1], r[2]) for r in results or ()]
            judged.append(OutputItem.checked(row.index, items[index], row.sample, whole))
    return judged


async def _judge_now(block: list[Row], job: RunJob, writer: _Writer) -> None:
    judged = [
        item if item is not None else await evaluate_item(row, job.criteria)
        for row, item in zip(block, judged_now(block, job.criteria, job.run_id, now()), strict=True)
    ]
    await writer.add(*judged)  # the block at once: one check whether a write is due, not one per item


def _to_evaluate(job: RunJob, done: set[int]) -> Iterator[Row]:
    """The rows this process evaluates now, a row per trial of the target: those not stored yet
    that its share owns. Stops once the run is stopped."""
    share, trials = job.share, job.trials
    for row in job.dataset.rows():
        if row.issue is not None:
            raise DataError([row.issue])
        if job.stopped:
            return
        for trial in (row,) if trials == 1 else _trials(row, trials):
            if (share is None or share.owns(trial.index)) and trial.index not in done:
                yield trial


def _trials(row: Row, trials: int) -> list[Row]:
    return [dataclasses.replace(row, index=row.index * trials + t, trial=t) for t in range(trials)]


async def _close_clients(job: RunJob) -> None:
    if job.models is not None:
        await job.models.aclose()
    close_target = getattr(job.target, "aclose", None)
    if close_target is not None:
        await close_target()


async def _work(rows: asyncio.Queue[Row | None], finished: asyncio.Queue[Finished | None], job: RunJob) -> None:
    while (row := await rows.get()) is not None:
        if not job.stopped:  # once stopped, queued rows are drained unevaluated
            outages = watch_outages()
            evaluation = asyncio.ensure_future(evaluate_item(row, job.criteria, job.target, job.on_sample))
            job.in_flight.add(evaluation)
            try:
                item = await evaluation
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if evaluation.cancelled() and job.stopped and (current is None or not current.cancelling()):
                    continue  # the run was canceled while this item was out: a resume evaluates it
                raise
            except Exception as exc:  # noqa: BLE001 - kept and raised by execute once the queue is drained
                job.crash, job.stopped = job.crash or exc, True
                continue
            finally:
                job.in_flight.discard(evaluation)
            if not _held_back(job, outages):
                await finished.put(item)


def _held_back(job: RunJob, outages: list[Model]) -> bool:
    """An item whose model calls failed because an endpoint was unreachable (or refused the key)
    is not stored: its errors say nothing about the item, and a resume evaluates it again. Once an
    endpoint's breaker trips, the run takes no more items."""
    down = job.models.tripped() if job.models is not None else None
    if down is not None:
        job.stopped = True
    if outages:
        job.held_back += 1
        job.outage = job.outage or down or outages[0]
    return bool(outages)


def _outage_error(job: RunJob) -> ModelUnreachable | None:
    if not job.held_back or job.outage is None:
        return None
    model = job.outage
    if model.breaker.tripped is not None:
        message = f"{model.where} became unreachable ({model.breaker.tripped}); the run stopped"
    else:  # failures now and then, never enough in a row to stop the run
        items = f"{job.held_back} item{'' if job.held_back == 1 else 's'}"
        message = f"{model.where} could not be reached for {items} ({model.last_failure or 'connection failed'})"
    return ModelUnreachable(message, hint=UNREACHABLE_HINT)


async def _watch(job: RunJob) -> None:
    """Ask ``keep_going`` (off the loop) every ``check_seconds``; stop the run when it says no.
    While the database is away the question waits for it (the writer decides when to give up)."""
    assert job.options.keep_going is not None
    while not job.stopped:
        await asyncio.sleep(job.options.check_seconds)
        try:
            going = await asyncio.to_thread(job.options.keep_going)
        except Exception as exc:  # noqa: BLE001 - only a transient outage is waited out
            if not job.store.is_transient(exc):
                raise
            continue
        if not going:
            job.stopped = True
            for evaluation in list(job.in_flight):
                evaluation.cancel()
            batching = current_batching()
            if batching is not None:  # calls waiting on batches would wait up to a day
                await batching.cancel_open()


async def _stored(job: RunJob, batch: list[Finished]) -> bool:
    """Write a batch; while the database is away (a restart), retry with backoff for up to
    ``ASSAY_STORE_OUTAGE_SECONDS``: items are keyed, so a write that did land is not doubled."""
    deadline, delay = time.monotonic() + settings().store_outage_seconds, 0.2
    write = functools.partial(job.store.add_output_items, job.run_id, batch, worker=job.options.worker, tally=job.tally)
    on_loop = _writes_on_loop(job)
    while True:
        try:
            return bool(write() if on_loop else await asyncio.to_thread(write))
        except Exception as exc:
            if not job.store.is_transient(exc) or time.monotonic() > deadline:
                raise
            log.warning("run %s: the store is unreachable (%s); retrying", job.run_id, type(exc).__name__)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


def _writes_on_loop(job: RunJob) -> bool:
    """Whether the writer writes on the event loop rather than in a thread: when the store works in
    this process (SQLite) and the run waits on no model, nothing else needs the loop meanwhile, and
    a thread would only take turns with the workers at the interpreter (an F1-only run spent a
    third more time per item so)."""
    return job.store.works_in_process and not waits_on_model(job) and job.options.executor is None


def waits_on_model(job: RunJob) -> bool:
    """Whether the run calls a model (a target or a judge) rather than only computing."""
    return job.target is not None or (job.models is not None and bool(job.models.used()))


class _Writer:
    """Batches output items into the store, a batch in one transaction once it has ``every`` items
    or is ``flush_seconds`` old; the one writer of a run's items in this process."""

    def __init__(self, job: RunJob, every: int) -> None:
        self.job = job
        self.every = every
        self.batch: list[Finished] = []
        self.last_flush = time.monotonic()
        self.due = every
        """The batch's size when it is written next."""

    async def add(self, *items: Finished) -> None:
        if not items:  # the reading's last, empty block: a run with a writer's task must not flush here
            return
        self.batch.extend(items)
        if len(self.batch) >= self.due or time.monotonic() - self.last_flush >= self.job.options.flush_seconds:
            await self.flush()

    async def flush(self, *, last: bool = False) -> None:
        job, batch = self.job, self.batch
        turn = job.write_turn if batch else None
        if turn is not None and not turn.take(wait=last or len(batch) >= 4 * self.every):
            # Another process is writing: evaluate on, and offer the batch again a little later.
            self.due, self.last_flush = len(batch) + TURN_RETRY_ITEMS, time.monotonic()
            return
        try:
            if batch and not job.lost and job.write_error is None and not await _stored(job, batch):
                job.stopped = job.lost = True
        except Exception as exc:  # noqa: BLE001 - kept and raised by execute once every task is done
            # The workers must not block on a queue nobody empties: stop the run, drain what is left.
            job.write_error, job.stopped = exc, True
        finally:
            if turn is not None:
                turn.give()
        if batch and not job.lost and job.write_error is None and job.on_stored is not None:
            job.on_stored(len(batch))
        self.batch, self.last_flush, self.due = [], time.monotonic(), self.every
        if batch:
            # A run judged as it is read awaits nothing else: here the watcher gets its turn to renew
            # the lease and to hear of a cancel.
            await asyncio.sleep(0)


async def _write(finished: asyncio.Queue[Finished | None], writer: _Writer) -> None:
    """The writer's task: takes finished items off the queue; flushes what it has when the run stops."""
    while True:
        try:  # what is already waiting is taken without a timer (one per item cost more than the write)
            item = finished.get_nowait()
        except asyncio.QueueEmpty:
            try:
                item = await asyncio.wait_for(finished.get(), timeout=writer.job.options.flush_seconds)
            except TimeoutError:
                await writer.flush()
                continue
        if item is None:
            await writer.flush(last=True)
            return
        await writer.add(item)
