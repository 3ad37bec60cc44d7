"""Two servers on one PostgreSQL database: one stalls (SIGSTOP) mid-run, the other takes the run
over and finishes it; when the first resumes it must stop without writing anything."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import sqlalchemy as sa
from openai import OpenAI

from assay.run.engine import DEFAULT_CONCURRENCY
from tests.api.conftest import wait_for
from tests.conftest import PG_URL, postgres_database
from tests.support.fixtures import free_port

pytestmark = pytest.mark.skipif(not PG_URL, reason="needs ASSAY_TEST_DATABASE_URL")
TOTAL = 400


def start_server(url: str, home, models_file) -> tuple[subprocess.Popen[bytes], OpenAI]:
    port = free_port()
    env = {**os.environ, "ASSAY_HOME": str(home), "ASSAY_DATABASE_URL": url, "ASSAY_LEASE_SECONDS": "2"}
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--port", str(port), "--models", str(models_file), "--workers", "1"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="local", max_retries=0)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            client.evals.list()
            return process, client
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("assay serve did not start")


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
        first, first_client = start_server(url, tmp_path / "a", models)
        second = second_client = None
        try:
            created = first_client.evals.create(
                name="long", data_source_config={"type": "custom", "item_schema": {"type": "object"}},
                testing_criteria=[{"type": "azure_ai_evaluator", "name": "relevance",
                                   "evaluator_name": "builtin.relevance", "initialization_parameters": {"model": "judge"}}],
            )  # fmt: skip
            rows = [{"item": {"query": f"question {i}", "response": f"answer {i}"}} for i in range(TOTAL)]
            run = first_client.evals.runs.create(
                eval_id=created.id, data_source={"type": "jsonl", "source": {"type": "file_content", "content": rows}}
            )
            deadline = time.monotonic() + 60
            while len(item_rows(engine, run.id)) < 40 and time.monotonic() < deadline:
                time.sleep(0.05)
            first.send_signal(signal.SIGSTOP)
            assert len(item_rows(engine, run.id)) < TOTAL

            second, second_client = start_server(url, tmp_path / "b", models)
            finished = wait_for(second_client, created.id, run.id, seconds=120)
            assert finished.status == "completed" and finished.result_counts.total == TOTAL
            calls_when_done = llm.stats()["completions"]

            first.send_signal(signal.SIGCONT)
            time.sleep(4)  # the resumed worker checks its lease every second; give it several checks
            after = second_client.evals.runs.retrieve(run_id=run.id, eval_id=created.id)
            assert after.status == "completed" and after.result_counts.total == TOTAL
            ids = item_rows(engine, run.id)
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
