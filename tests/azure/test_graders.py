"""azure-ai-evaluation's grader wrappers: ``evaluate()`` runs each as the OpenAI grader it wraps and
writes the columns and pass rates the peer writes from an Evals API (as it does when that API is
``assay serve``: bench/azure_graders.py runs the peer there and compares)."""

from __future__ import annotations

import json

import pytest

from assay.azure import (
    AzureOpenAILabelGrader,
    AzureOpenAIStringCheckGrader,
    AzureOpenAITextSimilarityGrader,
    EvaluationException,
    evaluate,
)

ROWS = [{"query": "What is the refund window?", "response": "30 days"}, {"query": "Hi", "response": "hello"}]


def test_graders_run_inside_evaluate_with_the_peers_columns(tmp_path, llm):
    llm.reset()
    llm.script(
        rules=[{"match": "30 days", "reply": {"content": '{"label": "answered"}'}}],
        default={"content": '{"label": "other"}'},
    )
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    config = {"type": "openai", "model": "judge", "base_url": llm.base_url, "api_key": "t"}
    evaluators = {
        "question": AzureOpenAIStringCheckGrader(
            model_config=config, input="{{item.query}}", name="asks", operation="like", reference="?"
        ),
        "close": AzureOpenAITextSimilarityGrader(
            model_config=config,
            input="{{item.response}}",
            reference="30 days",
            evaluation_metric="fuzzy_match",
            pass_threshold=0.9,
            name="close",
        ),
        "kind": AzureOpenAILabelGrader(
            model_config=config,
            input=[{"role": "user", "content": "Classify: {{item.response}}"}],
            labels=["answered", "other"],
            passing_labels=["answered"],
            model="judge",
            name="kind",
        ),
    }
    result = evaluate(data=str(data), evaluators=evaluators)
    first, second = result["rows"]
    assert (first["outputs.question.question_result"], second["outputs.question.question_result"]) == ("pass", "fail")
    assert first["outputs.question.type"] == "string_check" and first["outputs.question.sample"] is None
    assert first["outputs.close.score"] == 1.0 and second["outputs.close.passed"] is False
    assert (first["outputs.kind.passed"], second["outputs.kind.passed"]) == (True, False)
    assert result["metrics"] == {"close.pass_rate": 0.5, "kind.pass_rate": 0.5, "question.pass_rate": 0.5}


def test_a_bad_grader_is_refused_in_its_constructor():
    config = {"type": "openai", "model": "m", "api_key": "t"}
    with pytest.raises(EvaluationException, match="operation"):
        AzureOpenAIStringCheckGrader(
            model_config=config, input="{{item.a}}", name="x", operation="like?", reference="b"
        )


def test_groundedness_pro_is_judged_locally_with_the_peers_keys(llm):
    from assay.azure import GroundednessProEvaluator

    llm.reset()
    llm.script(default={"content": '{"reason": "supported by the context", "score": 5}'})
    config = {"type": "openai", "model": "judge", "base_url": llm.base_url, "api_key": "t"}
    project = {"subscription_id": "s", "resource_group_name": "r", "project_name": "p"}
    with pytest.warns(UserWarning):
        evaluator = GroundednessProEvaluator(credential=None, azure_ai_project=project, model_config=config)
    found = evaluator(query="Refund window?", response="30 days.", context="Refunds within 30 days.")
    assert found == {
        "groundedness_pro_reason": "supported by the context",
        "groundedness_pro_label": True,
        "groundedness_pro_score": 5.0,
    }
