"""Seed 004's simulation snippet through the openai SDK against `assay serve`: scenarios uploaded,
an agent target, ``item_generation_params: conversation_gen_preview``, evaluation_level
conversation, the four conversation evaluators mapped from ``{{item.messages}}``. The scripted
server plays the simulated user, the agent (Responses protocol) and the judges."""

from __future__ import annotations

import io
import json
import urllib.request

import pytest

from tests.api.conftest import wait_for
from tests.api.test_seed_conversation_snippet import JUDGED, criterion, judge_rules
from tests.simulate.test_conversations import TWO_TURNS
from tests.support.fixtures import start_llm_server
from tests.support.servers import start_assay_server

SCENARIOS = [
    {
        "id": "1",
        "test_case_description": "Your order 1042 is late and you want to know when it arrives.",
        "desired_num_turns": 2,
    },
    {
        "id": "2",
        "test_case_description": "You ordered the wrong size and want to know when your order arrives.",
        "desired_num_turns": "3",
    },
]


@pytest.fixture
def server(tmp_path):
    provider = start_llm_server()
    provider.script(rules=[*judge_rules(), *TWO_TURNS])
    models = tmp_path / "models.yaml"
    models.write_text(
        f"models:\n  judge: {{model: judge-model, base_url: '{provider.base_url}', api_key: t}}\n"
        f"agents:\n  support-agent: {{version: '1', endpoint: '{provider.base_url}', protocol: responses}}\n"
    )
    process, client = start_assay_server(tmp_path, models)
    yield client, provider
    client.close()
    process.terminate()
    process.wait(timeout=20)
    provider.stop()


def test_the_seed_simulation_snippet_completes_with_every_conversation_scored(server):
    client, _ = server
    run_seed_simulation(client, {"type": "azure_ai_agent", "name": "support-agent", "version": "1"})


def test_the_seed_simulation_snippet_against_a_prompt_agent_made_through_the_agents_api(server):
    # As the seed does it: agents.create_version(agent_name, PromptAgentDefinition(model, instructions)).
    client, _ = server
    root = str(client.base_url).removesuffix("/v1/")
    instructions = "You are a helpful customer service agent. Be empathetic and solution-oriented."
    definition = {"kind": "prompt", "model": "judge", "instructions": instructions}
    request = urllib.request.Request(
        f"{root}/api/projects/default/agents/support-desk/versions",
        data=json.dumps({"definition": definition}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        agent = json.loads(response.read())
    items = run_seed_simulation(client, {"type": "azure_ai_agent", "name": agent["name"], "version": agent["version"]})
    # The agent's side of each conversation came from its model (its instructions: tests/api/test_prompt_agents.py).
    assert all(item.datasource_item["messages"][1]["content"] == "It shipped yesterday." for item in items)


def run_seed_simulation(client, target):
    """The seed's simulation run against ``target``; its output items, once every check held."""
    lines = "".join(json.dumps(s) + "\n" for s in SCENARIOS).encode()
    scenarios_id = client.files.create(file=("scenarios.jsonl", io.BytesIO(lines)), purpose="evals").id
    eval_object = client.evals.create(
        name="Multi-turn Conversation Simulation",
        data_source_config={
            "type": "custom",
            "item_schema": {"type": "object", "properties": {"messages": {"type": "array"}}, "required": ["messages"]},
            "include_sample_schema": False,
        },
        testing_criteria=[criterion(name, evaluator) for name, evaluator in JUDGED.items()],
    )
    eval_run = client.evals.runs.create(
        eval_id=eval_object.id,
        name="conversation-simulation-run",
        data_source={
            "type": "azure_ai_target_completions",
            "source": {"type": "file_id", "id": scenarios_id},
            "target": target,
            "item_generation_params": {
                "type": "conversation_gen_preview",
                "model": "judge",
                "num_conversations": 2,
                "max_turns": 5,
                "sampling_params": {"temperature": 0.7, "top_p": 1.0, "max_completion_tokens": 800},
                "data_mapping": {
                    "test_case_description": "test_case_description",
                    "id": "id",
                    "desired_num_turns": "desired_num_turns",
                },
            },
        },
        extra_body={"evaluation_level": "conversation"},
    )
    run = wait_for(client, eval_object.id, eval_run.id, seconds=120)
    assert run.status == "completed", run.error
    assert (run.result_counts.total, run.result_counts.errored) == (4, 0)  # 2 scenarios × 2 conversations
    items = list(client.evals.runs.output_items.list(run_id=run.id, eval_id=eval_object.id))
    for item in items:
        conversation = item.datasource_item
        assert conversation["termination_reason"] == "user_stop" and len(conversation["messages"]) == 4
        assert {r.name for r in item.results} == set(JUDGED) and all(r.passed for r in item.results)
    assert len({i.datasource_item["simulation_seed"] for i in items}) == 4
    (saved,) = run.model_extra["output_datasets"]
    assert saved["type"] == "simulated_user_conversations"
    # The saved conversations are retrievable and evaluable like any dataset.
    again = client.evals.runs.create(
        eval_id=eval_object.id,
        data_source={"type": "jsonl", "source": {"type": "file_id", "id": saved["dataset"]["id"]}},
        extra_body={"evaluation_level": "conversation"},
    )
    again = wait_for(client, eval_object.id, again.id)
    assert again.status == "completed" and (again.result_counts.total, again.result_counts.errored) == (4, 0)
    return items
