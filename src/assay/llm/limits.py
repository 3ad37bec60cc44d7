"""Shared limits for one model: adaptive concurrency plus request and token budgets.

``AdaptiveLimiter`` is additive-increase / multiplicative-decrease: a 429 halves the number of
calls allowed in flight, each success adds a little back up to the ceiling. ``Budget`` is a
token bucket refilled continuously (requests or tokens per minute). Both are awaited by every
call to the model in this process, whoever makes it (judges, targets, simulated users).

Where the budget comes from: the user's ``rpm``/``tpm``, or what the provider says of itself in
its ``x-ratelimit-limit-requests|tokens`` headers (``ProviderLimits``), whichever is lower: a
user's figures are ceilings, not requirements. Until the provider's first answer says whether
it has limits, only ``OPENING`` calls go out, so an unknown budget is not met with a full wave.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from assay.llm.config import ModelConfig


OPENING = 4
"""Calls in flight before the provider has answered once (Inspect AI starts its adaptive
concurrency at 20 for the same reason): enough that a slow first answer costs little, few
enough that a small token budget turns away only a handful."""

PACE = 0.97
"""The share of a provider's stated per-minute limit assay paces to: the provider's clock and
token count are not ours, and a budget met exactly answers every small drift with a 429."""


class AdaptiveLimiter:
    """Calls allowed in flight, adapted to throttling; waiters are woken one at a time, in order."""

    def __init__(self, ceiling: int, floor: int = 1, opening: int | None = None) -> None:
        self.ceiling = ceiling
        self.floor = floor
        self.limit = float(min(ceiling, opening) if opening else ceiling)
        self.opening = opening is not None
        self.in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    def open(self) -> None:
        """The provider has answered: from now on the ceiling, and throttling alone lowers it."""
        if self.opening:
            self.opening = False
            self.limit = float(self.ceiling)
            self._wake()

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

    def give_up(self) -> None:
        """Hand back a slot that was not used (its call must first wait on a budget made meanwhile)."""
        self.in_flight -= 1
        self._wake()

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
        """Return an over-estimate once the real token count is known (a negative amount takes
        what an under-estimate missed)."""
        self._refill()
        self.available = min(self.capacity, self.available + amount)

    def hold(self, seconds: float) -> None:
        """Send nothing for ``seconds`` (the provider said Retry-After): everyone sharing the bucket waits."""
        self._refill()
        self.available = min(self.available, -seconds * self.rate)

    def cap(self, amount: float) -> None:
        """The provider says only ``amount`` is left now (``x-ratelimit-remaining-*``): no more than that."""
        self._refill()
        self.available = min(self.available, amount)


@dataclass(frozen=True, slots=True)
class ProviderLimits:
    """What a provider's ``x-ratelimit-*`` headers say of a model's limits (OpenAI and Azure OpenAI
    send them on every answer): per minute, and seconds until the budget is whole again."""

    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    remaining_requests: float | None = None
    remaining_tokens: float | None = None
    reset_requests: float | None = None
    reset_tokens: float | None = None

    @classmethod
    def read(cls, headers: Mapping[str, str]) -> ProviderLimits | None:
        """The limits in these headers; None when they state none. Azure answers ``-1`` where a
        figure does not apply (the Responses API): such a figure is absent, not a zero budget."""

        def count(name: str) -> float | None:
            value = headers.get(f"x-ratelimit-{name}")
            try:
                number = float(value) if value is not None else None
            except ValueError:
                return None
            return number if number is not None and number >= 0 else None

        found = cls(
            requests_per_minute=_positive(count("limit-requests")),
            tokens_per_minute=_positive(count("limit-tokens")),
            remaining_requests=count("remaining-requests"),
            remaining_tokens=count("remaining-tokens"),
            reset_requests=duration(headers.get("x-ratelimit-reset-requests")),
            reset_tokens=duration(headers.get("x-ratelimit-reset-tokens")),
        )
        return found if found != cls() else None

    @property
    def per_minute(self) -> tuple[float | None, float | None]:
        """The limits themselves (requests, tokens), without what is left of them now."""
        return self.requests_per_minute, self.tokens_per_minute

    def describe(self) -> str:
        """``600k TPM · 1.2k RPM``: what was found, for the progress bar and the run's log."""
        parts = [f"{_short(self.tokens_per_minute)} TPM"] if self.tokens_per_minute else []
        parts += [f"{_short(self.requests_per_minute)} RPM"] if self.requests_per_minute else []
        return " · ".join(parts)


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration(text: str | None) -> float | None:
    """Seconds in a reset header: OpenAI writes ``1s``, ``6m0s``, ``20ms``; others plain seconds."""
    if not text:
        return None
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * _UNIT[unit] for number, unit in parts)


def _positive(value: float | None) -> float | None:
    return value if value else None


def _short(value: float | None) -> str:
    if not value:
        return "0"
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.0f}"


class SharedBudget(Protocol):
    """A budget as a model call sees it: ``Budget`` in this process, or one held elsewhere (a Ray
    limiter actor) that every process calling the same provider, key and model shares."""

    async def take(self, amount: float) -> None: ...
    def give_back(self, amount: float) -> None: ...
    def hold(self, seconds: float) -> None: ...
    def cap(self, amount: float) -> None: ...


class Budgets(Protocol):
    """Makes the budgets of a model: ``kind`` is "requests" or "tokens"."""

    def __call__(self, config: ModelConfig, kind: str, per_minute: float) -> SharedBudget: ...


def local_budget(config: ModelConfig, kind: str, per_minute: float) -> SharedBudget:
    return Budget(per_minute)
