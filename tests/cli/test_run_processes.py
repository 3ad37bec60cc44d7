"""`assay run` spreads a run that calls no model over processes (its progress bar's thread running
meanwhile), and every item is stored once."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from assay.store import Store

ITEMS = 2500


def test_assay_run_spreads_a_model_free_run_over_processes(tmp_path):
    (tmp_path / "data.jsonl").write_text(
        "".join(
            json.dumps({"response": f"refund order {i % 7}", "ground_truth": f"refund order {i % 5}"}) + "\n"
            for i in range(ITEMS)
        )
    )
    (tmp_path / "eval.yaml").write_text(
        "name: spread\ndataset: {local_uri: data.jsonl}\n"
        "evaluators:\n"
        "  - {name: f1, evaluator_name: builtin.f1_score}\n"
        "  - {type: string_check, name: same, input: '{{item.response}}', reference: '{{item.ground_truth}}',"
        " operation: eq}\n"
    )
    env = {**os.environ, "ASSAY_HOME": str(tmp_path), "COLUMNS": "160"}
    env.pop("ASSAY_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "assay", "run", "eval.yaml", "--processes", "2"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "Traceback" not in said and f"{ITEMS} items" in said
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        (run,) = store.list_runs()
        assert run.status == "completed"
        assert sorted(store.done_item_ids(run.id)) == list(range(ITEMS))
        counts = run.summary.result_counts
        assert counts.total == ITEMS and counts.passed + counts.failed == ITEMS
    finally:
        store.close()
