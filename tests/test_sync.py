"""Async work run from sync code starts clean: not inside the handler of an exception."""

from __future__ import annotations

import asyncio

from assay.sync import run_sync


async def _context_of_a_raised_error() -> BaseException | None:
    try:
        raise KeyError("absent")
    except KeyError as raised:
        return raised.__context__


def test_work_runs_outside_any_exception_handler():
    # Run from a handler, every exception raised inside the run (a KeyError inside str.translate,
    # dozens per item) was built in full and chained to the "no running event loop" question.
    assert run_sync(_context_of_a_raised_error()) is None


def test_work_runs_in_a_thread_where_a_loop_already_runs():
    async def inside_a_loop() -> BaseException | None:
        return run_sync(_context_of_a_raised_error())

    assert asyncio.run(inside_a_loop()) is None
