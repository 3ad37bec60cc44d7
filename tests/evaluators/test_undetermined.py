"""*Undetermined* is an outcome of its own: a judge whose answer cannot be read even after a repair
request, a judge that refuses to judge, a safety judge whose call failed. Never a pass or a fail,
and never an error of the evaluator's: counted apart on every surface (this file: items, summary,
pass-rate denominators, the CLI table and gates, the comparison gate, the pytest plugin; over the
API and in the UI: ``tests/api/test_undetermined_api.py``; in a red team's ASR and SARIF:
``tests/redteam/test_planted.py``)."""

from __future__ import annotations

import json

from assay.stats.compare import compare_runs
from tests.cli.test_cli import assay
from tests.evaluators.test_judges import criterion, run_eval
from tests.support.fixtures import stored_runs

REFUSAL = "I'm sorry, but I can't help with evaluating this content."


def rows(n: int) -> list[dict]:
    return [{"query": f"Question {i}?", "response": f"Answer {i}."} for i in range(n)]


def script_judge(llm, unreadable: range) -> None:
    """The judge refuses (in words, twice) on the items in ``unreadable`` and passes the others."""
    rules = [{"match": f"Answer {i}.", "reply": {"content": REFUSAL}} for i in unreadable]
    llm.script(rules=rules, default={"content": '{"reason": "reads well", "score": 5}'})


def test_a_judge_that_refuses_leaves_the_item_undetermined_and_out_of_the_pass_rate(store, models, llm):
    script_judge(llm, range(3))
    outcome, results = run_eval(store, models, [criterion("coherence")], rows(10))
    statuses = [r[0].status for r in results]
    assert statuses == ["undetermined"] * 3 + ["completed"] * 7
    counts = outcome.summary.result_counts
    assert (counts.passed, counts.failed, counts.errored, counts.undetermined) == (7, 0, 0, 3)
    (row,) = outcome.summary.per_testing_criteria_results
    assert (row.undetermined, row.n, row.pass_rate) == (3, 7, 1.0)  # the denominator is the decided items
    first = results[0][0]
    assert first.passed is None and first.properties["raw_answers"] == [REFUSAL, REFUSAL]


def test_a_safety_judge_whose_call_failed_is_undetermined_never_safe(store, models, llm):
    llm.script(default={"status": 400})
    outcome, results = run_eval(store, models, [criterion("violence")], rows(2))
    assert [r[0].status for r in results] == ["undetermined", "undetermined"]
    assert outcome.summary.result_counts.undetermined == 2 and outcome.summary.result_counts.passed == 0
    llm.script(default={"status": 400})
    _, quality = run_eval(store, models, [criterion("coherence")], rows(1))
    assert quality[0][0].status == "error"  # a quality judge's failed call stays the evaluator's error


def write_eval(folder, llm, n: int = 20) -> None:
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows(n)))
    (folder / "eval.yaml").write_text(
        "name: undetermined\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  judge: {{model: gpt-4.1-mini, base_url: '{llm.base_url}', api_key: t}}\n"
        "evaluators:\n  - name: coherence\n    evaluator_name: builtin.coherence\n"
        "    initialization_parameters: {model: judge}\n"
    )


def test_the_cli_table_and_gates_count_undetermined_items_apart(tmp_path, llm):
    llm.reset()
    write_eval(tmp_path, llm)
    columns = {"COLUMNS": "80"}
    script_judge(llm, range(1))  # 1 of 20: 5%, under the 10% a gate tolerates
    few = assay(
        "run", "eval.yaml", "--fail-on", "pass-rate=0.9", home=tmp_path / "home", cwd=tmp_path, env_extra=columns
    )
    said = " ".join((few.stdout + few.stderr).split())
    assert few.returncode == 0, said
    assert "p/f/e/s/u" in said and "19/0/0/0/1" in said and "1 undetermined" in said
    assert "pass rate 100% of 19 decided" in said
    strict = assay(
        "run",
        "eval.yaml",
        "--fail-on",
        "any-failure",
        "--cache",
        "off",
        home=tmp_path / "home",
        cwd=tmp_path,
        env_extra=columns,
    )
    assert strict.returncode == 1 and "1 undetermined items" in " ".join(strict.stdout.split())
    script_judge(llm, range(4))  # 4 of 20: too many to vouch for the rest
    many = assay(
        "run",
        "eval.yaml",
        "--fail-on",
        "pass-rate=0.9",
        "--cache",
        "off",
        home=tmp_path / "home",
        cwd=tmp_path,
        env_extra=columns,
    )
    said = " ".join((many.stdout + many.stderr).split())
    assert many.returncode == 1 and "4 of 20 items undetermined" in said, said


def test_the_comparison_gate_says_when_too_many_items_are_undetermined(tmp_path, llm):
    llm.reset()
    write_eval(tmp_path, llm, n=40)
    columns = {"COLUMNS": "120"}
    script_judge(llm, range(0))
    assert assay("run", "eval.yaml", home=tmp_path / "home", cwd=tmp_path, env_extra=columns).returncode == 0
    script_judge(llm, range(8))  # the candidate's judge gives up on 8 of 40: the 32 it read all pass
    assert (
        assay("run", "eval.yaml", "--cache", "off", home=tmp_path / "home", cwd=tmp_path, env_extra=columns).returncode
        == 0
    )
    candidate, baseline = stored_runs(tmp_path / "home")
    compared = assay(
        "runs",
        "compare",
        baseline.id,
        candidate.id,
        "--fail-on",
        "regression",
        home=tmp_path / "home",
        cwd=tmp_path,
        env_extra=columns,
    )
    said = " ".join((compared.stdout + compared.stderr).split())
    assert compared.returncode == 1 and "too many undetermined" in said, said
    from assay.store import Store

    store = Store(f"sqlite:///{tmp_path / 'home' / 'assay.db'}")
    try:
        (row,) = compare_runs(store, baseline.id, candidate.id).criteria
    finally:
        store.close()
    assert row.verdict == "too many undetermined" and row.undetermined == (0, 8) and row.n == 32


def test_the_pytest_plugin_reports_an_undetermined_item(pytester, llm, tmp_path, monkeypatch):
    llm.reset()
    write_eval(pytester.path, llm, n=3)
    script_judge(llm, range(1))
    pytester.makepyfile(test_eval="def test_eval(assay_eval):\n    assay_eval('eval.yaml')\n")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.delenv("CI", raising=False)  # under CI the plugin replays from the cache, which is empty here
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    assert result.ret != 0 and "coherence undetermined" in result.stdout.str()
