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
    once would only come back as 429s.
    """

    def __init__(self, per_minute: float) -> None:
        self.capacity = max(1.0, per_minute / 60.0)
        self.available = self.capacity
        self.rate = per_minute / 60.0
        self.updated = time.monotonic()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = time.monotonic()
        self.available = min(self.capacity, self.available + (now - self.updated) * self.rate)
        self.updated = now

    async def take(self, amount: float) -> None:
        amount = min(amount, self.capacity)
        async with self._lock:
            self._refill()
            while self.available < amount:
                await asyncio.sleep((amount - self.available) / self.rate)
                self._refill()
            self.available -= amount

    def give_back(self, amount: float) -> None:
        """Return an over-estimate once the real token count is known."""
        self._refill()
        self.available = min(self.capacity, self.available + amount)
