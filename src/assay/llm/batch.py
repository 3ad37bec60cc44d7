"""Batch mode: a run's chat calls sent through the provider's Batch API, at half the price.

``options: {batch: true}`` (``assay run --batch``, ``batch`` on the API's run) runs the run's tasks
under ``batched(Batching(ledger))``. Every ``Model.generate`` of those tasks then hands its request
to the model's ``BatchQueue`` instead of sending it: requests gather until the queue has been idle
for ``gather_seconds`` (or holds ``MAX_REQUESTS``), go up as one JSONL file (``/v1/files``), become
one batch (``/v1/batches``), and are polled with backoff until the provider is done; each answer
reaches its caller by ``custom_id`` (the request's cache key, so identical requests share one line).
A line the batch did not answer, or a batch that failed or expired, falls back to a synchronous call.
Work of several steps (a target, then its judges; a tool loop's turns) batches each step across items.

Each batch is recorded in the ``ledger`` (the run's row in the store) as soon as it exists: a run
stopped while its batches are out resumes by collecting them, and pays for no request twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.llm.config import ModelConfig

log = logging.getLogger(__name__)


class Model(Protocol):
    """What a batch needs of a model (``assay.llm.model.Model`` is one): its name and endpoint, the
    key its calls are cached under, and the OpenAI client of the running event loop."""

    config: ModelConfig

    @property
    def name(self) -> str: ...

    def cache_key(self, body: dict[str, Any]) -> str: ...

    def client(self) -> Any: ...


BATCH_DISCOUNT = 0.5
"""What the Batch API costs against the same calls made one by one (OpenAI's and Azure OpenAI's price)."""

MAX_REQUESTS = 50_000
"""The most requests one batch may hold (OpenAI's limit)."""

FINAL = frozenset({"completed", "failed", "expired", "cancelled"})


class BatchLedger(Protocol):
    """Where a run keeps the batches it created (``assay.store``)."""

    def recorded(self) -> list[tuple[str, str]]:
        """(model name, batch id) of each batch the run created, oldest first."""
        ...

    def record(self, model: str, batch_id: str) -> None: ...


class BatchMiss(Exception):
    """The batch gave no answer to this request: it is sent on its own instead."""


class BatchCanceled(Exception):
    """The run was canceled while this request waited on a batch (which was canceled too)."""


@dataclass
class Batching:
    """One run's batch mode: its ledger, and a queue per model and event loop."""

    ledger: BatchLedger
    gather_seconds: float = 0.5
    """A queue idle this long is sent as a batch."""
    longest_gather_seconds: float = 10.0
    """A queue whose first request has waited this long is sent, however busy it still is."""
    poll_seconds: float = 1.0
    poll_max_seconds: float = 60.0
    queues: dict[tuple[int, str], BatchQueue] = field(default_factory=dict)
    open: dict[str, Model] = field(default_factory=dict)
    """Batches this process is waiting on, by id, with the model that sent them (to cancel them)."""
    canceled: bool = False

    def queue(self, model: Model) -> BatchQueue:
        key = (id(asyncio.get_running_loop()), model.name)
        found = self.queues.get(key)
        if found is None:
            found = self.queues[key] = BatchQueue(model, self)
        return found

    async def cancel_open(self) -> None:
        """The run was canceled: the batches still out are canceled (the provider stops charging
        for them), and what waits on them or was about to be sent fails with ``BatchCanceled``."""
        self.canceled = True
        for batch_id, model in list(self.open.items()):
            with contextlib.suppress(Exception):
                await model.client().batches.cancel(batch_id)
        self.open.clear()
        for queue in self.queues.values():
            queue.give_up()


_current: contextvars.ContextVar[Batching | None] = contextvars.ContextVar("assay_batching", default=None)


def current() -> Batching | None:
    """The batch mode of the run this task belongs to, if it runs in batch mode."""
    return _current.get()


@contextlib.contextmanager
def batched(batching: Batching) -> Iterator[Batching]:
    """Run the tasks started inside (and their children) in ``batching``'s batch mode."""
    token = _current.set(batching)
    try:
        yield batching
    finally:
        _current.reset(token)


Answer = dict[str, Any] | BatchMiss | BatchCanceled


class BatchQueue:
    """One model's batched requests on one event loop."""

    def __init__(self, model: Model, batching: Batching) -> None:
        self.model = model
        self.batching = batching
        route = "/responses" if model.config.api == "responses" else "/chat/completions"
        self.url = route if model.config.provider == "azure" else f"/v1{route}"
        self.waiting: dict[str, list[asyncio.Future[dict[str, Any]]]] = {}
        self.queued: dict[str, dict[str, Any]] = {}
        self.known: dict[str, dict[str, Any]] = {}
        """Answers already in hand: from the run's earlier batches (a resume), or earlier in this one."""
        self.resumed: asyncio.Task[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.first_queued = 0.0
        self.sending: set[asyncio.Task[None]] = set()

    async def ask(self, body: dict[str, Any]) -> dict[str, Any]:
        """The provider's answer to ``body``, from a batch; ``BatchMiss`` when the batch had none."""
        if self.batching.canceled:
            raise BatchCanceled("the run was canceled")
        if self.resumed is None:
            self.resumed = asyncio.get_running_loop().create_task(self._resume())
        await asyncio.shield(self.resumed)
        key = self.model.cache_key(body)
        if key in self.known:
            return self.known[key]
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if key not in self.waiting:
            self.queued[key] = body
            self._schedule()
        self.waiting.setdefault(key, []).append(future)
        return await future

    def give_up(self) -> None:
        """Fail every request waiting here, sent or not (the run was canceled)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.queued = {}
        for key in list(self.waiting):
            self._settle(key, BatchCanceled("the run was canceled"))

    def _schedule(self) -> None:
        loop = asyncio.get_running_loop()
        if len(self.queued) == 1:
            self.first_queued = loop.time()
        if self.timer is not None:
            self.timer.cancel()
        waited = loop.time() - self.first_queued
        if len(self.queued) >= MAX_REQUESTS or waited >= self.batching.longest_gather_seconds:
            self._flush()
        else:
            self.timer = loop.call_later(self.batching.gather_seconds, self._flush)

    def _flush(self) -> None:
        self.timer = None
        requests, self.queued = self.queued, {}
        if requests:
            task = asyncio.get_running_loop().create_task(self._send(requests))
            self.sending.add(task)
            task.add_done_callback(self.sending.discard)

    async def _send(self, requests: dict[str, dict[str, Any]]) -> None:
        answers: dict[str, Answer] = {}
        try:
            client = self.model.client()
            lines = [
                {"custom_id": key, "method": "POST", "url": self.url, "body": body} for key, body in requests.items()
            ]
            data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
            upload = await client.files.create(file=("assay-batch.jsonl", data), purpose="batch")
            batch = await client.batches.create(
                input_file_id=upload.id,
                endpoint=self.url,
                completion_window="24h",
                metadata={"made_by": "assay"},
            )
            self.batching.open[batch.id] = self.model
            await asyncio.to_thread(self.batching.ledger.record, self.model.name, batch.id)
            log.info("model %r: batch %s holds %d requests", self.model.name, batch.id, len(requests))
            answers = await self._collect(batch.id)
        except Exception as exc:  # noqa: BLE001 - whatever stopped the batch, its requests go one by one
            log.warning(
                "model %r: batch not sent or not collected (%s); sending its requests one by one", self.model.name, exc
            )
        for key in requests:
            self._settle(key, answers.get(key) or BatchMiss("the batch gave no answer"))

    def _settle(self, key: str, answer: Answer) -> None:
        if isinstance(answer, dict):
            self.known[key] = answer
        for future in self.waiting.pop(key, []):
            if future.done():
                continue
            if isinstance(answer, dict):
                future.set_result(answer)
            else:
                future.set_exception(answer)

    async def _collect(self, batch_id: str) -> dict[str, Answer]:
        """Each request's answer from a batch, once the provider has finished it (polled with backoff)."""
        client = self.model.client()
        delay = self.batching.poll_seconds
        while True:
            batch = await client.batches.retrieve(batch_id)
            if batch.status in FINAL:
                break
            await asyncio.sleep(delay)
            delay = min(self.batching.poll_max_seconds, delay * 1.5)
        self.batching.open.pop(batch_id, None)
        answers: dict[str, Answer] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await client.files.content(file_id)
            for line in content.text.splitlines():
                if line.strip():
                    key, answer = _answer(json.loads(line))
                    if key is not None:
                        answers[key] = answer
        return answers

    async def _resume(self) -> None:
        """Answers from the batches this run created before it was stopped, waited for if still out."""
        recorded = await asyncio.to_thread(self.batching.ledger.recorded)
        for model, batch_id in recorded:
            if model != self.model.name:
                continue
            try:
                answers = await self._collect(batch_id)
            except Exception as exc:  # noqa: BLE001 - a batch the provider no longer has: its requests go again
                log.warning("model %r: batch %s could not be collected (%s)", self.model.name, batch_id, exc)
                continue
            self.known.update({key: answer for key, answer in answers.items() if isinstance(answer, dict)})


def _answer(line: dict[str, Any]) -> tuple[str | None, Answer]:
    """A line of a batch's output or error file: its custom id, and the answer or why there is none."""
    key = line.get("custom_id")
    response = line.get("response") or {}
    body = response.get("body")
    if response.get("status_code") == 200 and isinstance(body, dict):
        return key, body
    error = line.get("error") or (body.get("error") if isinstance(body, dict) else None)
    return key, BatchMiss(f"the batch answered {response.get('status_code')}: {error}")
