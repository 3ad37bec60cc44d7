"""Seed 004's conversation-level snippet through the openai SDK: an item schema of ``messages`` and
``tool_definitions``; customer_satisfaction, task_completion, coherence and groundedness mapped from
``{{item.messages}}`` only; a run with ``evaluation_level: conversation``. Every criterion is scored
on every conversation; groundedness judges against what the conversation itself holds."""

from __future__ import annotations

import io
import json
from pathlib import Path

import openai
import pytest

from assay.evaluators.judges import DEFINITIONS
from tests.api.conftest import wait_for
from tests.evaluators.test_judges import reply_for

ROWS = Path(__file__).parents[1] / "fixtures" / "seed_multiturn_conversations.jsonl"
SCHEMA = {
    "type": "object",
    "properties": {"messages": {"type": "array"}, "tool_definitions": {"type": "array"}},
    "required": ["messages"],
}
JUDGED = {
    "customer_satisfaction": "customer_satisfaction",
    "task_completion": "task_completion",
    "conversation_coherence": "coherence",
    "groundedness": "groundedness",
}


def criterion(name: str, evaluator: str) -> dict:
    return {
        "type": "azure_ai_evaluator",
        "name": name,
        "evaluator_name": f"builtin.{evaluator}",
        "initialization_parameters": {"model": "judge"},
        "data_mapping": {"messages": "{{item.messages}}"},
    }


def judge_rules() -> list[dict]:
    """The scripted provider's answers: each judge of the snippet passes."""
    by_name = {d.name: d for d in DEFINITIONS}
    return [
        {"match": f"# Property: {judge.replace('_', ' ')}\\n", "reply": {"content": reply_for(by_name[judge])}}
        for judge in JUDGED.values()
    ]


def run_seed_snippet(client, data_id: str) -> None:
    """The snippet's eval and conversation-level run on ``data_id``; every criterion scored on every row."""
    eval_object = client.evals.create(
        name="Multi-turn Conversation Evaluation",
        data_source_config={"type": "custom", "item_schema": SCHEMA, "include_sample_schema": False},
        testing_criteria=[criterion(name, evaluator) for name, evaluator in JUDGED.items()],
    )
    run = client.evals.runs.create(
        eval_id=eval_object.id,
        name="multiturn-conversation-run",
        data_source={"type": "jsonl", "source": {"type": "file_id", "id": data_id}},
        extra_body={"evaluation_level": "conversation"},
    )
    run = wait_for(client, eval_object.id, run.id)
    assert run.status == "completed", run.error
    rows = ROWS.read_text().splitlines()
    assert run.result_counts.total == len(rows) == 10 and run.result_counts.errored == 0
    items = list(client.evals.runs.output_items.list(run_id=run.id, eval_id=eval_object.id, limit=100))
    for item in items:
        scored = {r.name: r for r in item.results}
        assert set(scored) == set(JUDGED)
        assert all(r.model_extra["status"] == "completed" and r.passed for r in scored.values()), scored


def test_the_seed_conversation_snippet_scores_every_criterion(served, llm):
    llm.script(rules=judge_rules())
    client = served.client()
    data_id = client.files.create(file=(ROWS.name, io.BytesIO(ROWS.read_bytes())), purpose="evals").id
    run_seed_snippet(client, data_id)


def test_an_evaluator_that_needs_more_than_messages_is_refused_with_the_reason(served):
    client = served.client()
    f1 = {
        "type": "azure_ai_evaluator",
        "name": "f1",
        "evaluator_name": "builtin.f1_score",
        "data_mapping": {"messages": "{{item.messages}}"},
    }
    with pytest.raises(openai.BadRequestError, match="needs input 'ground_truth', which a conversation does not hold"):
        client.evals.create(data_source_config={"type": "custom", "item_schema": SCHEMA}, testing_criteria=[f1])


def test_at_turn_level_groundedness_takes_its_context_from_the_conversation(served, llm):
    llm.script(rules=[{"match": "# Property: groundedness\\n", "reply": {"content": '{"reason": "ok", "score": 5}'}}])
    client = served.client()
    row = json.loads(ROWS.read_text().splitlines()[3])  # the account-balance conversation, with a tool result
    eval_object = client.evals.create(
        data_source_config={"type": "custom", "item_schema": SCHEMA},
        testing_criteria=[criterion("groundedness", "groundedness")],
    )
    run = client.evals.runs.create(
        eval_id=eval_object.id,
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": row}]}},
    )
    run = wait_for(client, eval_object.id, run.id)
    assert run.status == "completed" and run.result_counts.passed == 1
    prompt = llm.stats()["last"]["messages"][-1]["content"]
    assert "CONTEXT:" in prompt and "1234.56" in prompt.split("CONTEXT:")[1]
