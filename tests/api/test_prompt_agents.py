"""Foundry's agents API through ``azure-ai-projects`` against ``assay serve --tls``, as seed 004's
simulation sample starts: ``agents.create_version(name, definition=PromptAgentDefinition(model,
instructions))``, then a run whose target is ``{type: azure_ai_agent, name, version}``. The scripted
provider answers as the agent only when the agent's instructions reach it as the system message."""

from __future__ import annotations

import io
import json

import pytest
from azure.ai.projects.models import PromptAgentDefinition
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from tests.api.conftest import wait_for
from tests.api.test_foundry_sdk import foundry_client, foundry_server, release

INSTRUCTIONS = "You are Ava of the refund desk. Be brief."
LOOKUP = {
    "type": "function",
    "name": "lookup_order",
    "description": "Find an order by its number",
    "parameters": {"type": "object", "properties": {"order": {"type": "string"}}},
}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    rules = [{"match": "You are Ava of the refund desk", "reply": {"content": "Ava: refund sent."}}]
    with foundry_server(tmp_path_factory.mktemp("agents"), rules, model="agent-model") as served:
        yield served


@pytest.fixture
def project_client(served, monkeypatch):
    with foundry_client(served, monkeypatch) as client:
        yield client


def test_a_prompt_agent_made_with_the_sdk_is_a_runs_target(project_client):
    definition = PromptAgentDefinition(model="agent-model", instructions=INSTRUCTIONS, tools=[LOOKUP])
    first = project_client.agents.create_version(agent_name="refund-desk", definition=definition)
    assert (first.name, first.version, first.definition["instructions"]) == ("refund-desk", "1", INSTRUCTIONS)
    agent = project_client.agents.create_version(
        agent_name="refund-desk", definition=definition, description="the desk", metadata={"team": "support"}
    )
    assert agent.version == "2" and agent.description == "the desk" and agent.metadata == {"team": "support"}

    rows = [{"query": "Where is my refund for order 1042?"}, {"query": "Has my refund been sent?"}]
    with project_client.get_openai_client() as client:
        criteria = [
            {
                "type": "string_check",
                "name": "answered_as_ava",
                "input": "{{sample.output_text}}",
                "reference": "Ava:",
                "operation": "ilike",
            },
            {
                "type": "string_check",
                "name": "tools_declared",
                "input": "{{sample.tool_definitions}}",
                "reference": "lookup_order",
                "operation": "ilike",
            },
        ]
        eval_object = client.evals.create(
            name="refund desk",
            data_source_config={"type": "custom", "item_schema": {"type": "object"}, "include_sample_schema": True},
            testing_criteria=criteria,
        )
        run = client.evals.runs.create(
            eval_id=eval_object.id,
            data_source={
                "type": "azure_ai_target_completions",
                "source": {"type": "file_content", "content": [{"item": row} for row in rows]},
                "input_messages": {
                    "type": "template",
                    "template": [{"type": "message", "role": "user", "content": "{{item.query}}"}],
                },
                "target": {"type": "azure_ai_agent", "name": agent.name, "version": agent.version},
            },
        )
        finished = wait_for(client, eval_object.id, run.id)
        assert finished.status == "completed", finished.error
        assert (finished.result_counts.total, finished.result_counts.passed) == (2, 2)
        items = list(client.evals.runs.output_items.list(run_id=run.id, eval_id=eval_object.id))
        assert sorted(item.sample.output[0].content for item in items) == ["Ava: refund sent."] * 2


def test_versions_are_listed_read_and_deleted(project_client):
    definition = PromptAgentDefinition(model="agent-model", instructions="You help.")
    for _ in range(3):
        project_client.agents.create_version(agent_name="helper", definition=definition)
    versions = [v.version for v in project_client.agents.list_versions(agent_name="helper")]
    assert versions == ["3", "2", "1"]  # newest first, as Foundry lists them
    assert [v.version for v in project_client.agents.list_versions(agent_name="helper", order="asc", limit=1)] == [
        "1",
        "2",
        "3",
    ]  # one to a page, every page read
    assert project_client.agents.get(agent_name="helper").versions.latest.version == "3"
    assert "helper" in {a.name for a in project_client.agents.list()}
    assert project_client.agents.get_version(agent_name="helper", agent_version="2").version == "2"

    deleted = project_client.agents.delete_version(agent_name="helper", agent_version="3")
    assert deleted.deleted is True
    assert project_client.agents.get(agent_name="helper").versions.latest.version == "2"
    with pytest.raises(ResourceNotFoundError) as missing:
        project_client.agents.get_version(agent_name="helper", agent_version="3")
    release(missing.value)
    assert project_client.agents.delete(agent_name="helper").deleted is True
    with pytest.raises(ResourceNotFoundError) as gone:
        project_client.agents.get(agent_name="helper")
    release(gone.value)


def test_an_agent_foundry_would_host_is_refused_with_how_to_serve_it(project_client):
    body = {"definition": {"kind": "hosted", "image": "registry/agent:1"}}
    with pytest.raises(HttpResponseError) as refused:
        project_client.agents.create_version(agent_name="hosted-one", body=io.BytesIO(json.dumps(body).encode()))
    assert refused.value.status_code == 400
    assert "prompt agents" in str(refused.value) and "agents:" in str(refused.value)
    release(refused.value)
    with pytest.raises(HttpResponseError) as bad_tool:
        project_client.agents.create_version(
            agent_name="searcher",
            definition=PromptAgentDefinition(model="agent-model", tools=[{"type": "web_search"}]),
        )
    assert bad_tool.value.status_code == 400 and "definition.tools[0]" in str(bad_tool.value)
    release(bad_tool.value)


def test_a_responses_call_naming_the_agent_is_answered_by_it_and_kept(project_client):
    definition = PromptAgentDefinition(model="agent-model", instructions=INSTRUCTIONS, temperature=0.2)
    project_client.agents.create_version(agent_name="desk-for-responses", definition=definition)
    with project_client.get_openai_client() as client:
        response = client.responses.create(
            input="Where is my refund?",
            extra_body={"agent": {"name": "desk-for-responses", "type": "agent_reference"}},
        )
        assert response.output_text == "Ava: refund sent."
        assert client.responses.retrieve(response.id).output_text == "Ava: refund sent."  # kept, to evaluate later


def test_a_streamed_responses_call_naming_the_agent_streams_its_answer(project_client):
    definition = PromptAgentDefinition(model="agent-model", instructions=INSTRUCTIONS)
    project_client.agents.create_version(agent_name="desk-streaming", definition=definition)
    with project_client.get_openai_client() as client:
        events = client.responses.create(
            input="Where is my refund?",
            stream=True,
            extra_body={"agent": {"name": "desk-streaming", "type": "agent_reference"}},
        )
        completed = [event.response for event in events if event.type == "response.completed"]
        assert [response.output_text for response in completed] == ["Ava: refund sent."]
        assert client.responses.retrieve(completed[0].id).output_text == "Ava: refund sent."
