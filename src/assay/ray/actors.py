"""The actor that evaluates items: the local engine's ``evaluate_item``, in another process.

It binds its criteria and target from the run's ``RunBinding`` (what the driver bound its own from)
and builds its models from their configs, so nothing holding a connection or an event loop crosses
process boundaries; items go in as dataset rows and come back as output items.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.dataset.readers import Row
from assay.llm import CacheMode, ModelRegistry
from assay.llm.config import ModelConfig
from assay.llm.limits import Budgets, local_budget
from assay.ray.limiter import RemoteBudgets
from assay.results import OutputItem
from assay.run.definition import RunBinding
from assay.run.engine import Part, evaluate_item, evaluate_part, judged_now
from assay.run.runner import bind_run
from assay.store.base import now
from assay.store.item_rows import ItemRows, encode_item

log = logging.getLogger("assay.ray")


@dataclass
class ActorSetup:
    """What an actor builds its part of the run from; it pickles."""

    binding: RunBinding
    run_id: str
    """The run the actor's items are encoded for (``encode``)."""
    models: list[ModelConfig] = field(default_factory=list)
    default_model: str | None = None
    agents: list[Any] = field(default_factory=list)
    cache_mode: CacheMode = "use"
    cache_url: str | None = None
    """The store holding the model-call cache; None runs without it (or calls no model)."""
    has_registry: bool = False
    """The driver bound its criteria against a model registry (else against none)."""


class EvalActor:
    """Wrapped by ``ray.remote`` at run time (importing assay does not import Ray)."""

    def __init__(self, setup: ActorSetup, limiter: Any | None) -> None:
        budgets: Budgets = RemoteBudgets(limiter) if limiter is not None else local_budget
        self.store = _cache_store(setup.cache_url)
        self.models = None
        if setup.has_registry:
            self.models = ModelRegistry(
                setup.models,
                cache=self.store,
                cache_mode=setup.cache_mode,
                default=setup.default_model,
                agents=setup.agents,
                budgets=budgets,
            )
        self.criteria, self.target = bind_run(setup.binding, self.models)
        self.run_id = setup.run_id

    @property
    def _computes(self) -> bool:
        return self.target is None and all(criterion.computes_only for criterion in self.criteria)

    async def evaluate(self, rows: list[Row]) -> list[OutputItem]:
        if self._computes:
            return [await evaluate_item(row, self.criteria) for row in rows]  # none waits: no task each
        return list(await asyncio.gather(*(evaluate_item(row, self.criteria, self.target) for row in rows)))

    async def encode(self, rows: list[Row]) -> list[ItemRows]:
        """``evaluate``, each item returned as the rows it is stored as: the driver, which shares the
        machine with the actors, then only inserts them (unpickling output items and encoding them
        took most of its Python time per item). Items that only compute are judged as the local
        engine judges them (``judged_now``): those of plain results come encoded already."""
        created = now()
        if not self._computes:
            return [encode_item(self.run_id, item, created) for item in await self.evaluate(rows)]
        encoded = []
        for row, judged in zip(rows, judged_now(rows, self.criteria, self.run_id, created), strict=True):
            if judged is None:  # it waited after all: judged the usual way
                judged = await evaluate_item(row, self.criteria)
            encoded.append(judged if isinstance(judged, ItemRows) else encode_item(self.run_id, judged, created))
        return encoded

    async def evaluate_part(self, rows: list[Row], indices: list[int], generate: bool) -> list[Part]:
        """The criteria at ``indices`` (and the target first, when ``generate``): one stage of a run
        whose model calls and CPU-bound metrics run in actors of their own."""
        target = self.target if generate else None
        return list(await asyncio.gather(*(evaluate_part(row, self.criteria, indices, target) for row in rows)))

    async def close(self) -> None:
        """Write the cache's queued answers and close the clients."""
        if self.models is not None:
            await self.models.aclose()
        close_target = getattr(self.target, "aclose", None)
        if close_target is not None:
            await close_target()
        if self.store is not None:
            self.store.close()


def _cache_store(url: str | None) -> Any:
    """The store, as the model-call cache. A SQLite file this machine does not have (an actor on
    another node) means no cache there, not an empty database made beside it."""
    if url is None:
        return None
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        log.warning("the store %s is not on this node: its actors run without the model-call cache", url)
        return None
    from assay.store import Store

    return Store(url)
