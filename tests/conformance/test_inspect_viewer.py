"""Inspect AI itself on assay's logs, and assay on Inspect's: a log Inspect writes now (the task in
tests/fixtures/inspect) imported with Inspect's verdicts, and runs exported as `.eval` and `.json`
read by Inspect's own reader (`inspect_ai.log.read_eval_log`) and listed and served by its viewer
(`inspect view`). ``make conformance`` installs inspect_ai in a venv of its own (.venv-inspect)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.support.fixtures import ROOT, free_port, poll

pytestmark = pytest.mark.conformance

INSPECT_BIN = ROOT / ".venv-inspect" / "bin"
TASK = ROOT / "tests" / "fixtures" / "inspect" / "arith.py"
READ = """
import json, sys
from inspect_ai.log import read_eval_log
for path in sys.argv[1:]:
    log = read_eval_log(path)
    print(json.dumps({"path": path, "status": log.status, "task": log.eval.task, "samples": len(log.samples),
                      "accuracy": {s.name: s.metrics["accuracy"].value for s in log.results.scores if "accuracy" in s.metrics},
                      "first": {k: v.value for k, v in log.samples[0].scores.items()}}))
"""


def _assay(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "assay", *args], env=env, capture_output=True, text=True, timeout=300)


def test_inspect_reads_and_serves_assays_logs_and_assay_imports_inspects(tmp_path):
    if not (INSPECT_BIN / "inspect").exists():
        pytest.skip("inspect_ai is not installed in .venv-inspect: `make conformance` installs it")
    # A log Inspect writes now, imported with Inspect's own verdicts (two of three on both scorers).
    logs = tmp_path / "inspect-logs"
    env = {**os.environ, "INSPECT_LOG_DIR": str(logs), "HOME": str(tmp_path)}
    (tmp_path / TASK.name).write_text(TASK.read_text())  # Inspect takes a task file by a relative path
    wrote = subprocess.run(
        [INSPECT_BIN / "inspect", "eval", TASK.name, "--display", "none", "--max-connections", "1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert wrote.returncode == 0, wrote.stderr
    imported = _assay("import", "inspect", str(logs), home=tmp_path)
    assert imported.returncode == 0 and "3 samples →" in imported.stdout, imported.stderr
    run_id = imported.stdout.split("→")[1].split()[0]
    shown = json.loads(_assay("runs", "show", run_id, "--json", home=tmp_path).stdout)
    rates = {c["testing_criteria"]: c["pass_rate"] for c in shown["summary"]["per_testing_criteria_results"]}
    assert rates == {"includes": pytest.approx(2 / 3), "match": pytest.approx(2 / 3)}

    # assay's runs as Inspect logs: read by Inspect's reader with the runs' own figures.
    ran = _assay("run", str(ROOT / "examples" / "quickstart" / "eval.yaml"), home=tmp_path)
    quick = next(line.split()[-1] for line in ran.stdout.splitlines() if line.startswith("run id:"))
    out = tmp_path / "out"
    for run, name in ((quick, "quick"), (run_id, "arith")):
        for suffix in (".eval", ".json"):
            done = _assay("report", run, "--inspect", str(out / f"{name}{suffix}"), home=tmp_path)
            assert done.returncode == 0, done.stderr
    files = sorted(str(p) for p in out.iterdir())
    read = subprocess.run([INSPECT_BIN / "python", "-c", READ, *files], capture_output=True, text=True, timeout=300)
    assert read.returncode == 0, read.stderr
    found = {Path(entry["path"]).name: entry for entry in map(json.loads, read.stdout.splitlines())}
    assert set(found) == {"arith.eval", "arith.json", "quick.eval", "quick.json"}
    for name in ("quick.eval", "quick.json"):
        assert found[name]["task"] == "support-answers" and found[name]["samples"] == 16
        assert found[name]["accuracy"]["f1_score"] == 0.75
    for name in ("arith.eval", "arith.json"):
        assert found[name]["accuracy"] == {"includes": pytest.approx(2 / 3), "match": pytest.approx(2 / 3)}
        assert found[name]["first"] == {"includes": "C", "match": "C"}  # Inspect's own grades, back
    print(f"Inspect read {len(found)} of {len(found)} exported logs")  # noqa: T201

    # Inspect's viewer lists the .eval logs of the folder and serves each.
    port = free_port()
    viewer = subprocess.Popen(
        [INSPECT_BIN / "inspect", "view", "--log-dir", str(out), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        listing = poll(lambda: _get(f"http://127.0.0.1:{port}/api/logs"), lambda got: got is not None, seconds=60)
        names = {Path(entry["name"]).name for entry in json.loads(listing)["files"]}
        assert {"arith.eval", "quick.eval"} <= names
        served = json.loads(_get(f"http://127.0.0.1:{port}/api/logs/{quote(str(out / 'quick.eval'), safe='')}") or "{}")
        assert served["eval"]["task"] == "support-answers" and served["status"] == "success"
    finally:
        viewer.terminate()
        viewer.wait(timeout=30)


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return str(reply.read().decode())
    except OSError:
        return None
