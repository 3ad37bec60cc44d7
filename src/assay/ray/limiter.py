"""One limiter for a whole Ray cluster: every actor's calls to a model draw on the same budgets.

Reservation-style (``assay.llm.limits.Budget``): a call asks the limiter actor for its share and
is told how long to wait, and sleeps in its own process; the limiter never blocks, so one actor
serves thousands of calls a second. A 429's Retry-After, reported by whichever actor saw it,
holds every actor's calls to that model.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from assay.llm.config import ModelConfig
from assay.llm.limits import Budget, SharedBudget


class Limiter:
    """The Ray actor's class: budgets per (kind, endpoint, key, model)."""

    def __init__(self) -> None:
        self.budgets: dict[tuple[str, float], Budget] = {}
        self.reservations: dict[str, int] = {}

    def _budget(self, key: str, per_minute: float) -> Budget:
        # The rate is part of the budget's name: once the provider states a lower limit than the
        # user's, the actors that learned it draw on a budget of that rate.
        budget = self.budgets.get((key, per_minute))
        if budget is None:
            budget = self.budgets[key, per_minute] = Budget(per_minute)
        return budget

    def reserve(self, key: str, per_minute: float, amount: float) -> float:
        self.reservations[key] = self.reservations.get(key, 0) + 1
        return self._budget(key, per_minute).reserve(amount)

    def give_back(self, key: str, per_minute: float, amount: float) -> None:
        self._budget(key, per_minute).give_back(amount)

    def hold(self, key: str, per_minute: float, seconds: float) -> None:
        self._budget(key, per_minute).hold(seconds)

    def cap(self, key: str, per_minute: float, amount: float) -> None:
        self._budget(key, per_minute).cap(amount)

    def stats(self) -> dict[str, int]:
        """Reservations per budget key, for tests and benchmarks."""
        return dict(self.reservations)


def budget_key(config: ModelConfig, kind: str) -> str:
    """Who shares a budget: the same endpoint, key and model (the key only as a short hash)."""
    secret = hashlib.sha256((config.key() or "").encode()).hexdigest()[:12]
    return f"{kind}|{config.endpoint}|{secret}|{config.model}"


class RemoteBudget:
    """A ``SharedBudget`` held by the limiter actor."""

    def __init__(self, limiter: Any, key: str, per_minute: float) -> None:
        self.limiter = limiter
        self.key = key
        self.per_minute = per_minute

    async def take(self, amount: float) -> None:
        wait = await self.limiter.reserve.remote(self.key, self.per_minute, amount)
        if wait > 0:
            await asyncio.sleep(wait)

    def give_back(self, amount: float) -> None:
        self.limiter.give_back.remote(self.key, self.per_minute, amount)  # nobody waits on it

    def hold(self, seconds: float) -> None:
        self.limiter.hold.remote(self.key, self.per_minute, seconds)

    def cap(self, amount: float) -> None:
        self.limiter.cap.remote(self.key, self.per_minute, amount)


class RemoteBudgets:
    """``assay.llm.limits.Budgets`` for a model registry inside an actor."""

    def __init__(self, limiter: Any) -> None:
        self.limiter = limiter

    def __call__(self, config: ModelConfig, kind: str, per_minute: float) -> SharedBudget:
        return RemoteBudget(self.limiter, budget_key(config, kind), per_minute)
