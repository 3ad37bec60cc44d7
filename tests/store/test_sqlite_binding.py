"""SQLite binds a bool and None through sqlite3's adapter registry, as it bound them before, and
leaves an adapter the program registered first in place."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from assay.store import Store
from assay.store.base import _bound_as_they_are


def test_bools_and_nulls_are_stored_as_before(tmp_path: Path):
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    try:
        for kind in (bool, type(None)):
            assert (kind, sqlite3.PrepareProtocol) in sqlite3.adapters
    finally:
        store.close()
    db = sqlite3.connect(tmp_path / "b.db")
    db.execute("CREATE TABLE t (passed, model)")
    db.execute("INSERT INTO t VALUES (?, ?), (?, ?)", (True, None, False, None))
    assert db.execute("SELECT passed, typeof(passed), model, typeof(model) FROM t").fetchall() == [
        (1, "integer", None, "null"),
        (0, "integer", None, "null"),
    ]
    db.close()


def test_an_adapter_registered_first_is_kept(monkeypatch: pytest.MonkeyPatch):
    def as_text(value: bool) -> str:
        return "yes" if value else "no"

    monkeypatch.setitem(sqlite3.adapters, (bool, sqlite3.PrepareProtocol), as_text)
    _bound_as_they_are()
    assert sqlite3.adapters[(bool, sqlite3.PrepareProtocol)] is as_text
