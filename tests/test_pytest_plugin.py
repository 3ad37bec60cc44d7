"""``assay_eval``: an eval as a pytest test, items as subtests, the gate deciding, replay in CI."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TESTS = """
def test_gate_holds(assay_eval):
    result = assay_eval("eval.yaml", fail_on="pass-rate=0.3")
    assert result.criteria == ["f1_score", "bleu", "meteor_score", "rougeL", "fuzzy"]
    assert result.pass_rate("f1_score") == 0.75

def test_gate_missed(assay_eval):
    assay_eval("eval.yaml", fail_on="pass-rate=0.9", limit=4)

def test_every_item_must_pass(assay_eval):
    assay_eval("eval.yaml", limit=4)
"""


def test_an_eval_runs_as_a_test_with_items_as_subtests(pytester, monkeypatch, tmp_path):
    for name in ("eval.yaml", "support_qa.jsonl"):
        shutil.copy(ROOT / "examples" / "quickstart" / name, pytester.path / name)
    pytester.makepyfile(test_evals=TESTS)
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("COLUMNS", "400")  # the short summary at full length
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-rA", "-o", "verbosity_subtests=1")
    text = result.stdout.str()
    assert result.ret == 1
    assert "PASSED test_evals.py::test_gate_holds" in text
    # The gate's own words, not a traceback; the items it tolerated are listed as expected failures.
    assert "FAILED test_evals.py::test_gate_missed - Failed: eval.yaml: pass rate 75.0% is below 90.0%" in text
    assert "SUBXFAIL test_evals.py::test_gate_holds - item 3: f1_score failed (score 0 against 0.5)" in text
    assert "SUBFAILED test_evals.py::test_every_item_must_pass - Failed: item 3: f1_score failed" in text
    assert "FAILED test_evals.py::test_every_item_must_pass - contains 1 failed subtest" in text


def test_in_ci_the_cache_replays_and_a_missing_call_fails_its_item(pytester, monkeypatch, tmp_path, llm):
    (pytester.path / "data.jsonl").write_text('{"query": "hi", "response": "hello"}\n', encoding="utf-8")
    (pytester.path / "eval.yaml").write_text(
        f"name: judged\ndataset: {{local_uri: data.jsonl}}\nmodels:\n  judge: {{model: m, base_url: '{llm.base_url}'}}\n"
        "options: {eval_model: judge}\nevaluators: [builtin.relevance]\n",
        encoding="utf-8",
    )
    pytester.makepyfile(test_judged="def test_judged(assay_eval):\n    assay_eval('eval.yaml')\n")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    llm.script(default={"content": '{"reason": "on topic", "score": 5}'})
    monkeypatch.setenv("CI", "true")
    before = llm.stats()["requests"]
    replayed = pytester.runpytest_subprocess("-p", "no:randomly", "-rA")
    assert replayed.ret == 1
    assert "item 0: relevance errored: model 'judge': no cached answer for this call" in replayed.stdout.str()
    assert llm.stats()["requests"] == before  # replay calls nothing
    filled = pytester.runpytest_subprocess("-p", "no:randomly", "--assay-cache", "use")
    assert filled.parseoutcomes()["passed"] == 1
    again = pytester.runpytest_subprocess("-p", "no:randomly")  # CI again: now the cache holds the call
    assert again.parseoutcomes()["passed"] == 1
