"""``assay run --estimate``: what a run would cost, computed without calling any model.

Every criterion runs over every item against a model stand-in that records the exact request
it would send and answers with the lowest valid verdict. Calls already in the cache cost nothing.
Completion tokens are counted at each request's ``max_tokens``, so the figure is an upper bound.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from assay.llm import Completion, Model, ModelRegistry, Usage
from assay.run.criteria import BoundCriterion
from assay.run.runner import PreparedRun


@dataclass
class ModelEstimate:
    model: str
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None


@dataclass
class Estimate:
    items: int
    models: dict[str, ModelEstimate] = field(default_factory=dict)


class _Recorder:
    """Stands in for ``Model.generate``: counts what would be sent, answers without a network call."""

    def __init__(self, model: Model, estimate: ModelEstimate) -> None:
        self.model = model
        self.estimate = estimate

    async def generate(self, messages: list[dict[str, Any]], **params: Any) -> Completion:
        body = self.model.request(messages, **params)
        cache = self.model.cache
        key = self.model.cache_key(body)
        hit = (await asyncio.to_thread(cache.get_many, [key])).get(key) if cache is not None else None
        if hit is not None:
            self.estimate.cached += 1
        else:
            self.estimate.calls += 1
            self.estimate.prompt_tokens += len(json.dumps(messages, ensure_ascii=False)) // 4
            self.estimate.completion_tokens += int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        low = _lowest_valid(messages)
        return Completion(text=low, model=self.model.config.model, usage=Usage(), cached=True)


def _lowest_valid(messages: list[dict[str, Any]]) -> str:
    text = str(messages[-1].get("content", ""))
    low = 1 if "<integer 1-" in text else 0
    return json.dumps({"reason": "estimate", "score": low, "label": False, "result": 0, "steps": [], "dimensions": []})


def estimate(prepared: PreparedRun, models: ModelRegistry) -> Estimate:
    result = Estimate(items=prepared.report.rows)
    originals: dict[str, Any] = {}
    # Swap each bound model's generate for a recorder for the walk, and put it back after.
    for model in models.models():
        entry = result.models.setdefault(model.config.model, ModelEstimate(model.config.model))
        originals[model.name] = model.generate
        model.generate = _Recorder(model, entry).generate  # type: ignore[method-assign]
    try:
        asyncio.run(_walk(prepared.criteria, prepared))
    finally:
        for model in models.models():
            model.generate = originals[model.name]  # type: ignore[method-assign]
    for config in models.configs.values():
        found = result.models.get(config.model)
        if found is not None and config.price is not None:
            found.cost_usd = config.price.cost(found.prompt_tokens, found.completion_tokens)
    return result


async def _walk(criteria: list[BoundCriterion], prepared: PreparedRun) -> None:
    for row in prepared.dataset.rows():
        if row.item is None:
            continue
        await asyncio.gather(*(criterion.evaluate(row.item, row.sample) for criterion in criteria))
