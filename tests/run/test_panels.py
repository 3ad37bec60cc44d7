"""Judge panels: each model of ``models: [...]`` judges on its own; the panel passes on a strict
majority of the members that answered, and a member whose answer cannot be used abstains."""

from __future__ import annotations

import pytest

from assay.dataset import Dataset
from assay.errors import ConfigError
from assay.evaluators import load_catalog
from assay.llm import ModelConfig, ModelRegistry
from assay.run import EvalDefinition, finish_run, prepare, start


def panel_models(llm, store) -> ModelRegistry:
    """Three judges on the scripted server; the rules hand out answers in turn, so which member gets
    which is arbitrary but what the panel got, as a whole, is fixed."""
    return ModelRegistry(
        [ModelConfig(name=n, model=n, base_url=llm.base_url, api_key="t") for n in ("a", "b", "c")], cache=store
    )


def criterion(**extra):
    return {
        "type": "azure_ai_evaluator",
        "name": "relevance",
        "evaluator_name": "builtin.relevance",
        "models": ["a", "b", "c"],
        **extra,
    }


def run(store, models, rows):
    prepared = prepare(
        EvalDefinition("panel", [criterion()]), Dataset.from_content(rows), load_catalog(), models=models
    )
    outcome = finish_run(prepared, start(prepared, store), store)
    return {row.datasource_item_id: row.results[0] for row in store.iter_output_items(outcome.run.id)}


def test_a_strict_majority_of_the_members_that_answered(store, llm):
    # Item 0: two say 5, one 1 → pass. Item 1: one 5, one 1, one unusable twice → 1 of 2 is no majority.
    llm.script(
        rules=[
            {"match": "answer 0\\n", "times": 2, "reply": {"content": '{"reason": "good", "score": 5}'}},
            {"match": "answer 0\\n", "reply": {"content": '{"reason": "poor", "score": 1}'}},
            {"match": "answer 1\\n", "times": 1, "reply": {"content": '{"reason": "good", "score": 5}'}},
            {"match": "answer 1\\n", "times": 1, "reply": {"content": '{"reason": "poor", "score": 1}'}},
            {"match": "answer 1\\n", "reply": {"content": "I would rather not say."}},
        ]
    )
    results = run(
        store,
        panel_models(llm, store),
        [{"query": "q0", "response": "answer 0"}, {"query": "q1", "response": "answer 1"}],
    )
    assert results[0].passed is True and results[0].reason == "2 of 3 judges passed it"
    assert results[0].score == pytest.approx(11 / 3)
    assert results[1].passed is False and results[1].properties["abstained"] == 1
    assert results[1].reason == "1 of 2 judges passed it (1 abstained)"
    assert sorted(v["model"] for v in results[1].properties["panel"]) == ["a", "b", "c"]


def test_a_panel_needs_two_models_and_a_judge(store, llm):
    models = panel_models(llm, store)
    with pytest.raises(ConfigError, match="two or more model names"):
        prepare(
            EvalDefinition("p", [criterion(models=["a"])]),
            Dataset.from_content([{"query": "q", "response": "r"}]),
            load_catalog(),
            models=models,
        )
    f1 = {"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score", "models": ["a", "b"]}
    with pytest.raises(ConfigError, match="uses no model"):
        prepare(
            EvalDefinition("p", [f1]),
            Dataset.from_content([{"response": "r", "ground_truth": "g"}]),
            load_catalog(),
            models=models,
        )
