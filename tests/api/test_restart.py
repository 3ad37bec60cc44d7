"""A server killed in the middle of a run, then restarted, finishes it with every item once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

from openai import OpenAI

from tests.api.conftest import wait_for
from tests.support.fixtures import free_port


def start_server(home, port, models_file):
    env = {**os.environ, "ASSAY_HOME": str(home), "ASSAY_LEASE_SECONDS": "2"}
    env.pop("ASSAY_DATABASE_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--port", str(port), "--models", str(models_file), "--workers", "2"],
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


def stored_ids(home, run_id):
    with sqlite3.connect(home / "assay.db", timeout=10) as conn:
        return [r[0] for r in conn.execute("select datasource_item_id from output_items where run_id = ?", (run_id,))]


def test_killed_server_resumes_the_run_after_restart(tmp_path, llm):
    llm.reset()
    llm.script(default={"content": '{"reason": "fine", "score": 4}'}, latency_ms=100)
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  judge: {{model: m, base_url: '{llm.base_url}', api_key: t, max_concurrency: 8}}\n")
    port = free_port()
    process, client = start_server(tmp_path, port, models)
    total = 300
    created = client.evals.create(
        name="long", data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=[{"type": "azure_ai_evaluator", "name": "relevance", "evaluator_name": "builtin.relevance",
                           "initialization_parameters": {"model": "judge"}}],
    )  # fmt: skip
    rows = [{"item": {"query": f"question {i}", "response": f"answer {i}"}} for i in range(total)]
    run = client.evals.runs.create(
        eval_id=created.id, data_source={"type": "jsonl", "source": {"type": "file_content", "content": rows}}
    )
    deadline = time.monotonic() + 60
    while len(stored_ids(tmp_path, run.id)) < 40 and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGKILL)
    process.wait()
    client.close()
    before = len(stored_ids(tmp_path, run.id))
    assert 0 < before < total
    process, client = start_server(tmp_path, port, models)
    try:
        finished = wait_for(client, created.id, run.id, seconds=120)
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=20)
    ids = stored_ids(tmp_path, run.id)
    assert finished.status == "completed" and finished.result_counts.total == total
    assert sorted(ids) == list(range(total))
