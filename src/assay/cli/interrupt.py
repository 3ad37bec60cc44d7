"""Ctrl-C for ``assay run``: stop at once, keep what was stored, end the run ``canceled``.

The first Ctrl-C raises KeyboardInterrupt as Python always does, and the run unwinds: in-flight
calls are cancelled, the run is marked canceled, the command exits 130. Unwinding waits on the
event loop's tasks and threads; should any of them not let go (seen rarely in CI, with model calls
a provider never answers), a watchdog marks the run canceled itself after ``GRACE_SECONDS`` and
ends the process. Items already stored are kept either way, and ``--resume`` finishes the run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

GRACE_SECONDS = 10.0


@contextlib.contextmanager
def interruptible(mark_canceled: Callable[[], None], grace: float = GRACE_SECONDS) -> Iterator[None]:
    """While inside, Ctrl-C cancels with a deadline; the previous handler is put back after."""
    interrupted, unwound = threading.Event(), threading.Event()

    def watchdog() -> None:
        if unwound.wait(grace):
            return  # the run unwound in time; the caller reports and exits
        with contextlib.suppress(Exception):
            mark_canceled()
        os._exit(130)

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        if not interrupted.is_set():
            interrupted.set()
            threading.Thread(target=watchdog, name="assay-ctrl-c-watchdog", daemon=True).start()
        signal.default_int_handler(signum, frame)  # KeyboardInterrupt, as without us

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        unwound.set()
        signal.signal(signal.SIGINT, previous)


__all__ = ["GRACE_SECONDS", "interruptible"]
