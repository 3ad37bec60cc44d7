"""Token buckets by (caller, action): the state behind the API's per-key rate limits
(``assay.api.ratelimit``), kept apart from the routes so the request context can own one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


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
