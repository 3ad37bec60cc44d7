"""A SQLite store's checkpoints come from a thread of its own (``assay.store.checkpoints``): what is
written reaches the database file beside the writer, not inside its commits, and forks, closes and
idle spells leave no thread behind nor take one along."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.store import Store
from assay.store import checkpoints as checkpoints_module
from assay.store.checkpoints import SAFETY_NET_PAGES
from tests.store.test_tally import judged, new_run

WRITTEN = 2_000_000
"""Bytes written: about 500 pages, below SQLite's own checkpoint mark (1,000 by default, and
``SAFETY_NET_PAGES`` on the store's connections), so only the thread copies them into the file."""


def settled(store: Store) -> None:
    """Waits (up to 30 s) until the store's thread has made the checkpoints its commits asked for
    and ended, ``IDLE_SECONDS`` being short: it ends only once no commit has asked for one."""
    assert store._checkpoints is not None
    thread = store._checkpoints._thread
    if thread is not None:
        thread.join(30)
        assert not thread.is_alive()


def write(store: Store, items: int = 500) -> None:
    run = new_run(store)
    big = [judged(index).model_copy(update={"datasource_item": {"text": "x" * 4000}}) for index in range(items)]
    assert store.add_output_items(run.id, big)


def database_bytes(path: Path) -> int:
    return path.stat().st_size


def test_what_is_written_reaches_the_database_file_from_the_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(checkpoints_module, "IDLE_SECONDS", 0.05)
    path = tmp_path / "assay.db"
    store = Store(f"sqlite:///{path}")
    try:
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == SAFETY_NET_PAGES
        settled(store)  # the migrations' commits
        before = database_bytes(path)
        write(store)
        assert store._checkpoints is not None and store._checkpoints._thread is not None
        settled(store)
        # Nothing else copies the log into the file until the store closes: the thread did.
        assert database_bytes(path) >= before + WRITTEN
    finally:
        store.close()
    assert store._checkpoints._thread is None or not store._checkpoints._thread.is_alive()


def test_the_thread_ends_when_idle_and_the_next_commit_starts_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(checkpoints_module, "IDLE_SECONDS", 0.05)
    path = tmp_path / "assay.db"
    store = Store(f"sqlite:///{path}")
    try:
        checkpoints = store._checkpoints
        assert checkpoints is not None
        settled(store)  # the migrations' commits, then nothing
        assert checkpoints._thread is None
        before = database_bytes(path)
        write(store)
        settled(store)
        assert database_bytes(path) >= before + WRITTEN
        assert checkpoints._thread is None and checkpoints._connection is None
    finally:
        store.close()


def test_a_forked_child_checkpoints_with_a_thread_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(checkpoints_module, "IDLE_SECONDS", 3600.0)  # the parent's thread lasts the test
    path = tmp_path / "assay.db"
    store = Store(f"sqlite:///{path}")
    try:
        write(store, items=10)  # the parent's thread is running when the child is forked
        checkpoints = store._checkpoints
        assert checkpoints is not None and checkpoints._thread is not None
        parents_thread = checkpoints._thread
        pid = os.fork()
        if pid == 0:  # the child: a store's connections of its own, as a spread run's child takes
            code = 1
            try:
                store.after_fork()
                checkpoints_module.IDLE_SECONDS = 0.05  # this process's own thread ends once it is done
                fresh = checkpoints._thread is None and checkpoints._connection is None
                before = database_bytes(path)
                write(store)
                own = checkpoints._thread is not None and checkpoints._thread is not parents_thread
                settled(store)
                copied = database_bytes(path) >= before + WRITTEN
                code = 0 if fresh and copied and own else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert parents_thread.is_alive() and checkpoints._thread is parents_thread  # the parent's goes on
    finally:
        store.close()
