"""The driver's side of ``--executor ray``: actors started, rows dispatched, results handed to the writer.

The engine's writer, resume and cancel logic are unchanged: this replaces only its pool of local
workers. Rows go out in batches to the actor with the fewest in flight, at most ``in_flight``
batches at a time (so memory stays flat whatever the dataset size); finished output items go to
the engine's single writer, which stores them keyed by item. Actors are restarted by Ray when they
die (``max_restarts``) and their batches retried (``max_task_retries``): at least once, stored once.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.dataset.readers import Row
from assay.errors import ConfigError, ExecutorError
from assay.ray import require_ray
from assay.ray.actors import ActorSetup, EvalActor
from assay.ray.limiter import Limiter
from assay.results import OutputItem

if TYPE_CHECKING:
    from assay.run.engine import RunJob

log = logging.getLogger("assay.ray")

PER_ACTOR = 64
_joining = threading.Lock()


@dataclass
class RayExecutor:
    address: str | None = None
    """A cluster's address; None: ``RAY_ADDRESS``, the cluster this process already joined, or a local one."""
    actors: int | None = None
    """How many actors; by default one per CPU of the cluster."""
    batch_size: int = 16
    concurrency: int | None = None
    """Items in flight across all actors; by default 64 per actor (an actor's calls wait on the network together)."""
    handles: list[Any] = field(default_factory=list)
    """The actors of the run in progress."""
    limiter: Any = None
    limiter_stats: dict[str, int] = field(default_factory=dict)
    """Reservations per budget, as the limiter counted them by the end of the run."""

    async def __call__(self, rows: asyncio.Queue[Row | None], finished: asyncio.Queue[OutputItem | None],
                       job: RunJob) -> None:  # fmt: skip
        ray = require_ray()
        with _joining:  # a worker's threads may start runs at once; Ray is joined once per process
            if not ray.is_initialized():
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
        cpu_bound = job.target is None and not any(c.spec.uses_model or c.type == "multi" for c in job.criteria)
        cpus = float(ray.cluster_resources().get("CPU", 1))
        count = self.actors or max(1, int(cpus))
        # More CPU-bound actors than the cluster has cores would wait for cores for ever: they share them.
        reserve = min(1.0, cpus / count) if cpu_bound else 0
        if job.models is not None and any(c.rpm or c.tpm for c in job.models.configs.values()):
            self.limiter = ray.remote(Limiter).options(num_cpus=0).remote()
        actor = ray.remote(EvalActor).options(
            # CPU-bound metrics reserve a core each and take one batch at a time (interleaving batches
            # that never wait only thrashes the caches; the next batch waits queued in the actor);
            # model calls wait on the network, reserve no core and share one event loop.
            num_cpus=reserve, max_concurrency=1 if cpu_bound else 1000,
            max_restarts=-1, max_task_retries=-1,
        )  # fmt: skip
        # Held in the object store for the whole run: an actor Ray restarts is built from it again.
        setup = ray.put(_setup(job, cache=not cpu_bound))
        self.handles = [actor.remote(setup, self.limiter) for _ in range(count)]
        log.info("run %s: %d Ray actors, %s CPU each", job.run_id, count, f"{reserve:g}")
        try:
            await self._dispatch(rows, finished, job)
            await asyncio.gather(*(handle.close.remote() for handle in self.handles))
            if self.limiter is not None:
                self.limiter_stats = await self.limiter.stats.remote()
        finally:
            for handle in [*self.handles, *([self.limiter] if self.limiter is not None else [])]:
                ray.kill(handle)

    async def _dispatch(self, rows: asyncio.Queue[Row | None], finished: asyncio.Queue[OutputItem | None],
                        job: RunJob) -> None:  # fmt: skip
        in_flight = self.concurrency or PER_ACTOR * len(self.handles)
        slots = asyncio.Semaphore(max(len(self.handles), math.ceil(in_flight / self.batch_size)))
        load = [0] * len(self.handles)
        batches: set[asyncio.Task[None]] = set()

        failures: list[Exception] = []

        async def evaluate(index: int, batch: list[Row]) -> None:
            try:
                for item in await self.handles[index].evaluate.remote(batch):
                    if job.on_sample is not None and job.target is not None and item.sample is not None:
                        job.on_sample(item.sample)  # the progress bar's "generating", told late
                    await finished.put(item)
            except Exception as exc:  # noqa: BLE001 - raised below, once every batch in flight is done
                failures.append(exc)  # an actor that cannot be restarted, an error Ray could not retry
                job.stopped = True  # the rest is drained unevaluated
            finally:
                load[index] -= 1
                slots.release()

        async def submit(batch: list[Row]) -> None:
            await slots.acquire()
            index = load.index(min(load))
            load[index] += 1
            task = asyncio.create_task(evaluate(index, batch))
            batches.add(task)
            task.add_done_callback(batches.discard)

        batch: list[Row] = []
        try:
            while (row := await rows.get()) is not None:
                if job.stopped:  # once stopped, queued rows are drained unevaluated
                    continue
                batch.append(row)
                if len(batch) >= self.batch_size:
                    await submit(batch)
                    batch = []
            if batch and not job.stopped:
                await submit(batch)
            await asyncio.gather(*batches)
        finally:
            for task in batches:
                task.cancel()
        if failures:
            first = (str(failures[0]).strip().splitlines() or [type(failures[0]).__name__])[0]
            raise ExecutorError(f"a Ray actor failed and could not be restarted: {first}",
                                hint="what was stored is kept; resume the run (--resume)") from failures[0]  # fmt: skip


def _setup(job: RunJob, *, cache: bool) -> ActorSetup:
    if job.binding is None:
        raise ConfigError("this run cannot be spread over Ray actors (it was not prepared from an eval)")
    models = job.models
    return ActorSetup(
        binding=job.binding,
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
