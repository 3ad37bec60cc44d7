"""Async work from sync code: the engine, a generator or an evaluator called from a script or a notebook."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to the end, also where an event loop already runs (a notebook: in a thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, work).result()
