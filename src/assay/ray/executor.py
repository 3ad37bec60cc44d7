"""The driver's side of ``--executor ray``: actors started, rows dispatched, results handed to the writer.

The engine's writer, resume and cancel logic are unchanged: this replaces only its pool of local
workers. Rows go out in batches to the actor with the fewest in flight, a bounded number of batches
at a time (so memory stays flat whatever the dataset size); finished output items go to the
engine's single writer, which stores them keyed by item (actors that only compute send them
encoded as the rows to insert: the driver shares the machine with them). Model calls (target,
judges) and CPU-bound criteria run in actors of their own kind; a run with both sends each batch
through one, then the other (``_Plan``), and assembles each item from its two parts. Actors are
restarted by Ray when they die (``max_restarts``) and their batches retried (``max_task_retries``):
at least once, stored once.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.dataset.readers import Row
from assay.errors import ConfigError, ExecutorError, first_line
from assay.ray import require_ray
from assay.ray.actors import ActorSetup, EvalActor
from assay.ray.limiter import Limiter
from assay.results import OutputItem
from assay.run.engine import Finished, Part, assemble
from assay.store.item_rows import ItemRows

if TYPE_CHECKING:
    from assay.run.engine import RunJob

log = logging.getLogger("assay.ray")

PER_ACTOR = 64
"""Items in flight per actor that calls models: its calls wait on the network together."""
MODEL_BATCH = 16
"""Rows per task for actors that call models: a batch returns when its slowest call does."""
CPU_BATCH = 128
"""Rows per task for actors that only compute. Ray's cost per task falls on the driver, which shares
the cores with the actors: 16 rows a task cost it about 150 µs of CPU an item, 64 about 110; with the
items sent back as rows, 64 about 80 and 128 about 70 (a batch's rows past 100 kB go through Ray's
object store rather than inline, which 64 rows of 40-word NLP items already do)."""
CPU_QUEUED = 3
"""Batches per computing actor: one at work, two waiting, so it never waits on the driver."""
_joining = threading.Lock()


@dataclass
class RayExecutor:
    address: str | None = None
    """A cluster's address; None: ``RAY_ADDRESS``, the cluster this process already joined, or a local one."""
    actors: int | None = None
    """How many actors; by default one per CPU of the cluster."""
    batch_size: int | None = None
    """Rows per task; by default ``MODEL_BATCH`` where the actors call models, else ``CPU_BATCH``."""
    concurrency: int | None = None
    """Items in flight across all actors; by default ``PER_ACTOR`` per actor calling models, else
    ``CPU_QUEUED`` batches per actor."""
    env: dict[str, str] | None = None
    """Environment variables of the actors' processes: what a node's credential needs, for example
    (each actor obtains its own Entra ID token; tokens never travel between processes)."""
    handles: list[Any] = field(default_factory=list)
    """The actors of the run in progress."""
    limiter: Any = None
    limiter_stats: dict[str, int] = field(default_factory=dict)
    """Reservations per budget, as the limiter counted them by the end of the run."""

    async def __call__(
        self, rows: asyncio.Queue[Row | None], finished: asyncio.Queue[Finished | None], job: RunJob
    ) -> None:
        ray = require_ray()
        with _joining:  # a worker's threads may start runs at once; Ray is joined once per process
            if not ray.is_initialized():
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
        plan = _Plan.of(job)
        cpus = float(ray.cluster_resources().get("CPU", 1))
        if job.models is not None and any(c.rpm or c.tpm for c in job.models.configs.values()):
            self.limiter = ray.remote(Limiter).options(num_cpus=0).remote()
        io = cpu = None
        if plan.calls_models:  # model calls wait on the network: no core reserved, one event loop for many
            io = self._pool(ray, job, self.actors or max(1, int(cpus)), num_cpus=0, concurrency=1000, cache=True)
        if plan.cpu_indices:
            # CPU-bound metrics reserve a core each (more actors than cores share them: they would wait
            # for cores for ever) and take one batch at a time (interleaving batches that never wait
            # only thrashes the caches; the next batch waits queued in the actor).
            count = (None if plan.calls_models else self.actors) or max(1, int(cpus))
            cpu = self._pool(ray, job, count, num_cpus=min(1.0, cpus / count), concurrency=1, cache=False)
        self.handles = [*(io.handles if io else []), *(cpu.handles if cpu else [])]
        log.info(
            "run %s: %d Ray actors calling models, %d for CPU-bound metrics",
            job.run_id,
            len(io.handles) if io else 0,
            len(cpu.handles) if cpu else 0,
        )
        try:
            await self._dispatch(rows, finished, job, plan, io, cpu)
            await asyncio.gather(*(handle.close.remote() for handle in self.handles))
            if self.limiter is not None:
                self.limiter_stats = await self.limiter.stats.remote()
        finally:
            for handle in [*self.handles, *([self.limiter] if self.limiter is not None else [])]:
                ray.kill(handle)

    def _pool(self, ray: Any, job: RunJob, count: int, *, num_cpus: float, concurrency: int, cache: bool) -> _Pool:
        extra = {"runtime_env": {"env_vars": dict(self.env)}} if self.env else {}
        actor = ray.remote(EvalActor).options(
            num_cpus=num_cpus, max_concurrency=concurrency, max_restarts=-1, max_task_retries=-1, **extra
        )
        setup = ray.put(_setup(job, cache=cache))
        return _Pool([actor.remote(setup, self.limiter) for _ in range(count)], setup)

    async def _dispatch(
        self,
        rows: asyncio.Queue[Row | None],
        finished: asyncio.Queue[Finished | None],
        job: RunJob,
        plan: _Plan,
        io: _Pool | None,
        cpu: _Pool | None,
    ) -> None:
        first = io or cpu
        assert first is not None
        size = self.batch_size or (MODEL_BATCH if io is not None else CPU_BATCH)
        in_flight = self.concurrency or len(first.handles) * (PER_ACTOR if io is not None else CPU_QUEUED * size)
        slots = asyncio.Semaphore(max(len(first.handles), math.ceil(in_flight / size)))
        batches: set[asyncio.Task[None]] = set()
        failures: list[Exception] = []

        async def evaluated(batch: list[Row]) -> Sequence[Finished]:
            if io is None:  # actors that only compute: their items come back as the rows to insert
                encoded: list[ItemRows] = await first.call("encode", batch)
                return encoded
            if cpu is None:  # one kind of actor does all of it
                items: list[OutputItem] = await first.call("evaluate", batch)
                return items
            # Two stages: the target and the judges, then the CPU-bound metrics on what they saw.
            called: list[Part] = await io.call("evaluate_part", batch, plan.io_indices, True)
            computed: list[Part] = await cpu.call("evaluate_part", [p.row for p in called], plan.cpu_indices, False)
            return [assemble([a, b]) for a, b in zip(called, computed, strict=True)]

        async def evaluate(batch: list[Row]) -> None:
            try:
                for item in await evaluated(batch):
                    if (
                        job.on_sample is not None
                        and job.target is not None
                        and isinstance(item, OutputItem)
                        and item.sample
                    ):
                        job.on_sample(item.sample)  # the progress bar's "generating", told late
                    await finished.put(item)
            except Exception as exc:  # noqa: BLE001 - raised below, once every batch in flight is done
                failures.append(exc)  # an actor that cannot be restarted, an error Ray could not retry
                job.stopped = True  # the rest is drained unevaluated
            finally:
                slots.release()

        async def submit(batch: list[Row]) -> None:
            await slots.acquire()
            task = asyncio.create_task(evaluate(batch))
            batches.add(task)
            task.add_done_callback(batches.discard)

        batch: list[Row] = []
        try:
            while (row := await rows.get()) is not None:
                if job.stopped:  # once stopped, queued rows are drained unevaluated
                    continue
                batch.append(row)
                if len(batch) >= size:
                    await submit(batch)
                    batch = []
            if batch and not job.stopped:
                await submit(batch)
            await asyncio.gather(*batches)
        finally:
            for task in batches:
                task.cancel()
        if failures:
            raise ExecutorError(
                f"a Ray actor failed and could not be restarted: {first_line(failures[0])}",
                hint="what was stored is kept; resume the run (--resume)",
            ) from failures[0]


@dataclass
class _Pool:
    """Actors of one kind, each asked in turn by how little it has in flight."""

    handles: list[Any]
    setup: Any
    """The actors' setup in the object store, referenced for the whole run: an actor Ray restarts is
    built from it again (dropped, the restart fails: ray#53727)."""
    load: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.load = [0] * len(self.handles)

    async def call(self, method: str, *args: Any) -> Any:
        index = self.load.index(min(self.load))
        self.load[index] += 1
        try:
            return await getattr(self.handles[index], method).remote(*args)
        finally:
            self.load[index] -= 1


@dataclass
class _Plan:
    """Which criteria call models (with the target, in actors that reserve no core) and which are
    CPU-bound (in actors that reserve one), by their index in the run's criteria."""

    io_indices: list[int]
    cpu_indices: list[int]
    calls_models: bool

    @classmethod
    def of(cls, job: RunJob) -> _Plan:
        calls = [c.spec.uses_model or c.type == "multi" for c in job.criteria]  # a multi grader may hold a judge
        io = [i for i, uses in enumerate(calls) if uses]
        return cls(io, [i for i, uses in enumerate(calls) if not uses], job.target is not None or bool(io))


def _setup(job: RunJob, *, cache: bool) -> ActorSetup:
    if job.binding is None:
        raise ConfigError("this run cannot be spread over Ray actors (it was not prepared from an eval)")
    models = job.models
    return ActorSetup(
        binding=job.binding,
        run_id=job.run_id,
        models=list(models.configs.values()) if models is not None else [],
        default_model=models.default if models is not None else None,
        agents=models.agents if models is not None else [],
        cache_mode=models.cache_mode if models is not None else "use",
        cache_url=_absolute(job.store.url) if cache and models is not None and models.cache is not None else None,
        has_registry=models is not None,
    )


def _absolute(url: str) -> str:
    """A SQLite URL that means the same file from an actor's working directory."""
    prefix = "sqlite:///"
    if url.startswith(prefix) and not url.startswith(prefix + "/"):
        return prefix + str(Path(url.removeprefix(prefix)).resolve())
    return url
