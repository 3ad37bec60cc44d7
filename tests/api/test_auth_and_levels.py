"""API keys and projects, and conversation-level judging through the SDK."""

from __future__ import annotations

import openai
import pytest

from tests.api.conftest import wait_for
from tests.api.test_evals_api import CRITERIA, ROWS, make_eval


def test_keys_scope_every_object_to_a_project(served):
    alpha, beta = served.store.create_key("alpha"), served.store.create_key("beta")
    a, b = served.client(alpha), served.client(beta)
    created = make_eval(a)
    run = a.evals.runs.create(
        eval_id=created.id,
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in ROWS]}},
    )
    assert wait_for(a, created.id, run.id).status == "completed"
    with pytest.raises(openai.NotFoundError, match="No eval found"):
        b.evals.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        b.evals.runs.retrieve(run_id=run.id, eval_id=created.id)
    assert created.id not in {e.id for e in b.evals.list()}
    with pytest.raises(openai.AuthenticationError, match="Incorrect API key"):
        served.client("assay-wrong").evals.list()
    with pytest.raises(openai.PermissionDeniedError, match="another project"):
        served.client(alpha, prefix="/api/projects/beta/openai/v1").evals.list()
    assert served.client(alpha, prefix="/api/projects/alpha/openai/v1").evals.retrieve(created.id).id == created.id


def test_api_key_header_is_accepted_and_a_missing_key_refused(served):
    import json
    import urllib.error
    import urllib.request

    key = served.store.create_key("alpha")
    with urllib.request.urlopen(urllib.request.Request(f"{served.url}/v1/evals", headers={"api-key": key})) as ok:
        assert ok.status == 200
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{served.url}/v1/evals")
    assert refused.value.code == 401 and "Missing API key" in json.loads(refused.value.read())["error"]["message"]


def test_conversation_level_run_with_messages_rows(served, llm):
    llm.script(default={"content": '{"reason": "the agent stayed coherent", "score": 4}'})
    client = served.client()
    conversation = [
        {"role": "user", "content": "I can't sign in."},
        {"role": "assistant", "content": "What error?"},
        {"role": "user", "content": "Wrong password."},
        {"role": "assistant", "content": "Reset it."},
    ]
    created = client.evals.create(
        name="conversations",
        data_source_config={
            "type": "custom",
            "item_schema": {"type": "object", "properties": {"messages": {"type": "array"}}, "required": ["messages"]},
            "include_sample_schema": False,
        },
        testing_criteria=[
            {
                "type": "azure_ai_evaluator",
                "name": "coherence",
                "evaluator_name": "builtin.coherence",
                "initialization_parameters": {"deployment_name": "judge"},
                "data_mapping": {"messages": "{{item.messages}}"},
            }
        ],
    )
    run = client.evals.runs.create(
        eval_id=created.id,
        data_source={
            "type": "jsonl",
            "source": {"type": "file_content", "content": [{"item": {"messages": conversation}}] * 3},
        },
        extra_body={"evaluation_level": "conversation"},
    )
    run = wait_for(client, created.id, run.id)
    assert run.status == "completed" and run.result_counts.passed == 3
    assert run.model_extra["evaluation_level"] == "conversation"
    prompt = llm.stats()["last"]["messages"][1]["content"]
    assert "CONVERSATION:\nUser turn 1:\nI can't sign in.\nAgent turn 1:\nWhat error?\nUser turn 2:" in prompt
    item = next(iter(client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)))
    result = item.results[0]
    assert (
        result.model_extra["reason"] == "the agent stayed coherent"
        and result.model_extra["properties"]["usage"]["calls"] == 1
    )
    fluency = make_eval(
        client,
        criteria=[
            {
                "type": "azure_ai_evaluator",
                "name": "fluency",
                "evaluator_name": "builtin.fluency",
                "initialization_parameters": {"model": "judge"},
            }
        ],
    )
    with pytest.raises(openai.BadRequestError, match="does not support evaluation_level 'conversation'"):
        client.evals.runs.create(
            eval_id=fluency.id,
            data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": ROWS[0]}]}},
            extra_body={"evaluation_level": "conversation"},
        )
    assert CRITERIA
