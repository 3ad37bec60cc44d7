"""A SQLite store's checkpoints, made in a thread of their own.

In WAL mode a commit appends the pages it changed to the write-ahead log; a checkpoint copies them
into the database file and syncs it. SQLite makes one itself inside the commit that takes the log past
``wal_autocheckpoint`` pages, on the committing thread: in a run that only computes, the thread that
judges the items, which spent about 2 µs an item there (``bench/run_overhead.py``). A checkpoint is
one call into SQLite, which leaves the interpreter free while it copies and syncs, so here it runs
beside the writer, on another core. SQLite's own stays on, at ``SAFETY_NET_PAGES``, for when this
thread falls behind or is not there (another program writing the file).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from pathlib import Path

SAFETY_NET_PAGES = 10_000
"""``wal_autocheckpoint`` of the store's own connections: SQLite checkpoints inside a commit only
once the log holds this many pages (40 MB at 4 KB a page, against its default 1,000)."""
SETTLE_SECONDS = 0.2
"""How long after a commit the checkpoint waits, so that the commits of a busy spell are copied
together, not one checkpoint (and its two syncs) each."""
IDLE_SECONDS = 10.0
"""The thread ends after this long without a commit (the next commit starts another), so a process
that opens many stores keeps no thread for those it no longer writes."""


class Checkpointer:
    """Checkpoints ``path`` (``PRAGMA wal_checkpoint(PASSIVE)``: waits on no reader or writer and
    copies what it can) ``SETTLE_SECONDS`` after it is told of a commit, from a thread it starts on
    the first commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None
        self._start_afresh()
        _LIVE.add(self)

    def _start_afresh(self) -> None:
        self._due = threading.Event()
        self._closing = threading.Event()
        self._lock = threading.Lock()
        """Held while the thread starts or ends."""
        self._busy = threading.Lock()
        """Held while a checkpoint runs, and by a fork (``_hold_for_fork``): SQLite's own locks are
        never copied into a child held by a thread that is not there."""
        self._thread: threading.Thread | None = None

    def committed(self) -> None:
        """Told of every commit, as it begins (a hot path: once per batch of a run's writes)."""
        self._due.set()  # before the look at the thread: one ending now sees it and carries on
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._closing.is_set():
                    self._thread = threading.Thread(target=self._run, name=f"checkpoints {self.path.name}", daemon=True)
                    self._thread.start()

    def close(self) -> None:
        self._closing.set()
        self._due.set()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while self._waited():
            if self._closing.wait(SETTLE_SECONDS):
                break  # closing the store's last connection checkpoints what is left
            self._due.clear()  # a commit from now on asks for the next checkpoint
            with self._busy:
                self._checkpoint()
        if self._closing.is_set():
            self._disconnect()

    def _checkpoint(self) -> None:
        try:
            if self._connection is None:
                # ``mode=rw``: a file removed meanwhile is not created again, empty
                self._connection = sqlite3.connect(f"{self.path.as_uri()}?mode=rw", uri=True, check_same_thread=False)
            self._connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except Exception:  # noqa: BLE001 - the thread serves every project's writes: it must not end here
            pass  # the file is gone or busy: the next commit asks again, and the net holds

    def _waited(self) -> bool:
        """Waits for a commit; False once closing, or idle for ``IDLE_SECONDS``: then the thread
        ends, its connection closed before a commit may start the next."""
        while not self._due.wait(IDLE_SECONDS):
            with self._lock:
                if not self._due.is_set():
                    self._disconnect()
                    self._thread = None
                    return False
        return not self._closing.is_set()

    def _disconnect(self) -> None:
        with self._busy:
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()


_LIVE: weakref.WeakSet[Checkpointer] = weakref.WeakSet()
_HELD: list[Checkpointer] = []
_INHERITED: list[sqlite3.Connection] = []
"""A forked child's copies of its parent's checkpoint connections: never used nor closed (closing
one would let SQLite act on the parent's log) until the child ends."""


def _hold_for_fork() -> None:
    # Only a process that spreads a run forks (the CLI's main thread, never a server's), so at most
    # that run's own start waits here, for one checkpoint.
    _HELD[:] = list(_LIVE)
    for checkpointer in _HELD:
        checkpointer._busy.acquire()


def _release_after_fork() -> None:
    for checkpointer in _HELD:
        checkpointer._busy.release()
    _HELD.clear()


def _afresh_in_child() -> None:
    """The parent's threads did not come along: each store's next commit in the child starts its own."""
    for checkpointer in _HELD:
        if checkpointer._connection is not None:
            _INHERITED.append(checkpointer._connection)
            checkpointer._connection = None
        checkpointer._start_afresh()
    _HELD.clear()


os.register_at_fork(before=_hold_for_fork, after_in_parent=_release_after_fork, after_in_child=_afresh_in_child)
