"""Shared limits for one model: adaptive concurrency plus request and token budgets.

``AdaptiveLimiter`` is additive-increase / multiplicative-decrease: a 429 halves the number of
calls allowed in flight, each success adds a little back up to the ceiling. ``Budget`` is a
token bucket refilled continuously (requests or tokens per minute). Both are awaited by every
call to the model in this process, whoever makes it (judges, targets, simulated users).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from assay.llm.config import ModelConfig


class AdaptiveLimiter:
    """Calls allowed in flight, adapted to throttling; waiters are woken one at a time, in order."""

    def __init__(self, ceiling: int, floor: int = 1) -> None:
        self.ceiling = ceiling
        self.floor = floor
        self.limit = float(ceiling)
        self.in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        if self.in_flight < int(self.limit) and not self._waiters:
            self.in_flight += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # the slot is counted for us before we are woken
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.in_flight -= 1
                self._wake()
            else:
                self._waiters.remove(waiter)
            raise

    async def release(self, *, throttled: bool) -> None:
        self.in_flight -= 1
        if throttled:
            self.limit = max(float(self.floor), self.limit / 2)
        else:
            self.limit = min(float(self.ceiling), self.limit + 1 / max(1.0, self.limit))
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < int(self.limit):
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)


class Budget:
    """A token bucket refilled continuously, holding one second's allowance.

    Providers enforce per-minute limits over much shorter windows, so a minute's worth sent at
    once would only come back as 429s. Reservation-style: ``reserve`` takes the amount at once
    (the bucket may go below zero) and says how long to wait before sending, so callers queue in
    the order they asked and the bucket itself never blocks (one can serve a whole Ray cluster).
    """

    def __init__(self, per_minute: float) -> None:
        self.capacity = max(1.0, per_minute / 60.0)
        self.available = self.capacity
        self.rate = per_minute / 60.0
        self.updated = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.available = min(self.capacity, self.available + (now - self.updated) * self.rate)
        self.updated = now

    def reserve(self, amount: float) -> float:
        """Take ``amount``; the seconds to wait before using it."""
        self._refill()
        self.available -= min(amount, self.capacity)
        return max(0.0, -self.available / self.rate)

    async def take(self, amount: float) -> None:
        wait = self.reserve(amount)
        if wait > 0:
            await asyncio.sleep(wait)

    def give_back(self, amount: float) -> None:
        """Return an over-estimate once the real token count is known."""
        self._refill()
        self.available = min(self.capacity, self.available + amount)

    def hold(self, seconds: float) -> None:
        """Send nothing for ``seconds`` (the provider said Retry-After): everyone sharing the bucket waits."""
        self._refill()
        self.available = min(self.available, -seconds * self.rate)


class SharedBudget(Protocol):
    """A budget as a model call sees it: ``Budget`` in this process, or one held elsewhere (a Ray
    limiter actor) that every process calling the same provider, key and model shares."""

    async def take(self, amount: float) -> None: ...
    def give_back(self, amount: float) -> None: ...
    def hold(self, seconds: float) -> None: ...


class Budgets(Protocol):
    """Makes the budgets of a model: ``kind`` is "requests" or "tokens"."""

    def __call__(self, config: ModelConfig, kind: str, per_minute: float) -> SharedBudget: ...


def local_budget(config: ModelConfig, kind: str, per_minute: float) -> SharedBudget:
    return Budget(per_minute)
