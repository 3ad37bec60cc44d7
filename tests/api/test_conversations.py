"""OpenAI's Conversations API through the ``openai`` SDK Foundry's client hands out, as Foundry's
2.x agent samples use it: a conversation started with a user message, answered by a prompt agent
through ``responses.create(conversation=..., extra_body={"agent_reference": ...})``, continued, and
then evaluated from the agent's traces (each answer is kept as an ``invoke_agent`` span)."""

from __future__ import annotations

import time

import openai
import pytest
from azure.ai.projects.models import PromptAgentDefinition

from tests.api.conftest import wait_for
from tests.api.test_foundry_sdk import foundry_client, foundry_server

INSTRUCTIONS = "You are Geo, who knows capitals."


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    rules = [
        {"match": "And of Italy?", "reply": {"content": "Geo: Rome."}},
        {"match": "You are Geo", "reply": {"content": "Geo: Paris."}},
    ]
    with foundry_server(tmp_path_factory.mktemp("conversations"), rules, model="geo-model") as served:
        yield served


@pytest.fixture
def project_client(served, monkeypatch):
    with foundry_client(served, monkeypatch) as client:
        yield client


def texts(items) -> list[str]:
    return [part.text for item in items for part in (getattr(item, "content", None) or [])]


def test_a_conversations_items_are_added_listed_read_and_deleted(project_client):
    with project_client.get_openai_client() as client:
        conversation = client.conversations.create(
            items=[{"type": "message", "role": "user", "content": "one"}], metadata={"topic": "counting"}
        )
        assert conversation.id.startswith("conv_") and conversation.metadata == {"topic": "counting"}
        added = client.conversations.items.create(
            conversation.id,
            items=[{"role": "assistant", "content": "two"}, {"type": "message", "role": "user", "content": "three"}],
        )
        assert texts(added.data) == ["two", "three"] and added.first_id == added.data[0].id
        assert [item.content[0].type for item in added.data] == ["output_text", "input_text"]

        newest_first = list(client.conversations.items.list(conversation.id))
        assert texts(newest_first) == ["three", "two", "one"]  # OpenAI's default order is desc
        page = client.conversations.items.list(conversation.id, order="asc", limit=2)
        assert texts(page.data) == ["one", "two"] and page.has_more
        rest = client.conversations.items.list(conversation.id, order="asc", after=page.data[-1].id)
        assert texts(rest.data) == ["three"] and not rest.has_more

        second = added.data[0].id
        assert texts([client.conversations.items.retrieve(second, conversation_id=conversation.id)]) == ["two"]
        assert client.conversations.items.delete(second, conversation_id=conversation.id).id == conversation.id
        assert texts(client.conversations.items.list(conversation.id, order="asc")) == ["one", "three"]

        updated = client.conversations.update(conversation.id, metadata={"topic": "done"})
        assert client.conversations.retrieve(conversation.id).metadata == updated.metadata == {"topic": "done"}
        assert client.conversations.delete(conversation.id).deleted
        with pytest.raises(openai.NotFoundError):
            client.conversations.retrieve(conversation.id)
        with pytest.raises(openai.BadRequestError, match="at most 20 items"):
            client.conversations.create(items=[{"role": "user", "content": str(n)} for n in range(21)])


def test_an_agents_answers_continue_the_conversation_and_its_traces_are_evaluated(project_client, served):
    agent = project_client.agents.create_version(
        agent_name="geo", definition=PromptAgentDefinition(model="geo-model", instructions=INSTRUCTIONS)
    )
    started = int(time.time())
    reference = {"agent_reference": {"name": "geo", "type": "agent_reference"}}
    with project_client.get_openai_client() as client:
        conversation = client.conversations.create(
            items=[{"type": "message", "role": "user", "content": "What is the capital of France?"}]
        )
        first = client.responses.create(conversation=conversation.id, extra_body=reference)
        assert first.output_text == "Geo: Paris." and first.conversation.id == conversation.id
        second = client.responses.create(conversation=conversation.id, input="And of Italy?", extra_body=reference)
        assert second.output_text == "Geo: Rome."
        # The model was given the whole conversation before the new question, under the agent's instructions.
        asked = served["provider"].stats()["last"]
        assert asked["instructions"] == INSTRUCTIONS
        said = [part["text"] for item in asked["input"] for part in item["content"]]
        assert said == ["What is the capital of France?", "Geo: Paris.", "And of Italy?"]
        history = client.conversations.items.list(conversation.id, order="asc")
        assert texts(history.data) == ["What is the capital of France?", "Geo: Paris.", "And of Italy?", "Geo: Rome."]

        evaluation = client.evals.create(
            name="geo traces",
            data_source_config={"type": "azure_ai_source", "scenario": "traces"},
            testing_criteria=[
                {
                    "type": "string_check",
                    "name": "answered_rome",
                    "input": "{{item.response}}",
                    "reference": "Rome",
                    "operation": "like",
                },
                {  # Foundry's trace evaluations read the agent's turn as the sample
                    "type": "string_check",
                    "name": "sample_said_rome",
                    "input": "{{sample.output_text}}",
                    "reference": "Geo: Rome.",
                    "operation": "eq",
                },
            ],
        )
        source = {"type": "agent_filter", "agent_name": "geo", "agent_version": agent.version}
        window = {"start_time": started - 3600, "end_time": int(time.time()) + 600}
        run = client.evals.runs.create(
            eval_id=evaluation.id,
            data_source={"type": "azure_ai_trace_data_source", "trace_source": {**source, **window}},
        )
        run = wait_for(client, evaluation.id, run.id)
        # Each answer is a turn of the one conversation: the second is about Rome, the first is not.
        assert run.status == "completed" and run.result_counts.total == 2, run.error
        assert (run.result_counts.passed, run.result_counts.failed) == (1, 1)
        by_criterion = {r.testing_criteria: (r.passed, r.failed) for r in run.per_testing_criteria_results}
        assert by_criterion["sample_said_rome"] == (1, 1)


def test_an_external_agent_is_registered_and_its_traces_are_evaluated_by_its_name(project_client, served):
    """Foundry's external agents (``kind: external``): metadata only, hosted elsewhere; a trace data
    source naming the agent reads the spans of its OpenTelemetry id."""
    from azure.ai.projects.models import ExternalAgentDefinition

    from tests.support.otel import export_agent_turns

    created = project_client.agents.create_version(
        agent_name="shop-desk", definition=ExternalAgentDefinition(otel_agent_id="shop-desk-otel")
    )
    assert created.version == "1" and created.definition["otel_agent_id"] == "shop-desk-otel"
    assert [agent.name for agent in project_client.agents.list(kind="external")] == ["shop-desk"]
    assert "shop-desk" not in [agent.name for agent in project_client.agents.list(kind="prompt")]
    base = served["endpoint"].split("/api/")[0]
    turns = [("Where is order 7?", "Order 7 ships today."), ("Refund order 9", "Refunded.")]
    export_agent_turns(base, "shop-desk-otel", turns, key=served["key"], cert=served["cert"])
    started = int(time.time())
    with project_client.get_openai_client() as client:
        evaluation = client.evals.create(
            name="external desk",
            data_source_config={"type": "azure_ai_source", "scenario": "traces"},
            testing_criteria=[
                {
                    "type": "string_check",
                    "name": "said",
                    "input": "{{item.response}}",
                    "reference": "Order 7",
                    "operation": "like",
                }
            ],
        )
        window = {"start_time": started - 3600, "end_time": started + 600}
        source = {"type": "agent_filter", "agent_name": "shop-desk", **window}
        run = client.evals.runs.create(
            eval_id=evaluation.id, data_source={"type": "azure_ai_trace_data_source", "trace_source": source}
        )
        run = wait_for(client, evaluation.id, run.id)
        assert run.status == "completed" and run.result_counts.total == 2, run.error
        assert (run.result_counts.passed, run.result_counts.failed) == (1, 1)
        # registered, not run: a run or a response aimed at it says why
        with pytest.raises(openai.BadRequestError, match="external agent is registered, not run here"):
            client.responses.create(
                input="hi", extra_body={"agent_reference": {"name": "shop-desk", "type": "agent_reference"}}
            )
    assert project_client.agents.delete("shop-desk").deleted
