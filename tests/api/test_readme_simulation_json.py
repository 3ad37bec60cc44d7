"""The README's simulation data source (Foundry's newer shape) as written, posted through the
openai SDK: the agent it names answers from the scripted server, and so does its simulated user."""

from __future__ import annotations

import json

import pytest

from assay.llm import ModelConfig, ModelRegistry
from assay.targets.agents import parse_agents
from tests.api.conftest import wait_for
from tests.simulate.test_conversations import TWO_TURNS
from tests.test_readme_snippets import blocks

COMPLETED = {
    "type": "azure_ai_evaluator",
    "name": "completed",
    "evaluator_name": "builtin.task_completion",
    "data_mapping": {"messages": "{{item.messages}}"},
}
JUDGE = [{"match": "# Property:", "reply": {"content": '{"reason": "done", "score": 1}'}}]


@pytest.fixture
def models(llm, store):
    """The README's names: ``gpt-4.1-mini`` for the simulated user, the agent ``support-agent`` v1."""
    llm.reset()
    user = ModelConfig(name="gpt-4.1-mini", model="gpt-4.1-mini", base_url=llm.base_url, api_key="test")
    agents = parse_agents(
        {"support-agent": {"version": "1", "endpoint": llm.base_url, "protocol": "responses"}}, where="test agents"
    )
    return ModelRegistry([user], cache=store, agents=agents)


def test_the_simulation_data_source_runs_as_written(served, llm):
    (text,) = [b for b in blocks("Simulated conversations: no conversations yet", "json")]
    source = json.loads(text)
    llm.script(rules=JUDGE + TWO_TURNS)  # the judge's prompt quotes the conversation: its rule first
    client = served.client()
    ev = client.evals.create(
        name="simulated",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=[COMPLETED],
    )
    run = client.evals.runs.create(ev.id, data_source=source, extra_body={"evaluation_level": "conversation"})
    done = wait_for(client, ev.id, run.id)
    assert done.status == "completed", done.error
    assert done.result_counts.total == 2 and done.result_counts.passed == 2  # conversation_repetitions: 2
    (saved,) = done.model_extra["output_datasets"]
    assert saved["dataset"]["name"] == "support-simulations"
