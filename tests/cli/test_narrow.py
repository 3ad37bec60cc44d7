"""At 80 columns (a pipe, CI, a small terminal) every table reads whole: no cell cut with an ellipsis,
no table line past the width, a run id never split; wide tables turn into one block per row."""

from __future__ import annotations

import json

from assay.store import Store
from tests.cli.test_azd_evals import project
from tests.cli.test_cli import ROOT, assay
from tests.cli.test_compare import exact_run

NARROW = {"COLUMNS": "80"}
BOX = set("│┃┏┗└┌┡━─")


def readable_at_80(text: str) -> None:
    assert "…" not in text, text
    for line in text.splitlines():
        if BOX & set(line):
            assert len(line) <= 80, line


def test_a_run_and_the_runs_list_at_80_columns(tmp_path):
    ran = assay("run", str(ROOT / "examples" / "quickstart" / "eval.yaml"), home=tmp_path, env_extra=NARROW)
    assert ran.returncode == 0, ran.stderr
    readable_at_80(ran.stdout)
    for metric in ("text_similarity", "rouge_f1_score", "meteor"):
        assert metric in ran.stdout  # whole, not cut
    run_id = next(line.split()[-1] for line in ran.stdout.splitlines() if line.startswith("run id:"))
    assert f"run {run_id}" in ran.stdout  # the checked line's run id is never split from its word
    listed = assay("runs", "list", home=tmp_path, env_extra=NARROW)
    readable_at_80(listed.stdout)


def test_judges_agreement_at_80_columns_is_a_block_per_criterion(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        run = exact_run(store, set(range(160)), items=200)
    finally:
        store.close()
    labels = "".join(
        json.dumps({"datasource_item_id": i, "label": "pass" if i < 150 else "fail"}) + "\n" for i in range(200)
    )
    (tmp_path / "human.jsonl").write_text(labels)
    args = ("judges", "agreement", run, "--labels", str(tmp_path / "human.jsonl"), "--criterion", "exact")
    narrow = assay(*args, home=tmp_path, env_extra=NARROW)
    assert narrow.returncode == 0, narrow.stderr
    readable_at_80(narrow.stdout)
    assert "  κ: 0.86 [" in narrow.stdout and "  agree: 0.95" in narrow.stdout, narrow.stdout
    wide = assay(*args, home=tmp_path, env_extra={"COLUMNS": "200"})
    assert "┃ criterion" in wide.stdout  # a table where it fits


def test_azd_results_compare_at_80_columns(tmp_path):
    project(tmp_path)
    common = ("--no-prompt", "--path", str(tmp_path / "evals"))
    for _ in range(2):
        started = assay("eval", "run", "start", "--eval", "quality", *common, home=tmp_path)
        assert started.returncode == 0, started.stdout + started.stderr
    compared = assay("eval", "results", "compare", "--eval", "quality", *common, home=tmp_path, env_extra=NARROW)
    assert compared.returncode == 0, compared.stderr
    readable_at_80(compared.stdout)
    assert "inconclusive" in compared.stdout
