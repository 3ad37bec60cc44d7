"""Runs that generate responses with a model target first (``completions``, ``azure_ai_target_completions``)."""

from __future__ import annotations

import openai
import pytest

from tests.api.conftest import wait_for

SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}, "ground_truth": {"type": "string"}}}
QUESTIONS = [
    {"query": "Capital of France?", "ground_truth": "Paris"},
    {"query": "Capital of Japan?", "ground_truth": "Tokyo"},
    {"query": "Capital of Mars?", "ground_truth": "none"},
]
INPUT = {
    "type": "template",
    "template": [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "{{item.query}}"}],
}
CRITERIA = [
    {
        "type": "azure_ai_evaluator",
        "name": "coherence",
        "evaluator_name": "builtin.coherence",
        "initialization_parameters": {"deployment_name": "judge"},
        "data_mapping": {"query": "{{item.query}}", "response": "{{sample.output_text}}"},
    },
    {"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"},
]


def script(llm):
    llm.script(
        rules=[
            {"match": "# Property:", "reply": {"content": '{"reason": "clear", "score": 4}'}},
            {"match": "Capital of France", "reply": {"content": "Paris"}},
            {"match": "Capital of Japan", "reply": {"content": "Tokyo"}},
            {"match": "Capital of Mars", "reply": {"status": 400}},
        ]
    )


@pytest.mark.parametrize("kind", ["completions", "azure_ai_target_completions"])
def test_model_target_generates_then_judges(served, llm, kind):
    script(llm)
    client = served.client()
    created = client.evals.create(
        name="targets",
        data_source_config={"type": "custom", "item_schema": SCHEMA, "include_sample_schema": True},
        testing_criteria=CRITERIA,
    )
    source = {"type": "file_content", "content": [{"item": q} for q in QUESTIONS]}
    if kind == "completions":
        data_source = {
            "type": "completions",
            "source": source,
            "input_messages": INPUT,
            "model": "judge",
            "sampling_params": {"temperature": 0.2, "max_completion_tokens": 50},
        }
    else:
        data_source = {
            "type": "azure_ai_target_completions",
            "source": source,
            "input_messages": INPUT,
            "target": {"type": "azure_ai_model", "model": "judge", "sampling_params": {"temperature": 0.2}},
        }
    run = wait_for(client, created.id, client.evals.runs.create(eval_id=created.id, data_source=data_source).id)
    assert run.status == "completed", run.error
    assert (run.result_counts.passed, run.result_counts.errored) == (2, 1)
    items = {i.datasource_item_id: i for i in client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)}
    paris = items[0]
    assert paris.datasource_item["sample.output_text"] == "Paris"
    assert paris.sample.output[0].content == "Paris" and paris.sample.input[1].content == "Capital of France?"
    assert paris.sample.usage.total_tokens > 0
    assert {r.name: r.passed for r in paris.results} == {"coherence": True, "f1": True}
    usage = {u.model_name: u for u in run.per_model_usage}
    assert usage["gpt-4.1-mini"].invocation_count == 2 + 2  # two answered target calls, two judge calls
    mars = items[2]
    assert mars.status == "error" and mars.sample.error.message.startswith("model 'judge': 400")
    assert all("the target failed" in r.model_extra["reason"] for r in mars.results)


def test_target_runs_refuse_unknown_sampling_params_and_agents(served):
    client = served.client()
    config = {"type": "custom", "item_schema": SCHEMA, "include_sample_schema": True}
    created = client.evals.create(name="t", data_source_config=config, testing_criteria=CRITERIA[1:])
    source = {"type": "file_content", "content": [{"item": QUESTIONS[0]}]}
    with pytest.raises(openai.BadRequestError, match="unknown key 'temprature'"):
        client.evals.runs.create(
            eval_id=created.id,
            data_source={
                "type": "completions",
                "source": source,
                "model": "judge",
                "sampling_params": {"temprature": 1},
            },
        )
    with pytest.raises(openai.BadRequestError, match="agent bot is not configured"):
        client.evals.runs.create(
            eval_id=created.id,
            data_source={
                "type": "azure_ai_target_completions",
                "source": source,
                "target": {"type": "azure_ai_agent", "name": "bot"},
            },
        )
