"""A server killed in the middle of a run, then restarted, finishes it with every item once."""

from __future__ import annotations

import signal
import sqlite3
import time

from tests.api.conftest import wait_for
from tests.support.servers import judged_run, start_assay_server


def stored_ids(home, run_id):
    with sqlite3.connect(home / "assay.db", timeout=10) as conn:
        return [r[0] for r in conn.execute("select datasource_item_id from output_items where run_id = ?", (run_id,))]


def test_killed_server_resumes_the_run_after_restart(tmp_path, llm):
    llm.reset()
    llm.script(default={"content": '{"reason": "fine", "score": 4}'}, latency_ms=100)
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  judge: {{model: m, base_url: '{llm.base_url}', api_key: t, max_concurrency: 8}}\n")
    process, client = start_assay_server(tmp_path, models)
    total = 300
    eval_id, run_id = judged_run(client, total)
    deadline = time.monotonic() + 60
    while len(stored_ids(tmp_path, run_id)) < 40 and time.monotonic() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGKILL)
    process.wait()
    client.close()
    before = len(stored_ids(tmp_path, run_id))
    assert 0 < before < total
    process, client = start_assay_server(tmp_path, models)
    try:
        finished = wait_for(client, eval_id, run_id, seconds=120)
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=20)
    ids = stored_ids(tmp_path, run_id)
    assert finished.status == "completed" and finished.result_counts.total == total
    assert sorted(ids) == list(range(total))
