"""Repeats: each judge asked K times per item (a seed each, so every answer is cached apart), the
answers reduced by the criterion's reducer, disagreements flagged as flaky, a rerun free."""

from __future__ import annotations

import pytest

from assay.dataset import Dataset
from assay.evaluators import load_catalog
from assay.run import EvalDefinition, finish_run, prepare, start

GOOD, POOR = '{"reason": "good", "score": 5}', '{"reason": "poor", "score": 1}'
ROWS = [{"query": "question 0", "response": "answer 0"}, {"query": "question 1", "response": "answer 1"}]


def criterion(reducer: str | None = None) -> dict:
    entry = {
        "type": "azure_ai_evaluator",
        "name": "relevance",
        "evaluator_name": "builtin.relevance",
        "initialization_parameters": {"model": "judge"},
    }
    return {**entry, "reducer": reducer} if reducer else entry


def script(llm) -> None:
    """Item 0's judge says 5 once, then 1; item 1's always 5."""
    llm.script(
        rules=[
            {"match": "answer 0\\n", "times": 1, "reply": {"content": GOOD}},
            {"match": "answer 0\\n", "reply": {"content": POOR}},
            {"match": "answer 1\\n", "reply": {"content": GOOD}},
        ]
    )


def run(store, models, reducer: str | None = None):
    definition = EvalDefinition("repeats", [criterion(reducer)], repeats=3)
    prepared = prepare(definition, Dataset.from_content(ROWS), load_catalog(), models=models)
    outcome = finish_run(prepared, start(prepared, store), store)
    return outcome, {row.datasource_item_id: row.results[0] for row in store.iter_output_items(outcome.run.id)}


def test_repeats_are_reduced_and_disagreement_is_flagged(store, models, llm):
    script(llm)
    outcome, results = run(store, models)
    noisy, steady = results[0], results[1]
    assert [r["score"] for r in noisy.properties["repeats"]].count(5) == 1 and len(noisy.properties["repeats"]) == 3
    assert noisy.score == pytest.approx(7 / 3) and noisy.passed is False  # the mean is under 3
    assert noisy.properties["flaky"] is True and noisy.properties["spread"] == 4
    assert steady.properties["flaky"] is False and steady.passed is True
    assert outcome.summary.per_testing_criteria_results[0].flaky == 1
    assert noisy.properties["usage"]["calls"] == 3
    calls = llm.stats()["requests"]
    again, _ = run(store, models)  # each repeat's answer is in the cache under its own seed
    assert llm.stats()["requests"] == calls and again.summary.per_model_usage[0].cache_hits == 6


@pytest.mark.parametrize(("reducer", "noisy_passes"), [("pass@k", True), ("pass^k", False), ("majority", False)])
def test_reducers(store, models, llm, reducer, noisy_passes):
    script(llm)
    _, results = run(store, models, reducer)
    assert results[0].passed is noisy_passes and results[1].passed is True
