"""Async work from sync code: the engine, a generator or an evaluator called from a script or a notebook."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to the end, also where an event loop already runs (a notebook: in a thread)."""
    if not loop_running():
        # Not from the handler of the question's RuntimeError: the whole run would execute "during
        # handling" of it, every exception raised in it (a KeyError inside str.translate, dozens per
        # item) built in full and chained to it, and every traceback a run reports telling of it.
        return asyncio.run(work)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, work).result()


def loop_running() -> bool:
    """Whether this thread runs an event loop now."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
