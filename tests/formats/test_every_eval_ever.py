"""Every Eval Ever 0.3.0 both ways, against EvalEval's own files (tests/fixtures/every_eval_ever):
their records imported, and assay's records valid under their schemas and read back."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from assay.errors import ConfigError
from assay.formats.every_eval_ever import import_record, read_record
from tests.cli.test_cli import ROOT, assay

FILES = Path(__file__).resolve().parents[1] / "fixtures" / "every_eval_ever"
WITH_SAMPLES = FILES / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json"
LEADERBOARD = FILES / "98ea850e-7019-4728-a558-8b1819ec47c2.json"


def validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((FILES / name).read_text())
    return jsonschema.validators.validator_for(schema)(schema, format_checker=jsonschema.FormatChecker())


def test_their_files_are_valid_under_their_schema():
    """The oracle itself: the record the tests import passes the schema the export is held to."""
    record, rows = read_record(WITH_SAMPLES)
    validator("eval.schema.json").validate(record)
    for row in rows:
        validator("instance_level_eval.schema.json").validate(row)


def test_a_record_with_its_samples_is_a_run_with_an_item_per_sample(store):
    record, rows = read_record(WITH_SAMPLES)
    assert len(rows) == 1  # read from beside the record, by the name its detailed results give
    done = import_record(store, record, rows, str(WITH_SAMPLES))
    run = store.get_run(done.run_id)
    assert run.status == "completed" and run.name == "<Platform> (demo-org/demo-model)" and done.items == 1
    (item,) = list(store.iter_output_items(run.id))
    assert item.datasource_item["input"] == "What is 2 + 2?" and item.sample["output_text"] == "The answer is 4."
    (result,) = item.results
    assert (result.name, result.score, result.passed) == ("demo-source.demo_bench", 1.0, True)
    assert run.metadata["demo-source.demo_bench"] == "0.75"  # the record's own figure, kept
    assert import_record(store, record, rows, str(WITH_SAMPLES)).already


def test_a_published_aggregate_record_keeps_its_scores(store):
    record, rows = read_record(LEADERBOARD)
    assert rows == []
    run = store.get_run(import_record(store, record, rows, str(LEADERBOARD)).run_id)
    means = {c.testing_criteria: c.mean_score for c in run.summary.per_testing_criteria_results}
    assert means == {
        "IFEval": 0.4486,
        "BBH": 0.4224,
        "MATH Level 5": 0.0249,
        "GPQA": 0.2743,
        "MUSR": 0.419,
        "MMLU-PRO": 0.1946,
    }
    assert run.name == "HF Open LLM v2 (TencentARC/LLaMA-Pro-8B-Instruct)"


def test_an_exported_run_is_valid_under_their_schemas_and_reads_back(tmp_path):
    ran = assay("run", str(ROOT / "examples" / "quickstart" / "eval.yaml"), home=tmp_path)
    run_id = next(line.split()[-1] for line in ran.stdout.splitlines() if line.startswith("run id:"))
    done = assay("report", run_id[:16], "--every-eval-ever", str(tmp_path / "eee"), home=tmp_path)
    assert done.returncode == 0, done.stderr
    (record_path,) = (tmp_path / "eee").glob("data/support-answers/unknown/none/*-*.json")  # EEE's datastore layout
    record, rows = read_record(record_path)
    validator("eval.schema.json").validate(record)
    for row in rows:
        validator("instance_level_eval.schema.json").validate(row)
    samples = tmp_path / "eee" / record["detailed_evaluation_results"]["file_path"]  # repository-relative
    import hashlib

    assert hashlib.sha256(samples.read_bytes()).hexdigest() == record["detailed_evaluation_results"]["checksum"]
    assert record["detailed_evaluation_results"]["total_rows"] == len(rows) == 16 * 5 * 2  # pass rate and mean
    f1 = next(r for r in record["evaluation_results"] if r["evaluation_result_id"] == "f1_score.pass_rate")
    assert f1["score_details"]["score"] == 0.75
    interval = f1["score_details"]["uncertainty"]["confidence_interval"]
    assert interval["lower"] < 0.75 < interval["upper"]
    imported = assay("import", "every-eval-ever", str(record_path), home=tmp_path)
    assert imported.returncode == 0 and "16 samples →" in imported.stdout, imported.stderr
    again = json.loads(assay("runs", "show", imported.stdout.split("→")[1].split()[0], "--json", home=tmp_path).stdout)
    rates = {c["testing_criteria"]: c["pass_rate"] for c in again["summary"]["per_testing_criteria_results"]}
    assert rates["f1_score.pass_rate"] == 0.75


def test_what_is_not_a_record_is_refused_naming_the_file(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"evaluations": []}')
    with pytest.raises(ConfigError, match="x.json: not an Every Eval Ever record"):
        read_record(bad)
    refused = assay("import", "every-eval-ever", str(bad), home=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr


def test_the_guides_block_runs_as_written(tmp_path):
    """The migrating guide's block as written, beside a copy of the examples: EvalEval's record
    shipped there imported, then the newest run (``last``) written out."""
    import os
    import shutil
    import subprocess
    import sys

    from tests.test_readme_snippets import ROOT, blocks

    (block,) = blocks("Every Eval Ever records", "sh")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {**os.environ, "ASSAY_HOME": str(tmp_path / ".assay"), "COLUMNS": "200"}
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "1 samples → evalrun_" in done.stdout
    (written,) = (tmp_path / "eee" / "data").glob("*/*/*/*-*.json")
    validator("eval.schema.json").validate(read_record(written)[0])
