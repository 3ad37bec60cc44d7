"""A run whose criteria wait on nothing but the CPU, spread over this machine's cores.

An F1, BLEU, ROUGE or string-check run spends its time in Python, one core at a time. Such a run
forks: each process executes the same engine (``execute``) on the runs of items it takes first
(``Chunks``), with its own connection to the store, under the run's one lease, taking turns at
writing to SQLite (``WriteTurns``). The items are keyed, so the shares never write one item twice,
and a share that stops early leaves the run resumable like any other.

    parent: execute(process 0's chunks)    child k: execute(process k's chunks) → "count" lines,
            reads the children's lines (progress, their outcome)          one final line
            and waits for them

Only where forking is safe: Linux, this process's main thread, no event loop running in it (a
notebook's), and no model, target or remote executor in the run. A share must have enough items to
pay for its process (``ITEMS_PER_PROCESS``).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import errno
import fcntl
import gc
import json
import mmap
import os
import pickle
import queue
import select
import selectors
import signal
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from assay.collector import frozen_during
from assay.config.settings import settings
from assay.run.engine import RunJob, execute, log, only_computes, waits_on_model
from assay.store.tally import RunTally
from assay.sync import loop_running, run_sync

ITEMS_PER_PROCESS = 1000
"""Forking, reconnecting and reading the whole dataset cost a share about what evaluating a few
hundred F1 items does: fewer items than this per process and one process is as fast."""


CHUNK_ITEMS = 25
"""Items a process takes at a time: small enough that the processes end within a few milliseconds
of each other, large enough that taking costs nothing per item."""


@dataclass
class ShareOutcome:
    """What a child process reported when its share ended."""

    evaluated: int = 0
    stopped: bool = False
    lost: bool = False
    error: BaseException | None = None
    tally: RunTally | None = None
    """What the child wrote, counted (``RunJob.tally``)."""


def processes_for(job: RunJob, items: int) -> int:
    """How many processes execute ``job``'s ``items``: its option, else ``ASSAY_RUN_PROCESSES``.
    ``auto`` is one per usable core when every criterion is a built-in that only computes; a number
    asks for that many with any criteria that call no model (the user's own evaluators then run in
    forked processes). Held to one where forking is unsafe or would not pay."""
    wanted = job.options.processes or settings().run_processes
    if wanted == "auto":
        if not only_computes(job):
            return 1
        wanted = usable_cores()
    count = min(int(wanted), items // ITEMS_PER_PROCESS)
    if count < 2 or not _may_fork() or job.options.executor is not None or waits_on_model(job):
        return 1
    return count


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the system tells it)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def execute_spread(job: RunJob, items: int) -> int:
    """``execute(job)`` in as many processes as pay (``processes_for``); how many items were evaluated."""
    count = processes_for(job, items)
    if count > 1:  # a resumed run may have few items left
        job.stored = job.store.done_item_ids(job.run_id)
        count = processes_for(job, items - len(job.stored))
    if count == 1:
        with frozen_during():
            return run_sync(execute(job))
    for stream in (sys.stdout, sys.stderr):  # what is buffered now must not be written twice
        with contextlib.suppress(Exception):
            stream.flush()
    # A collection writes to every object it walks, so each would copy the pages it shares with
    # the children: what lives now is left out of collections until they end.
    with frozen_during(even_if_tuned=True):
        return _spread(job, count)


def _spread(job: RunJob, count: int) -> int:
    if not job.store.works_in_process:
        return _spread_shares(job, count)
    with WriteTurns() as turns:  # SQLite: one writer at a time
        job.write_turn = turns
        try:
            return _spread_shares(job, count)
        finally:
            job.write_turn = None


class WriteTurns:
    """The processes of a run take turns at writing to a SQLite store, which takes one writer at a
    time: a writer that finds the database locked sleeps 1, 2, 5, 10 ms and longer while the
    other's write takes about 2, and an F1 run's shares lost a tenth of their time so. A share that
    finds the turn taken evaluates on and writes a bigger batch when it is free.

    A POSIX lock on a file of its own: each process holds it apart from the others (locks are not
    inherited), and the system releases it when its holder dies."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()

    def take(self, *, wait: bool) -> bool:
        try:
            fcntl.lockf(self._file, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return False
            raise
        return True

    def give(self) -> None:
        fcntl.lockf(self._file, fcntl.LOCK_UN)

    def __enter__(self) -> WriteTurns:
        return self

    def __exit__(self, *_: object) -> None:
        self._file.close()


class Chunks:
    """Which output items each process executes: runs of ``size`` consecutive items, each taken by
    the first process to reach it. A process slowed by anything (its later start, another program)
    takes fewer, and none waits idle at the end for another to finish a fixed half.

    The next run's number is a counter in memory the processes share (an anonymous mapping a fork
    inherits), taken under a POSIX lock of its own, which the system releases if its holder dies.
    Each process asks about every index in order, so a run it takes always starts at or after the
    index it stands at, and no item is left untaken."""

    def __init__(self, size: int = CHUNK_ITEMS) -> None:
        self.size = size
        self.process = 0
        self._counter = mmap.mmap(-1, 8)
        self._lock = tempfile.TemporaryFile()
        self._start = self._end = 0

    def owns(self, index: int) -> bool:
        while index >= self._end:
            taken = self._take()
            self._start, self._end = taken * self.size, (taken + 1) * self.size
        return index >= self._start

    def for_process(self, process: int) -> Chunks:
        """This, as process ``process`` holds it (in a child, after the fork)."""
        self.process = process
        return self

    def _take(self) -> int:
        fcntl.lockf(self._lock, fcntl.LOCK_EX)
        try:
            taken = int.from_bytes(self._counter[:8], "little")
            self._counter[:8] = (taken + 1).to_bytes(8, "little")
        finally:
            fcntl.lockf(self._lock, fcntl.LOCK_UN)
        return taken

    def close(self) -> None:
        self._counter.close()
        self._lock.close()


def _spread_shares(job: RunJob, count: int) -> int:
    # The children stop once this pipe closes: when this process asks them to, or when it dies.
    stop_reading, stop_writing = os.pipe()
    chunks = Chunks()
    try:
        return _run_shares(job, count, chunks, stop_reading, stop_writing)
    finally:
        chunks.close()


def _run_shares(job: RunJob, count: int, chunks: Chunks, stop_reading: int, stop_writing: int) -> int:
    # Started before the forks: a thread started once both cores are busy waited milliseconds for one.
    reader = _Reader(job.on_stored)
    children: list[tuple[int, int]] = []
    try:
        for index in range(1, count):
            children.append(_fork_share(job, chunks, index, stop_reading, stop_writing))
    except OSError:  # no more processes may be made: those made stop, and this one does it all
        log.warning("could not start the run's processes; it runs in one", exc_info=True)
        os.close(stop_writing)
        reader.on_stored = None  # this process counts every item it stores itself
        reader.watch(children)
        _wait(children, reader)
        os.close(stop_reading)
        job.stored = None  # read again: the children may have stored some
        return run_sync(execute(job))
    except BaseException:  # interrupted while forking: those made stop
        os.close(stop_writing)
        reader.watch(children)
        _wait(children, reader)
        raise
    os.close(stop_reading)
    reader.watch(children)
    mine = dataclasses.replace(job, share=chunks)
    try:
        evaluated = run_sync(execute(mine))
    except BaseException:
        os.close(stop_writing)  # each child stores what it has and ends
        _wait(children, reader)
        raise
    # No child is told to stop before its share is done. A child that has reported its outcome has
    # stored all it will: the run goes on while the system takes it down (a few milliseconds of a
    # process this size), and the reader reaps it.
    reader.reported.wait()
    os.close(stop_writing)
    job.stopped, job.lost = mine.stopped, mine.lost
    for outcome in reader.outcomes:
        if outcome.error is not None:
            raise outcome.error
        evaluated += outcome.evaluated
        job.stopped = job.stopped or outcome.stopped
        job.lost = job.lost or outcome.lost
        if job.tally is not None:
            if outcome.tally is None:
                job.tally.complete = False
            else:
                job.tally.merge(outcome.tally)
    return evaluated


def _wait(children: list[tuple[int, int]], reader: _Reader) -> None:
    """Until every child has ended and been reaped."""
    reader.join()


def _may_fork() -> bool:
    linux = sys.platform.startswith("linux")
    return linux and threading.current_thread() is threading.main_thread() and not loop_running()


def _fork_share(job: RunJob, chunks: Chunks, index: int, stop_reading: int, stop_writing: int) -> tuple[int, int]:
    """A child executing its share of ``chunks`` as process ``index``: its pid and the pipe it reports on."""
    readable, writable = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12 warns of forking with threads running (a progress bar's refresher): the child
        # touches none of their locks, only the dataset, the store (a fresh pool) and its own loop.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid:
        os.close(writable)
        return pid, readable
    os.close(readable)
    os.close(stop_writing)
    _run_share(job, chunks.for_process(index), writable, stop_reading)


def _run_share(job: RunJob, chunks: Chunks, writable: int, stop_reading: int) -> NoReturn:
    """In the child: execute the share, report each stored batch and the outcome, and leave
    without running the parent's exit handlers or flushing its buffers."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # not the CLI's handler, which marks the run
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        job.store.after_fork()  # the parent's connections stay the parent's
        gc.freeze()  # what the parent made is never this process's garbage; its pages stay shared

        def report(stored: int) -> None:
            os.write(writable, b"%d\n" % stored)

        asked = job.options.keep_going

        def keep_going() -> bool:
            told_to_stop = bool(select.select([stop_reading], [], [], 0)[0])
            return not told_to_stop and (asked is None or asked())

        share = dataclasses.replace(
            job,
            share=chunks,
            on_stored=report,
            options=dataclasses.replace(job.options, keep_going=keep_going),
            tally=RunTally() if job.tally is not None else None,  # what this child writes, counted apart
        )
        evaluated = run_sync(execute(share))
        final: dict[str, Any] = {"evaluated": evaluated, "stopped": share.stopped, "lost": share.lost}
        if share.tally is not None:
            final["tally"] = base64.b64encode(pickle.dumps(share.tally)).decode()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
        final, code = {"error": _pickled(exc)}, 1
    try:
        os.write(writable, b"done " + json.dumps(final).encode() + b"\n")
    finally:
        os._exit(code)


def _pickled(exc: BaseException) -> str:
    try:
        data = pickle.dumps(exc)
    except Exception:  # noqa: BLE001 - an error that does not pickle is sent as its text
        data = pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))
    return base64.b64encode(data).decode()


def _unpickled(text: str) -> BaseException:
    try:
        error = pickle.loads(base64.b64decode(text))
    except Exception as exc:  # noqa: BLE001 - a share failed; how, it could not say
        return RuntimeError(f"a process of the run failed and its error could not be read ({exc})")
    return error if isinstance(error, BaseException) else RuntimeError(str(error))


class _Reader(threading.Thread):
    """Reads the children's pipes until each closes: their stored counts go to ``on_stored``
    (for the progress bar), their final lines to ``outcomes`` (``reported`` is set once each child
    has sent one or ended). Then it reaps them."""

    def __init__(self, on_stored: Callable[[int], None] | None) -> None:
        super().__init__(name="assay-run-shares", daemon=True)
        self.on_stored = on_stored
        self.outcomes: list[ShareOutcome] = []
        self.reported = threading.Event()
        self._children: queue.SimpleQueue[list[tuple[int, int]]] = queue.SimpleQueue()
        self.start()

    def watch(self, children: list[tuple[int, int]]) -> None:
        """Read these children's pipes (their pids and pipes), to their ends."""
        self._children.put(list(children))

    def run(self) -> None:
        selector = selectors.DefaultSelector()
        pending: dict[int, bytes] = {}
        children = self._children.get()
        for pid, readable in children:
            selector.register(readable, selectors.EVENT_READ, pid)
            pending[readable] = b""
        finals: dict[int, ShareOutcome] = {}
        self._report(finals, len(children))
        while pending:
            for key, _ in selector.select():
                readable = key.fd
                chunk = os.read(readable, 65536)
                if not chunk:
                    selector.unregister(readable)
                    os.close(readable)
                    pending.pop(readable)
                    finals.setdefault(readable, _vanished(key.data))
                    self._report(finals, len(children))
                    continue
                *lines, pending[readable] = (pending[readable] + chunk).split(b"\n")
                for line in lines:
                    if line.startswith(b"done "):
                        finals[readable] = _outcome(json.loads(line[5:]))
                        self._report(finals, len(children))
                    elif self.on_stored is not None:
                        self.on_stored(int(line))
        selector.close()
        for pid, _ in children:
            os.waitpid(pid, 0)

    def _report(self, finals: dict[int, ShareOutcome], children: int) -> None:
        if len(finals) == children and not self.reported.is_set():
            self.outcomes = list(finals.values())
            self.reported.set()


def _outcome(final: dict[str, Any]) -> ShareOutcome:
    if "error" in final:
        return ShareOutcome(error=_unpickled(final["error"]))
    # The child is this process's own fork: what it pickled is trusted as this process's own objects are.
    tally = pickle.loads(base64.b64decode(final["tally"])) if "tally" in final else None
    return ShareOutcome(int(final["evaluated"]), bool(final["stopped"]), bool(final["lost"]), tally=tally)


def _vanished(pid: int) -> ShareOutcome:
    """A child that closed its pipe without its final line was killed: what it stored is kept."""
    return ShareOutcome(error=RuntimeError(f"a process of the run (pid {pid}) ended without finishing its items"))
