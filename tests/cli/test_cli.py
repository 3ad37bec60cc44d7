"""The command line as a user runs it: real processes, a store under a temporary ASSAY_HOME."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def assay(
    *args, home: Path, check: bool = False, env_extra: dict[str, str] | None = None, timeout: float = 300, **kwargs
) -> subprocess.CompletedProcess[str]:
    """``assay ARGS`` with ASSAY_HOME=home: in this process (a new interpreter costs a second or two of
    CPU, and the suite runs this a hundred times), or in a real one when given process arguments
    (``cwd``, ``input``...) or ASSAY_TEST_SUBPROCESS=1."""
    env = {"ASSAY_HOME": str(home), "COLUMNS": "160", **(env_extra or {})}
    if kwargs or os.environ.get("ASSAY_TEST_SUBPROCESS"):
        full = {**os.environ, **env}
        full.pop("ASSAY_DATABASE_URL", None)
        return subprocess.run(
            [sys.executable, "-m", "assay", *args],
            capture_output=True,
            text=True,
            env=full,
            check=check,
            timeout=timeout,
            **kwargs,
        )
    return _in_process([str(a) for a in args], env, check)


def _in_process(args: list[str], env: dict[str, str], check: bool) -> subprocess.CompletedProcess[str]:
    import traceback

    from click.testing import CliRunner

    from assay.cli.common import out
    from assay.cli.main import cli

    saved = out._width
    out.width = int(env["COLUMNS"])  # rich reads COLUMNS once, when the console is made at import
    try:
        result = CliRunner().invoke(cli, args, env={**env, "ASSAY_DATABASE_URL": None})
    finally:
        out._width = saved
    code, stderr = result.exit_code, result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # What a process would do with an uncaught exception: its traceback on stderr, exit 1.
        stderr += "".join(traceback.format_exception(result.exception))
        code = 1
    done = subprocess.CompletedProcess(["assay", *args], code, result.stdout, stderr)
    if check:
        done.check_returncode()
    return done


def run_count(home: Path) -> int:
    db = home / "assay.db"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return conn.execute("select count(*) from runs").fetchone()[0]


def write_eval(folder: Path, dataset: str, evaluators: str, extra: str = "") -> Path:
    path = folder / "eval.yaml"
    path.write_text(f"name: t\ndataset:\n  local_uri: {dataset}\n{extra}evaluators:\n{evaluators}", encoding="utf-8")
    return path


@pytest.fixture
def bad_dataset(tmp_path):
    lines = [json.dumps({"query": f"q{i}", "response": "r", "ground_truth": "g"}) for i in range(1, 11)]
    lines[2] = '{"query": "q3", "response": "r" "ground_truth": "g"}'
    lines[6] = json.dumps({"response": "r", "ground_truth": "g"})
    lines[8] = '"just a string"'
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "schema.json").write_text(json.dumps({"type": "object", "required": ["query"]}), encoding="utf-8")
    return path


def test_validate_lists_every_bad_line_and_exits_non_zero(tmp_path, bad_dataset):
    result = assay("dataset", "validate", str(bad_dataset), "--schema", str(tmp_path / "schema.json"), home=tmp_path)
    assert result.returncode == 1
    assert "data.jsonl:3: invalid JSON (Expecting ',' delimiter, column 33)" in result.stdout
    assert "data.jsonl:7: 'query' is required by the item_schema" in result.stdout
    assert "data.jsonl:9: expected a JSON object, got str" in result.stdout


def test_run_on_bad_data_refuses_and_creates_no_run(tmp_path, bad_dataset):
    config = write_eval(
        tmp_path, "data.jsonl", "  - builtin.f1_score\n", extra="item_schema: {type: object, required: [query]}\n"
    )
    result = assay("run", str(config), home=tmp_path)
    assert result.returncode == 2, result.stderr
    for line in ("data.jsonl:3:", "data.jsonl:7: 'query' is required", "data.jsonl:9:"):
        assert line in result.stderr
    assert "Traceback" not in result.stderr
    assert run_count(tmp_path) == 0


def test_config_errors_name_file_and_line(tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps({"response": "a", "ground_truth": "b"}) + "\n", encoding="utf-8")
    config = write_eval(
        tmp_path, "d.jsonl", "  - builtin.f1_score\n  - name: x\n    evaluator_name: builtin.blue_score\n"
    )
    result = assay("run", str(config), home=tmp_path)
    assert result.returncode == 2
    assert "eval.yaml:6: unknown evaluator 'builtin.blue_score'" in result.stderr
    assert "did you mean builtin.bleu_score" in result.stderr
    scalar = write_eval(tmp_path, "d.jsonl", "  - builtin.f1_score\n  - builtin.gleu_scor\n")
    result = assay("run", str(scalar), home=tmp_path)
    assert "eval.yaml:6: unknown evaluator 'builtin.gleu_scor'" in result.stderr
    misspelt = tmp_path / "options.yaml"
    misspelt.write_text(
        "name: e\ndataset: {local_uri: d.jsonl}\noptions:\n  concurency: 4\nevaluators: [builtin.f1_score]\n",
        encoding="utf-8",
    )
    result = assay("run", str(misspelt), home=tmp_path)  # once dropped without a word, its default used
    assert result.returncode == 2 and "options.yaml:4: options: unknown key 'concurency'" in result.stderr
    assert "did you mean 'concurrency'" in result.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n", encoding="utf-8")
    result = assay("run", str(broken), home=tmp_path)
    assert result.returncode == 2 and "broken.yaml:2: not valid YAML" in result.stderr


def test_quickstart_summary_results_and_gate(tmp_path):
    result = assay("run", str(ROOT / "examples/quickstart/eval.yaml"), "--fail-on", "pass-rate=0.01", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "support-answers — completed" in result.stdout and "items: 16 total" in result.stdout
    run_id = result.stdout.split("run id: ")[1].split()[0]
    jsonl = assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()
    assert len(jsonl) == 16 and {r["name"] for r in json.loads(jsonl[0])["results"]} >= {"f1_score", "fuzzy"}
    csv_text = assay("results", run_id, "--format", "csv", home=tmp_path, check=True).stdout
    assert csv_text.splitlines()[0].startswith("datasource_item_id,status,item.query")
    gated = assay("run", str(ROOT / "examples/quickstart/eval.yaml"), "--fail-on", "any-failure", home=tmp_path)
    assert gated.returncode == 1 and "gate missed" in gated.stdout
    listed = assay("runs", "list", home=tmp_path, check=True).stdout
    assert run_id.removeprefix("evalrun_")[:8] in listed and run_id not in listed  # short ids in 80 columns
    assert all(
        len(line) <= 80
        for line in assay("runs", "list", home=tmp_path, env_extra={"COLUMNS": "80"}).stdout.splitlines()
    )
    wide = assay("runs", "list", "--wide", home=tmp_path, check=True).stdout
    assert run_id in wide


def test_evaluators_list_and_show(tmp_path):
    listed = assay("evaluators", "list", home=tmp_path, check=True).stdout
    for name in ("builtin.f1_score", "builtin.document_retrieval", "string_check", "text_similarity"):
        assert name in listed
    shown = json.loads(assay("evaluators", "show", "meteor_score", home=tmp_path, check=True).stdout)
    assert shown["definition"]["metrics"]["meteor"]["threshold"] == 0.5


def big_eval(tmp_path: Path, total: int, llm) -> Path:
    with (tmp_path / "big.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(total):
            handle.write(
                json.dumps(
                    {
                        "response": f"answer number {i} about the shop {i % 97}",
                        "ground_truth": f"the answer is {i} for shop {i % 89}",
                    }
                )
                + "\n"
            )
    judge = f"models:\n  judge: {{model: judge, base_url: '{llm.base_url}', api_key: t, timeout: 600}}\n"
    return write_eval(
        tmp_path,
        "big.jsonl",
        "  - builtin.meteor_score\n  - builtin.bleu_score\n  - builtin.gleu_score\n"
        "  - {name: builtin.fluency, initialization_parameters: {model: judge}}\n",
        judge,
    )


HELD_AFTER = 300
"""The judge answers this many calls, then holds the rest: the run cannot finish before the signal."""


def start_partial_run(tmp_path: Path, config: Path, stop: signal.Signals, llm) -> int:
    """Start ``assay run``, let it store some items, then send ``stop``; returns items stored."""
    llm.reset()
    llm.script(hold_after=HELD_AFTER)
    env = {**os.environ, "ASSAY_HOME": str(tmp_path)}
    env.pop("ASSAY_DATABASE_URL", None)
    with (tmp_path / "run.stderr").open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "assay", "run", str(config), "--concurrency", "4"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and _items(tmp_path) < 200 and process.poll() is None:
                time.sleep(0.2)
            process.send_signal(stop)
            code = process.wait(timeout=60)
        finally:
            if process.poll() is None:  # never leave a run behind to call a provider other tests share
                process.kill()
                process.wait()
    llm.reset()  # the provider answers again for the resume
    told = (tmp_path / "run.stderr").read_text(errors="replace")[-3000:]
    if stop == signal.SIGINT:
        assert code == 130, told
    return _items(tmp_path)


def resume_and_check(tmp_path: Path, config: Path, total: int) -> None:
    with sqlite3.connect(tmp_path / "assay.db") as conn:
        (run_id,) = conn.execute("select id from runs").fetchone()
    resumed = assay("run", str(config), "--resume", run_id, home=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    with sqlite3.connect(tmp_path / "assay.db") as conn:
        ids = [
            row[0] for row in conn.execute("select datasource_item_id from output_items where run_id = ?", (run_id,))
        ]
        results = conn.execute("select count(*) from results where run_id = ?", (run_id,)).fetchone()[0]
        status = conn.execute("select status from runs where id = ?", (run_id,)).fetchone()[0]
    assert sorted(ids) == list(range(total))
    assert results == 4 * total and status == "completed"
    assert f"items: {total} total" in resumed.stdout


def run_status(home: Path) -> str:
    with sqlite3.connect(home / "assay.db") as conn:
        return conn.execute("select status from runs").fetchone()[0]


def test_sigkill_halfway_then_resume_gives_every_item_exactly_once(tmp_path, own_llm):
    total = 1000
    config = big_eval(tmp_path, total, own_llm)
    written = start_partial_run(tmp_path, config, signal.SIGKILL, own_llm)
    assert 0 < written <= HELD_AFTER, f"the kill landed at {written} items; the test needs a partial run"
    assert run_status(tmp_path) == "in_progress"
    resume_and_check(tmp_path, config, total)


def test_ctrl_c_marks_the_run_canceled_and_keeps_what_was_done(tmp_path, own_llm):
    total = 1000
    config = big_eval(tmp_path, total, own_llm)
    written = start_partial_run(tmp_path, config, signal.SIGINT, own_llm)
    assert 0 < written <= HELD_AFTER
    assert run_status(tmp_path) == "canceled"
    resume_and_check(tmp_path, config, total)


def _items(home: Path) -> int:
    try:
        with sqlite3.connect(home / "assay.db", timeout=5) as conn:
            return conn.execute("select count(*) from output_items").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
