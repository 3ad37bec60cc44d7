"""Seed 004's synthetic-data snippets through the openai SDK against `assay serve`: queries written
from a prompt (model target, with and without system-only input_messages) and from an agent
(agent target), each run scored on every item, its queries saved as the dataset the run names in
``output_dataset_id``; a rerun makes no model call."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.api.conftest import wait_for
from tests.support.fixtures import start_llm_server
from tests.support.servers import start_assay_server

QUERIES = [
    "How do I return a kettle that stopped heating?",
    "My blender arrived cracked: can I get a refund?",
    "Who pays shipping when I send back a faulty toaster?",
    "Can I exchange a defective charger in store?",
    "How long do I have to report a broken item?",
]
GENERATOR = {
    "match": "You write test queries",
    "reply": {"content": json.dumps({"queries": [{"query": q, "ground_truth": ""} for q in QUERIES]})},
}
AGENT_QUERIES = [
    "I got a dented pan, can I return it?",
    "Does the return policy cover a scratched lens?",
    "What do I need to send back a defective lamp?",
    "Can I return a faulty item bought on sale?",
    "Is a replacement possible instead of a refund?",
]
FROM_AGENT = {
    "match": "You handle returns of defective products",
    "reply": {"content": json.dumps({"queries": [{"query": q, "ground_truth": ""} for q in AGENT_QUERIES]})},
}
JUDGES = [
    {"match": "# Property: coherence", "reply": {"content": '{"reason": "clear", "score": 4}'}},
    {"match": "# Property: violence", "reply": {"content": '{"reason": "none", "score": 0}'}},
]
CRITERIA = [
    {
        "type": "azure_ai_evaluator",
        "name": "coherence",
        "evaluator_name": "builtin.coherence",
        "initialization_parameters": {"model": "gpt-5-mini"},
        "data_mapping": {"query": "{{item.query}}", "response": "{{sample.output_text}}"},
    },
    {
        "type": "azure_ai_evaluator",
        "name": "violence",
        "evaluator_name": "builtin.violence",
        "data_mapping": {"query": "{{item.query}}", "response": "{{sample.output_text}}"},
    },
]


@pytest.fixture
def server(tmp_path, monkeypatch):
    provider = start_llm_server()
    provider.script(
        rules=[FROM_AGENT, GENERATOR, *JUDGES], default={"content": "Sorry about that: send it back for a refund."}
    )
    models = tmp_path / "models.yaml"
    models.write_text(
        f"models:\n  gpt-5-mini: {{model: gpt-5-mini, base_url: '{provider.base_url}', api_key: t}}\n"
        f"agents:\n  returns-agent: {{version: '2', endpoint: '{provider.base_url}', protocol: responses,\n"
        "    instructions: 'You handle returns of defective products.'}\n"
    )
    monkeypatch.setenv("OPENAI_BASE_URL", provider.base_url)  # violence names no model: the environment's
    monkeypatch.setenv("OPENAI_API_KEY", "t")
    process, client = start_assay_server(tmp_path, models)
    yield client, provider, client.base_url
    client.close()
    process.terminate()
    process.wait(timeout=20)
    provider.stop()


def synthetic(target, **params):
    return {
        "type": "azure_ai_synthetic_data_gen_preview",
        "target": target,
        "item_generation_params": {
            "type": "synthetic_data_gen_preview",
            "samples_count": 5,
            "model_deployment_name": "gpt-5-mini",
            **params,
        },
    }


def run_to_end(client, eval_id, data_source, name, queries=QUERIES):
    run = client.evals.runs.create(eval_id=eval_id, name=name, data_source=data_source)
    run = wait_for(client, eval_id, run.id, seconds=90)
    assert run.status == "completed", run.error
    assert (run.result_counts.total, run.result_counts.errored) == (5, 0)
    items = list(client.evals.runs.output_items.list(run_id=run.id, eval_id=eval_id))
    assert sorted(i.datasource_item["query"] for i in items) == sorted(queries)
    assert all(
        {r.name for r in i.results} == {"coherence", "violence"} and all(r.passed for r in i.results) for i in items
    )
    return run, items


def test_the_seed_synthetic_data_snippets(server):
    client, provider, base_url = server
    eval_object = client.evals.create(
        name="Synthetic Data Evaluation",
        data_source_config={"type": "azure_ai_source", "scenario": "synthetic_data_gen_preview"},
        testing_criteria=CRITERIA,
    )
    model = {"type": "azure_ai_model", "model": "gpt-5-mini"}
    prompt = "Generate customer service questions about returning defective products"
    run, _ = run_to_end(
        client,
        eval_object.id,
        synthetic(model, prompt=prompt, output_dataset_name="my-synthetic-dataset"),
        "synthetic-data-evaluation",
    )
    dataset_id = run.model_extra["output_dataset_id"]
    assert dataset_id.endswith("/data/my-synthetic-dataset/versions/1")
    root = str(base_url).removesuffix("/v1/")
    with urllib.request.urlopen(f"{root}/api/projects/default/datasets/my-synthetic-dataset/versions/1") as response:
        assert json.loads(response.read())["id"] == dataset_id

    system = {
        "type": "template",
        "template": [
            {
                "type": "message",
                "role": "system",
                "content": {
                    "type": "input_text",
                    "text": "You are a helpful customer service agent. Be empathetic and solution-oriented.",
                },
            }
        ],
    }
    _, items = run_to_end(
        client, eval_object.id, {**synthetic(model, prompt=prompt), "input_messages": system}, "with-system-prompt"
    )
    sent = items[0].sample.input
    assert [m.role for m in sent] == ["system", "user"] and sent[1].content == items[0].datasource_item["query"]

    agent = {"type": "azure_ai_agent", "name": "returns-agent", "version": "2"}
    # The agent's instructions reach the generator, with or without a prompt.
    run_to_end(
        client,
        eval_object.id,
        synthetic(agent, prompt="Generate questions about returning defective products"),
        "synthetic-agent-evaluation",
        AGENT_QUERIES,
    )
    run_to_end(client, eval_object.id, synthetic(agent), "from-the-agents-instructions", AGENT_QUERIES)

    calls = provider.stats()["completions"]
    rerun, _ = run_to_end(
        client, eval_object.id, synthetic(model, prompt=prompt, output_dataset_name="my-synthetic-dataset"), "rerun"
    )
    assert provider.stats()["completions"] == calls  # generator, target and judges all answered by the cache
    assert rerun.model_extra["output_dataset_id"].endswith("/versions/2")


def test_a_prompt_is_needed_unless_the_target_is_an_agent(server):
    import openai

    client, _, _ = server
    eval_object = client.evals.create(
        data_source_config={"type": "azure_ai_source", "scenario": "synthetic_data_gen_preview"},
        testing_criteria=CRITERIA[:1],
    )
    with pytest.raises(openai.BadRequestError, match="prompt: say what queries to write"):
        client.evals.runs.create(
            eval_id=eval_object.id, data_source=synthetic({"type": "azure_ai_model", "model": "gpt-5-mini"})
        )
    with pytest.raises(openai.BadRequestError, match="system messages only"):
        client.evals.runs.create(
            eval_id=eval_object.id,
            data_source={
                **synthetic({"type": "azure_ai_model", "model": "gpt-5-mini"}, prompt="x"),
                "input_messages": {"type": "template", "template": [{"role": "user", "content": "hi"}]},
            },
        )


def test_queries_are_written_from_a_prompt_agent_the_agents_api_made(server):
    # The agent is the project's own (agents.create_version), not one the operator configured: its
    # instructions reach the generator, and it answers each query as its model.
    client, _, base_url = server
    root = str(base_url).removesuffix("/v1/")
    definition = {"kind": "prompt", "model": "gpt-5-mini", "instructions": "You handle returns of defective products."}
    created = urllib.request.Request(
        f"{root}/api/projects/default/agents/returns-desk/versions",
        data=json.dumps({"definition": definition}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(created) as response:
        assert json.loads(response.read())["version"] == "1"
    eval_object = client.evals.create(
        name="Synthetic Data Evaluation",
        data_source_config={"type": "azure_ai_source", "scenario": "synthetic_data_gen_preview"},
        testing_criteria=CRITERIA,
    )
    agent = {"type": "azure_ai_agent", "name": "returns-desk"}
    _, items = run_to_end(client, eval_object.id, synthetic(agent), "from-a-prompt-agent", AGENT_QUERIES)
    assert items[0].sample.input[0].role == "system"
    assert items[0].sample.input[0].content == definition["instructions"]
