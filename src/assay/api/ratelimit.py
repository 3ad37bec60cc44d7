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
from typing import Any

from fastapi import Depends, Request

from assay.api.context import context, presented_key, project
from assay.api.errors import RateLimited
from assay.config.settings import settings

DEFAULTS = {"runs": 60.0, "uploads": 120.0}


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
