"""Every criterion's aggregate carries its n and 95% intervals: Wilson for the pass rate, t for the
mean score, on both databases and through the API's run object."""

from __future__ import annotations

import pytest

from assay.api.wire import run_object
from assay.dataset import Dataset
from assay.evaluators import load_catalog
from assay.run import EvalDefinition, finish_run, prepare, start
from assay.stats.core import t_interval, wilson

EXACT = {
    "type": "string_check",
    "name": "exact",
    "input": "{{item.response}}",
    "reference": "{{item.ground_truth}}",
    "operation": "eq",
}
FUZZY = {
    "type": "text_similarity",
    "name": "fuzzy",
    "input": "{{item.response}}",
    "reference": "{{item.ground_truth}}",
    "evaluation_metric": "fuzzy_match",
    "pass_threshold": 0.5,
}


def test_pass_rates_and_means_carry_intervals(store):
    rows = [{"response": "Paris" if i < 40 else "Lyon", "ground_truth": "Paris"} for i in range(50)]
    prepared = prepare(EvalDefinition("ci", [EXACT, FUZZY]), Dataset.from_content(rows), load_catalog())
    outcome = finish_run(prepared, start(prepared, store), store)
    exact = next(c for c in outcome.summary.per_testing_criteria_results if c.testing_criteria == "exact")
    assert exact.n == 50 and exact.pass_rate == 0.8
    assert exact.pass_rate_ci == pytest.approx([0.670, 0.888], abs=5e-4)  # Wilson at p̂ = 0.8, n = 50
    fuzzy = next(c for c in outcome.summary.per_testing_criteria_results if c.testing_criteria == "fuzzy")
    scores = [r.results[1].score for r in store.iter_output_items(outcome.run.id)]
    assert fuzzy.mean_score_ci == pytest.approx(list(t_interval(scores)), abs=1e-9)
    wire = run_object(outcome.run, [EXACT, FUZZY], "http://x")
    (exact_row,) = [r for r in wire["per_testing_criteria_results"] if r["name"] == "exact"]
    assert exact_row["pass_rate_ci"] == pytest.approx([0.670, 0.888], abs=5e-4)


def test_cluster_by_widens_the_intervals_of_items_that_share_a_document(store):
    rows = [
        {"doc": f"d{i // 5}", "response": "Paris" if i < 40 else "Lyon", "ground_truth": "Paris"} for i in range(50)
    ]
    definition = EvalDefinition("clustered", [EXACT, FUZZY], cluster_by="doc")
    prepared = prepare(definition, Dataset.from_content(rows), load_catalog())
    run = start(prepared, store)
    assert run.options.cluster_by == "doc"
    outcome = finish_run(prepared, run, store)
    exact = next(c for c in outcome.summary.per_testing_criteria_results if c.testing_criteria == "exact")
    assert exact.n == 50 and exact.clusters == 10
    assert exact.pass_rate_ci == pytest.approx(list(wilson(7.2, 9)))  # 8 whole documents right, 2 wrong
    wire = run_object(outcome.run, [EXACT, FUZZY], "http://x")
    (exact_row,) = [r for r in wire["per_testing_criteria_results"] if r["name"] == "exact"]
    assert exact_row["clusters"] == 10


def test_cluster_by_in_eval_yaml(tmp_path):
    from assay.config.evalyaml import load_eval_config
    from assay.errors import ConfigError

    (tmp_path / "d.jsonl").write_text('{"doc": "a", "response": "x", "ground_truth": "x"}\n', encoding="utf-8")
    path = tmp_path / "eval.yaml"
    path.write_text("name: c\ndataset: d.jsonl\ncluster_by: doc\nevaluators: [builtin.f1_score]\n", encoding="utf-8")
    assert load_eval_config(path).definition.cluster_by == "doc"
    path.write_text("name: c\ndataset: d.jsonl\ncluster_by: 3\nevaluators: [builtin.f1_score]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"eval.yaml:\d+: cluster_by: name the item field"):
        load_eval_config(path)


def test_a_mean_interval_stays_on_its_scale(store):
    # 39 of 40 pass a 0/1 check: the t interval of the mean reaches past 1, which no mean can.
    rows = [{"response": "Paris" if i else "Lyon", "ground_truth": "Paris"} for i in range(40)]
    criteria = [
        {
            "type": "string_check",
            "name": "exact",
            "input": "{{item.response}}",
            "reference": "{{item.ground_truth}}",
            "operation": "eq",
        }
    ]
    prepared = prepare(EvalDefinition("bounded", criteria), Dataset.from_content(rows), load_catalog())
    outcome = finish_run(prepared, start(prepared, store), store)
    (exact,) = outcome.summary.per_testing_criteria_results
    unbounded = t_interval([1.0] * 39 + [0.0])
    assert unbounded is not None and unbounded[1] > 1.0
    assert exact.mean_score == pytest.approx(0.975) and exact.mean_score_ci == [pytest.approx(unbounded[0]), 1.0]
