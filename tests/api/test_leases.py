"""Two servers on one PostgreSQL database: one stalls (SIGSTOP) mid-run, the other takes the run
over and finishes it; when the first resumes it must stop without writing anything."""

from __future__ import annotations

import signal
import time

import pytest
import sqlalchemy as sa

from assay.run.engine import DEFAULT_CONCURRENCY
from tests.api.conftest import wait_for
from tests.conftest import PG_URL, postgres_database
from tests.support.servers import judged_run, start_assay_server

pytestmark = pytest.mark.skipif(not PG_URL, reason="needs ASSAY_TEST_DATABASE_URL")
TOTAL = 400


def item_rows(engine: sa.Engine, run_id: str) -> list[int]:
    with engine.connect() as conn:
        query = sa.text("select datasource_item_id from output_items where run_id = :r")
        return [row[0] for row in conn.execute(query, {"r": run_id})]


def test_a_stalled_worker_that_lost_its_run_changes_nothing_when_it_resumes(tmp_path, llm):
    llm.reset()
    llm.script(default={"content": '{"reason": "fine", "score": 4}'}, latency_ms=20)
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  judge: {{model: m, base_url: '{llm.base_url}', api_key: t, max_concurrency: 8}}\n")
    with postgres_database() as url:
        engine = sa.create_engine(url)
        first, first_client = start_assay_server(tmp_path / "a", models, database_url=url, workers=1)
        second = second_client = None
        try:
            eval_id, run_id = judged_run(first_client, TOTAL)
            deadline = time.monotonic() + 60
            while len(item_rows(engine, run_id)) < 40 and time.monotonic() < deadline:
                time.sleep(0.05)
            first.send_signal(signal.SIGSTOP)
            assert len(item_rows(engine, run_id)) < TOTAL

            second, second_client = start_assay_server(tmp_path / "b", models, database_url=url, workers=1)
            finished = wait_for(second_client, eval_id, run_id, seconds=120)
            assert finished.status == "completed" and finished.result_counts.total == TOTAL
            calls_when_done = llm.stats()["completions"]

            first.send_signal(signal.SIGCONT)
            time.sleep(4)  # the resumed worker checks its lease every second; give it several checks
            after = second_client.evals.runs.retrieve(run_id=run_id, eval_id=eval_id)
            assert after.status == "completed" and after.result_counts.total == TOTAL
            ids = item_rows(engine, run_id)
            assert sorted(ids) == list(range(TOTAL))  # each item once
            # Only the items it had started when it stalled (at most the engine's concurrency) may still
            # call the judge; it starts no new ones (before the fix: ~1,000 more calls).
            assert llm.stats()["completions"] - calls_when_done <= DEFAULT_CONCURRENCY
        finally:
            for process in (first, second):
                if process is not None:
                    process.send_signal(signal.SIGCONT)
                    process.terminate()
                    process.wait(timeout=20)
            for client in (first_client, second_client):
                if client is not None:
                    client.close()
            engine.dispose()
