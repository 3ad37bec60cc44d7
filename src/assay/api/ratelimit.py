"""Per-key limits on the requests that cost the most: creating runs and uploading files.

Each API key (or, on a server without keys, each project) has a token bucket per action, refilled
at the configured rate with a burst of the same size. Past it the request gets 429 with
``retry-after`` (seconds) and ``retry-after-ms``, OpenAI's rate-limit error shape, as Foundry
answers when its quota is exhausted; the official SDKs retry after the time given.

``ASSAY_RATE_RUNS_PER_MINUTE`` (default 60) and ``ASSAY_RATE_UPLOADS_PER_MINUTE`` (default 120);
``0`` turns a limit off.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from typing import Any

from fastapi import Depends, Request

from assay.api.context import context, presented_key, project
from assay.api.errors import RateLimited
from assay.settings import settings

DEFAULTS = {"runs": 60.0, "uploads": 120.0}


class Buckets:
    """Token buckets by (caller, action); thread-safe (sync routes run in a thread pool)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.lock = threading.Lock()
        self.state: dict[tuple[str, str], tuple[float, float]] = {}

    def take(self, caller: str, action: str, per_minute: float) -> float:
        """0 when the request may go; otherwise the seconds until it may."""
        if per_minute <= 0:
            return 0.0
        rate, burst = per_minute / 60.0, max(1.0, per_minute)
        with self.lock:
            now = self.clock()
            tokens, at = self.state.get((caller, action), (burst, now))
            tokens = min(burst, tokens + (now - at) * rate)
            if tokens >= 1:
                self.state[(caller, action)] = (tokens - 1, now)
                return 0.0
            self.state[(caller, action)] = (tokens, now)
            return (1 - tokens) / rate


def per_minute(action: str) -> float:
    chosen = settings()
    return chosen.rate_runs_per_minute if action == "runs" else chosen.rate_uploads_per_minute


def limited(action: str) -> Any:
    """A route dependency that spends one of the caller's ``action`` tokens, or answers 429."""

    def check(request: Request, owner: str = Depends(project)) -> None:
        key = presented_key(request)
        caller = hashlib.sha256(key.encode()).hexdigest() if key else f"project:{owner}"
        wait = context(request).rate_limits.take(caller, action, per_minute(action))
        if wait > 0:
            raise RateLimited(action, wait)

    return Depends(check)
