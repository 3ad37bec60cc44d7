"""Every table in 80 columns (a terminal's default): no line longer, no cell cut short (``…``), and
the ids a user copies from it whole or as the short form commands take."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_cli import assay

ROOT = Path(__file__).resolve().parents[2]


def narrow(*args: str, home: Path) -> str:
    done = assay(*args, home=home, env_extra={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def fits(text: str) -> bool:
    return all(len(line) <= 80 and "…" not in line for line in text.splitlines())


def test_the_lists_fit_80_columns_whole(tmp_path):
    ran = assay("run", str(ROOT / "examples/quickstart/eval.yaml"), home=tmp_path, check=True).stdout
    run_id = ran.split("run id: ")[1].split()[0]
    assay("run", str(ROOT / "examples/quickstart/agent_eval.yaml"), home=tmp_path, check=True)
    runs = narrow("runs", "list", home=tmp_path)
    assert fits(runs) and run_id.removeprefix("evalrun_")[:8] in runs and "support-answers" in runs
    evaluators = narrow("evaluators", "list", home=tmp_path)
    assert fits(evaluators) and "builtin.task_navigation_efficiency" in evaluators  # the longest name, whole
    created = narrow("review", "create", run_id[:16], "--reviewer", "alice", home=tmp_path)
    queue_id = created.split("review queue ")[1].split(":")[0]
    queues = narrow("review", "list", home=tmp_path)
    assert fits(queues) and queue_id in queues and "0/16" in queues
    compared = narrow("runs", "compare", run_id[:12], run_id[:12], home=tmp_path)
    assert fits(compared) and "f1_score" in compared


def test_every_list_has_a_json_form(tmp_path):
    import json

    ran = assay("run", str(ROOT / "examples/quickstart/eval.yaml"), home=tmp_path, check=True).stdout
    run_id = ran.split("run id: ")[1].split()[0]
    assay("review", "create", run_id, home=tmp_path, check=True)
    found = {}
    for command in (
        ("runs", "list"),
        ("runs", "show", run_id[:12]),
        ("evaluators", "list"),
        ("dataset", "list"),
        ("traces", "list"),
        ("review", "list"),
        ("optimize", "list", "--project", str(tmp_path)),
    ):
        done = assay(*command, "--json", home=tmp_path)
        assert done.returncode == 0, (command, done.stderr)
        found[command[0] + " " + command[1]] = json.loads(done.stdout)
    assert found["runs show"]["id"] == run_id and found["runs list"][0]["id"] == run_id
    assert any(
        e["name"] == "builtin.f1_score" and e["inputs"] == ["response", "ground_truth"]
        for e in found["evaluators list"]
    )
    assert found["dataset list"] == [] and found["traces list"] == [] and found["optimize list"] == []
    assert found["review list"][0]["run_id"] == run_id and found["review list"][0]["items"] == 16
