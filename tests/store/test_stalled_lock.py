"""A worker stopped inside a transaction (SIGSTOP, a frozen VM) holds its run's row lock, and
claims skip locked rows: PostgreSQL must end that session so another worker can take the run."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest
import sqlalchemy as sa

from assay.store import Store
from assay.store import tables as t
from tests.conftest import PG_URL, postgres_database
from tests.support.fixtures import poll


@pytest.mark.skipif(not PG_URL, reason="needs PostgreSQL (ASSAY_TEST_DATABASE_URL)")
def test_a_session_stalled_in_a_transaction_releases_its_run(monkeypatch):
    monkeypatch.setenv("ASSAY_PG_IDLE_IN_TRANSACTION_SECONDS", "1")
    with postgres_database() as url:
        stalled, other = Store(url), Store(url)
        held = stalled.engine.connect()
        try:
            created = other.create_eval(name="e", data_source_config={"type": "custom"}, testing_criteria=[])
            run = other.create_run(eval_id=created.id, data_source={"type": "jsonl"})
            held.begin()
            # What a worker's conditional write holds while it checks its lease (FOR SHARE).
            held.execute(sa.select(t.runs.c.id).where(t.runs.c.id == run.id).with_for_update(read=True))
            deadline = time.monotonic() + 30
            claimed = other.claim_run("another-worker")
            while claimed is None and time.monotonic() < deadline:
                time.sleep(0.2)
                claimed = other.claim_run("another-worker")
            assert claimed is not None and claimed.id == run.id
        finally:
            with contextlib.suppress(sa.exc.SQLAlchemyError):  # the server already ended this session
                held.close()
            stalled.close()
            other.close()


@pytest.mark.skipif(not PG_URL, reason="needs PostgreSQL (ASSAY_TEST_DATABASE_URL)")
def test_a_session_stalled_mid_statement_is_ended_once_its_lease_expires():
    """Stopped while its statement is still active (sending a large insert, say), the session is
    not idle in its transaction, so PostgreSQL's timeout never ends it: the claimant must."""
    with postgres_database() as url:
        stalled, other = Store(url), Store(url)
        held = stalled.engine.connect()
        blocked = threading.Thread(target=_hold_mid_statement, args=(held,), daemon=True)
        pid = None
        try:
            created = other.create_eval(name="e", data_source_config={"type": "custom"}, testing_criteria=[])
            run = other.create_run(eval_id=created.id, data_source={"type": "jsonl"})
            assert other.claim_run("stalled-worker").id == run.id
            held.begin()
            pid = held.execute(sa.text("select pg_backend_pid()")).scalar()  # the worker's write has begun...
            with other.engine.begin() as conn:  # ...its last renewal runs out soon (set after that begin)...
                conn.execute(t.runs.update().where(t.runs.c.id == run.id).values(lease_until=time.time() + 0.2))
            # ...and it checks its lease (FOR SHARE), then stalls in its next statement, which stays 'active'.
            held.execute(sa.select(t.runs.c.id).where(t.runs.c.id == run.id).with_for_update(read=True))
            blocked.start()
            claimed = poll(lambda: other.claim_run("another-worker"), lambda found: found is not None, seconds=30)
            assert claimed is not None and claimed.id == run.id and claimed.worker == "another-worker"
        finally:
            if blocked.is_alive():  # the claimant did not end the stalled session: end it here
                with other.engine.connect() as conn:
                    conn.execute(sa.text("select pg_terminate_backend(:pid)"), {"pid": pid})
            blocked.join(timeout=10)
            with contextlib.suppress(sa.exc.SQLAlchemyError):  # its session is gone
                held.close()
            stalled.close()
            other.close()


def _hold_mid_statement(held: sa.Connection) -> None:
    with contextlib.suppress(sa.exc.SQLAlchemyError):  # ended by the claimant
        held.execute(sa.text("select pg_sleep(3600)"))
