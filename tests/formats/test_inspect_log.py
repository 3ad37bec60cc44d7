"""Inspect AI's eval logs both ways: logs Inspect itself wrote (tests/fixtures/inspect, `.eval` and
`.json`) imported as runs with Inspect's own verdicts, and runs exported as logs that read back.
Inspect's own reader and viewer open the exported logs in `make conformance`
(tests/conformance/test_inspect_viewer.py)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.formats.inspect_log import export_log, import_log, iter_logs, read_log, write_log
from tests.cli.test_cli import ROOT, assay

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "inspect"
EVAL_LOG = next(LOGS.glob("*.eval"))
JSON_LOG = next(LOGS.glob("*.json"))


@pytest.mark.parametrize("path", [EVAL_LOG, JSON_LOG], ids=["eval", "json"])
def test_a_log_inspect_wrote_is_a_run_with_inspects_verdicts(store, path):
    log = read_log(path)
    assert log["eval"]["task"] == "arith" and log["status"] == "success"
    done = import_log(store, log, str(path))
    run = store.get_run(done.run_id)
    assert run.status == "completed" and run.name == "arith (mockllm/model)" and done.items == 3
    rates = {c.testing_criteria: (c.passed, c.failed) for c in run.summary.per_testing_criteria_results}
    assert rates == {"includes": (2, 1), "match": (2, 1)}  # Inspect's accuracy: 0.667 on both
    items = {i.datasource_item["id"]: i for i in store.iter_output_items(run.id)}
    two = items["two"]
    assert two.datasource_item["target"] == "4" and two.sample["output_text"] == "5"
    assert [(r.name, r.score, r.passed, r.properties["grade"]) for r in two.results] == [
        ("includes", 0.0, False, "I"),
        ("match", 0.0, False, "I"),
    ]
    assert items["one"].sample["usage"] == {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    again = import_log(store, read_log(path), str(path))
    assert again.already and again.run_id == run.id and len(list(store.iter_output_items(run.id))) == 3


@pytest.mark.parametrize(("name", "accuracy"), [("data_arc_qwen.json", 1 / 3), ("data_pubmedqa_gpt4o_mini.json", 1.0)])
def test_logs_others_ran_import_with_the_accuracy_inspect_reported(store, name, accuracy):
    path = LOGS / "every_eval_ever" / name
    log = read_log(path)
    (reported,) = log["results"]["scores"]
    assert reported["metrics"]["accuracy"]["value"] == pytest.approx(accuracy)
    run = store.get_run(import_log(store, log, str(path)).run_id)
    (criterion,) = run.summary.per_testing_criteria_results
    assert criterion.testing_criteria == "choice" and criterion.pass_rate == pytest.approx(accuracy)
    assert run.name == f"{log['eval']['task']} ({log['eval']['model']})"


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_an_exported_run_reads_back_with_the_same_verdicts(store, tmp_path, suffix):
    first = import_log(store, read_log(EVAL_LOG), str(EVAL_LOG))
    exported = tmp_path / f"arith{suffix}"
    write_log(export_log(store, first.run_id), exported)
    if suffix == ".eval":
        with zipfile.ZipFile(exported) as archive:
            assert {"header.json", "summaries.json", "samples/one_epoch_1.json"} <= set(archive.namelist())
    log = read_log(exported)
    assert [s["id"] for s in log["samples"]] == ["one", "three", "two"]  # Inspect's ids kept
    scores = {s["name"]: s["metrics"]["accuracy"]["value"] for s in log["results"]["scores"]}
    assert scores == {"includes": pytest.approx(2 / 3), "match": pytest.approx(2 / 3)}
    assert log["stats"]["model_usage"]["mockllm/model"]["total_tokens"] == 45
    # Read back by the importer, it is a run of its own with the same verdicts.
    log["eval"]["run_id"] = "exported-again"
    second = store.get_run(import_log(store, log, str(exported)).run_id)
    assert {c.testing_criteria: (c.passed, c.failed) for c in second.summary.per_testing_criteria_results} == {
        "includes": (2, 1),
        "match": (2, 1),
    }


def test_the_cli_imports_a_logs_folder_and_exports_an_assay_run(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for path in (EVAL_LOG, JSON_LOG):
        (logs / path.name).write_bytes(path.read_bytes())
    imported = assay("import", "inspect", str(logs), home=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.count("3 samples →") == 2
    ran = assay("run", str(ROOT / "examples" / "quickstart" / "eval.yaml"), home=tmp_path)
    run_id = next(line.split()[-1] for line in ran.stdout.splitlines() if line.startswith("run id:"))
    exported = assay("report", run_id[:16], "--inspect", str(tmp_path / "quick.eval"), home=tmp_path)
    assert exported.returncode == 0, exported.stderr
    log = read_log(tmp_path / "quick.eval")
    assert log["eval"]["task"] == "support-answers" and len(log["samples"]) == 16
    first = log["samples"][0]
    assert first["input"] == "How do I reset my password?" and set(first["scores"]) >= {"f1_score", "bleu"}
    f1 = next(s for s in log["results"]["scores"] if s["name"] == "f1_score")
    assert f1["metrics"]["accuracy"]["value"] == 0.75  # the run's own pass rate


def test_what_is_not_an_inspect_log_is_refused_naming_the_file(tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text(json.dumps({"hello": "world"}))
    with pytest.raises(ConfigError, match="notes.json: not an Inspect log"):
        read_log(bad)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match="no .eval or .json logs"):
        list(iter_logs([empty]))
    refused = assay("import", "inspect", str(bad), home=tmp_path)
    assert refused.returncode == 2 and "not an Inspect log" in refused.stderr and "Traceback" not in refused.stderr


def test_the_guides_block_runs_as_written(tmp_path):
    """The migrating guide's block as written, beside a copy of the examples: the Inspect log shipped
    there imported, listed, and the newest run (``last``) written out as a log."""
    import os
    import shutil
    import subprocess
    import sys

    from tests.test_readme_snippets import ROOT, blocks

    (block,) = blocks("Inspect AI logs", "sh")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {**os.environ, "ASSAY_HOME": str(tmp_path / ".assay"), "COLUMNS": "200"}
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "→ evalrun_" in done.stdout and "arith" in done.stdout
    assert read_log(tmp_path / "run.eval")["eval"]["task"] == "arith"
