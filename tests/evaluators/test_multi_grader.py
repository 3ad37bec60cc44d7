"""The multi grader: its formula language (arithmetic on grader names only) and its scores."""

from __future__ import annotations

import math

import pytest
from rapidfuzz import fuzz

from assay.errors import ConfigError, ItemError
from assay.evaluators.graders.formula import Formula
from tests.evaluators.test_judges import run_eval

NAMES = {"a", "b"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.5 * a + 0.5 * b", 0.5 * 0.2 + 0.5 * 0.8),
        ("a ^ 2 + b ** 2", 0.2**2 + 0.8**2),
        ("-a + (b - a) / 2", -0.2 + 0.3),
        ("min(a, b) + max(a, b, 0.9)", 0.2 + 0.9),
        (
            "abs(a - b) + floor(b * 10) + ceil(a) + sqrt(b) + exp(a) + log(b)",
            0.6 + 8 + 1 + math.sqrt(0.8) + math.exp(0.2) + math.log(0.8),
        ),
        ("3", 3.0),
    ],
)
def test_formulas_compute_arithmetic(text, expected):
    assert Formula.parse(text, NAMES).evaluate({"a": 0.2, "b": 0.8}) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("__import__('os').system('id')", "only min, max"),
        ("a.__class__", "not allowed"),
        ("c + a", "'c' is not one of the graders"),
        ("a if b else 1", "not allowed"),
        ("[a, b]", "not allowed"),
        ("'text'", "is not a number"),
        ("a % b", "not arithmetic"),
        ("a << 2", "not arithmetic"),
        ("not a", "not arithmetic"),
        ("a < b", "not allowed"),
        ("lambda: 1", "not allowed"),
        ("max(a, key=b)", "only min, max"),
        ("min", "'min' is not one of the graders"),
        ("a +", "not a formula"),
        ("", "expected a formula"),
        ("a" * 3000, "at most 2000"),
        ("True + a", "is not a number"),
    ],
)
def test_anything_but_arithmetic_on_grader_names_is_refused(text, message):
    with pytest.raises(ConfigError, match=message):
        Formula.parse(text, NAMES)


@pytest.mark.parametrize("text", ["a / (b - b)", "sqrt(-1)", "log(a - a)", "10 ^ 5000", "exp(1000)"])
def test_a_formula_that_fails_on_an_item_is_that_items_error(text):
    with pytest.raises(ItemError, match="calculate_output"):
        Formula.parse(text, NAMES).evaluate({"a": 0.5, "b": 0.5})


ROWS = [
    {"output": "Paris", "expected": "Paris"},
    {"output": "paris, france", "expected": "Paris"},
    {"output": "Lyon", "expected": "Paris"},
]
MULTI = {
    "type": "multi",
    "name": "combined",
    "pass_threshold": 0.5,
    "graders": {
        "exact": {
            "type": "string_check",
            "input": "{{item.output}}",
            "reference": "{{item.expected}}",
            "operation": "eq",
        },
        "similar": {
            "type": "text_similarity",
            "input": "{{item.output}}",
            "reference": "{{item.expected}}",
            "evaluation_metric": "fuzzy_match",
            "pass_threshold": 0.5,
        },
    },
    "calculate_output": "0.7 * exact + 0.3 * similar",
}


def test_the_multi_grader_scores_each_item_by_its_formula(models, store):
    _, results = run_eval(store, models, [MULTI], ROWS)
    for row, (result,) in zip(ROWS, results, strict=True):
        exact = float(row["output"] == row["expected"])
        similar = fuzz.ratio(row["output"], row["expected"]) / 100
        assert result.score == pytest.approx(0.7 * exact + 0.3 * similar)
        assert result.passed is (result.score >= 0.5)
        assert result.properties["graders"] == pytest.approx({"exact": exact, "similar": similar})
    assert [r[0].passed for r in results] == [True, False, False]


def test_a_sub_grader_needs_no_pass_threshold_and_no_pass_mark_is_no_verdict(models, store):
    """OpenAI's grader types inside ``multi`` have no pass_threshold (a top-level text_similarity
    does); a multi grader without one of its own scores items but passes none of them: its pass
    rate is "no pass mark", not 100% (a score of 0.0 once passed too)."""
    similar = {k: v for k, v in MULTI["graders"]["similar"].items() if k != "pass_threshold"}
    unmarked = {k: v for k, v in MULTI.items() if k != "pass_threshold"}
    outcome, results = run_eval(
        store, models, [{**unmarked, "graders": {**MULTI["graders"], "similar": similar}}], ROWS
    )
    assert [r[0].status for r in results] == ["completed"] * 3 and {r[0].passed for r in results} == {None}
    assert results[2][0].score == pytest.approx(0.3 * fuzz.ratio("Lyon", "Paris") / 100)
    (row,) = outcome.summary.per_testing_criteria_results
    assert (row.passed, row.failed, row.pass_rate, row.n) == (0, 0, None, 0) and row.mean_score is not None
    with pytest.raises(ConfigError, match="text_similarity needs a numeric pass_threshold"):
        run_eval(store, models, [{**similar, "name": "alone"}], ROWS)


def test_a_sub_grader_that_cannot_score_fails_that_item_only(models, store):
    graders = {**MULTI["graders"], "exact": {**MULTI["graders"]["exact"], "input": "{{item.maybe}}"}}
    rows = [{**ROWS[0], "maybe": "Paris"}, ROWS[1]]
    _, results = run_eval(store, models, [{**MULTI, "graders": graders}], rows)
    assert results[0][0].status == "completed" and results[0][0].score == pytest.approx(1.0)
    assert results[1][0].status == "error" and "grader 'exact' gave no score" in results[1][0].reason


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"calculate_output": "exact.real"}, "not allowed in a formula"),
        ({"calculate_output": "open('/etc/passwd')"}, "only min, max"),
        ({"graders": {"inner": {**MULTI, "name": "inner"}}}, "cannot contain another multi grader"),
        ({"graders": {"exact": {"type": "string_check", "input": "{{item.output}}"}}}, "needs both 'input' and"),
        ({"graders": []}, "needs 'graders'"),
        ({"pass_threshold": "high"}, "threshold must be a number"),
    ],
)
def test_bad_multi_graders_are_refused_before_the_run(models, store, change, message):
    with pytest.raises(ConfigError, match=message):
        run_eval(store, models, [{**MULTI, **change}], ROWS)
