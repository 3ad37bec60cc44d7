"""A worker stopped inside a transaction (SIGSTOP, a frozen VM) holds its run's row lock, and
claims skip locked rows: PostgreSQL must end that session so another worker can take the run."""

from __future__ import annotations

import contextlib
import time

import pytest
import sqlalchemy as sa

from assay.store import Store
from assay.store import tables as t
from tests.conftest import PG_URL, postgres_database


@pytest.mark.skipif(not PG_URL, reason="needs PostgreSQL (ASSAY_TEST_DATABASE_URL)")
def test_a_session_stalled_in_a_transaction_releases_its_run(monkeypatch):
    monkeypatch.setenv("ASSAY_PG_IDLE_IN_TRANSACTION_SECONDS", "1")
    with postgres_database() as url:
        stalled, other = Store(url), Store(url)
        held = stalled.engine.connect()
        try:
            created = other.create_eval(name="e", data_source_config={"type": "custom"}, testing_criteria=[])
            run = other.create_run(eval_id=created["id"], data_source={"type": "jsonl"})
            held.begin()
            # What a worker's conditional write holds while it checks its lease (FOR SHARE).
            held.execute(sa.select(t.runs.c.id).where(t.runs.c.id == run["id"]).with_for_update(read=True))
            deadline = time.monotonic() + 30
            claimed = other.claim_run("another-worker")
            while claimed is None and time.monotonic() < deadline:
                time.sleep(0.2)
                claimed = other.claim_run("another-worker")
            assert claimed is not None and claimed["id"] == run["id"]
        finally:
            with contextlib.suppress(sa.exc.SQLAlchemyError):  # the server already ended this session
                held.close()
            stalled.close()
            other.close()
