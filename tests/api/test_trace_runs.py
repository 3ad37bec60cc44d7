"""The headline trace scenario: the support agent, instrumented with the OpenTelemetry SDK and its
OTLP/HTTP exporter (protobuf, gzip), sends spans to a real ``assay serve``; trace runs chosen by
agent filter are evaluated by judges at turn and at conversation level, through the ``openai`` SDK."""

from __future__ import annotations

import time

import openai
import pytest

from assay.store import Store
from tests.api.conftest import wait_for
from tests.examples.test_support_agent import AGENT
from tests.support.fixtures import poll
from tests.support.servers import start_assay_server, start_support_agent

JUDGES = [
    {"match": "# Property: intent resolution", "reply": {"content": '{"reason": "understood", "score": 5}'}},
    {"match": "# Property: tool call accuracy", "reply": {"content": '{"reason": "right tool", "score": 5}'}},
    {"match": "# Property: customer satisfaction", "reply": {"content": '{"reason": "helped", "score": 4}'}},
    {"match": "# Property: task completion", "reply": {"content": '{"reason": "done", "score": 1}'}},
    {"match": "# Property:", "reply": {"content": '{"reason": "clear", "score": 4}'}},
]


@pytest.fixture
def traced(tmp_path, llm):
    llm.reset()
    llm.script(rules=JUDGES + AGENT)
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  judge: {{model: judge, base_url: '{llm.base_url}', api_key: t}}\n")
    server, client = start_assay_server(tmp_path, models)
    port = client.base_url.port
    agent, agent_url = start_support_agent(
        llm.base_url, tmp_path / "agent.log", "--otlp-endpoint", f"http://127.0.0.1:{port}/v1/traces"
    )
    user = openai.OpenAI(base_url=agent_url, api_key="t", max_retries=5)
    yield client, user, Store(f"sqlite:///{tmp_path / 'assay.db'}")
    user.close()
    client.close()
    for process in (agent, server):
        process.terminate()
        process.wait(timeout=20)


def _talk(user):
    """Two conversations with the agent: A has two turns, B one."""
    first = user.responses.create(model="support-agent", input="Where is order 1042?", conversation="conv-A")
    history = [
        {"role": "user", "content": "Where is order 1042?"},
        {"role": "assistant", "content": first.output_text},
        {"role": "user", "content": "Has my order 3107 arrived yet?"},
    ]
    user.responses.create(model="support-agent", input=history, conversation="conv-A")
    user.responses.create(model="support-agent", input="How long do I have to return a kettle?", conversation="conv-B")


def _agent_filter(**extra):
    now = int(time.time())
    return {
        "type": "azure_ai_trace_data_source",
        "trace_source": {
            "type": "agent_filter",
            "agent_name": "support-agent",
            "agent_version": "1",
            "start_time": now - 3600,
            "end_time": now + 600,
            "max_traces": 10,
            **extra,
        },
    }


def test_instrumented_agent_traces_evaluated_by_turn_and_by_conversation(traced):
    client, user, store = traced
    _talk(user)
    deadline = time.monotonic() + 30
    while len(store.agent_trace_ids("default", agent_name="support-agent")) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(store.agent_trace_ids("default", agent_name="support-agent")) == 3

    turn_eval = client.evals.create(
        name="Trace Evaluation (Agent Smart Filter)",
        data_source_config={"type": "azure_ai_source", "scenario": "traces"},
        testing_criteria=[
            {
                "type": "azure_ai_evaluator",
                "name": "intent_resolution",
                "evaluator_name": "builtin.intent_resolution",
                "initialization_parameters": {"model": "judge"},
                "data_mapping": {
                    "query": "{{item.query}}",
                    "response": "{{item.response}}",
                    "tool_definitions": "{{item.tool_definitions}}",
                },
            },
            {
                "type": "azure_ai_evaluator",
                "name": "tool_call_accuracy",
                "evaluator_name": "builtin.tool_call_accuracy",
                "initialization_parameters": {"model": "judge"},
                "data_mapping": {
                    "query": "{{item.query}}",
                    "response": "{{item.response}}",
                    "tool_calls": "{{item.tool_calls}}",
                    "tool_definitions": "{{item.tool_definitions}}",
                },
            },
        ],
    )
    run = client.evals.runs.create(eval_id=turn_eval.id, data_source=_agent_filter(filter_strategy="smart_filtering"))
    run = wait_for(client, turn_eval.id, run.id)
    assert run.status == "completed" and run.result_counts.total == 3 and run.result_counts.passed == 3, run
    items = list(client.evals.runs.output_items.list(run_id=run.id, eval_id=turn_eval.id))
    escalation = next(i for i in items if "1042" in str(i.datasource_item["query"]))
    assert escalation.datasource_item["tool_calls"][0]["name"] == "lookup_order"
    assert escalation.datasource_item["agent_id"] == "support-agent:1"
    assert {t["name"] for t in escalation.datasource_item["tool_definitions"]} == {
        "lookup_order",
        "refund_policy",
        "escalate_to_human",
    }
    assert all(r.score == 5 for i in items for r in i.results)

    conversation_eval = client.evals.create(
        name="Multi-turn Trace Evaluation (Agent Filter)",
        data_source_config={"type": "azure_ai_source", "scenario": "traces"},
        testing_criteria=[
            {
                "type": "azure_ai_evaluator",
                "name": name,
                "evaluator_name": f"builtin.{name}",
                "initialization_parameters": {"model": "judge"},
                "data_mapping": {"messages": "{{item.messages}}"},
            }
            for name in ("customer_satisfaction", "task_completion")
        ],
    )
    run = client.evals.runs.create(
        eval_id=conversation_eval.id, data_source=_agent_filter(), extra_body={"evaluation_level": "conversation"}
    )
    run = wait_for(client, conversation_eval.id, run.id)
    assert run.status == "completed" and run.result_counts.total == 2 and run.result_counts.passed == 2, run
    items = {
        i.datasource_item["conversation_id"]: i
        for i in client.evals.runs.output_items.list(run_id=run.id, eval_id=conversation_eval.id)
    }
    users = [m for m in items["conv-A"].datasource_item["messages"] if m["role"] == "user"]
    assert [m["content"][0]["text"] for m in users] == ["Where is order 1042?", "Has my order 3107 arrived yet?"]
    assert len(items["conv-A"].datasource_item["trace_ids"]) == 2

    with pytest.raises(openai.BadRequestError, match="no stored traces match"):
        client.evals.runs.create(eval_id=turn_eval.id, data_source={"type": "azure_ai_traces", "agent_id": "nobody:1"})


@pytest.fixture
def traced_with_rules(monkeypatch, request):
    monkeypatch.setenv("ASSAY_RULE_WINDOW_SECONDS", "1")
    return request.getfixturevalue("traced")


def test_an_agents_traces_trigger_its_evaluation_rule(traced_with_rules):
    """Turns that arrive as OTLP traces are completed responses for a rule on their agent: the
    rule's eval gets one trace run over them."""
    import json
    import urllib.request

    client, user, store = traced_with_rules
    ev = client.evals.create(
        name="support traces",
        data_source_config={"type": "azure_ai_source", "scenario": "traces"},
        testing_criteria=[
            {
                "type": "azure_ai_evaluator",
                "name": "coherence",
                "evaluator_name": "builtin.coherence",
                "initialization_parameters": {"model": "judge"},
            },
        ],
    )
    rule = {
        "action": {"type": "continuousEvaluation", "evalId": ev.id},
        "filter": {"agentName": "support-agent"},
        "eventType": "responseCompleted",
    }
    url = f"{str(client.base_url).removesuffix('/v1/')}/api/projects/default/evaluationrules/traces"
    put = urllib.request.Request(url, data=json.dumps(rule).encode(), method="PUT")
    put.add_header("content-type", "application/json")
    put.add_header("authorization", "Bearer local")
    with urllib.request.urlopen(put, timeout=10) as created:
        assert created.status == 201
    _talk(user)

    def completed():
        return [r for r in client.evals.runs.list(eval_id=ev.id) if r.status == "completed"]

    runs = poll(completed, lambda found: sum(r.result_counts.total for r in found) >= 3, seconds=120)
    assert sum(r.result_counts.total for r in runs) == 3  # three turns, each evaluated once
    assert all(r.data_source.type == "azure_ai_trace_data_source" for r in runs)
