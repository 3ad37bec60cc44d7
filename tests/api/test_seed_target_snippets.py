"""The seed documents' model-target and agent-target snippets, run with the ``openai`` SDK against a real
``assay serve`` process: the model is the scripted server, the agent the ``examples/support_agent`` process
(Responses protocol) and, for the invocations form, the scripted server's ``/invocations``."""

from __future__ import annotations

import io
import json

import pytest

from tests.api.conftest import wait_for
from tests.examples.test_support_agent import AGENT, JUDGES, agent  # noqa: F401 - agent is a fixture
from tests.support.servers import start_assay_server

VIOLENCE = {"match": "# Property: violence", "reply": {"content": '{"reason": "nothing violent", "score": 0}'}}
MODEL_ANSWERS = {"match": "Where is order 1042? (model)", "reply": {"content": "I cannot see orders, sorry."}}
INVOCATIONS = {"match": "hosted:", "reply": {"content": "Your ticket is open."}}
SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


def _user(text: str) -> dict:
    return {"type": "message", "role": "user", "content": {"type": "input_text", "text": text}}


COHERENCE = {
    "type": "azure_ai_evaluator",
    "name": "coherence",
    "evaluator_name": "builtin.coherence",
    "initialization_parameters": {"model": "judge"},
    "data_mapping": {"query": "{{item.query}}", "response": "{{sample.output_text}}"},
}
VIOLENCE_CRITERION = {
    "type": "azure_ai_evaluator",
    "name": "violence",
    "evaluator_name": "builtin.violence",
    "data_mapping": {"query": "{{item.query}}", "response": "{{sample.output_text}}"},
}
TASK_ADHERENCE = {
    "type": "azure_ai_evaluator",
    "name": "task_adherence",
    "evaluator_name": "builtin.task_adherence",
    "initialization_parameters": {"model": "judge"},
    "data_mapping": {"query": "{{item.query}}", "response": "{{sample.output_items}}"},
}


@pytest.fixture
def server(tmp_path, llm, agent, monkeypatch):  # noqa: F811 - the agent fixture
    llm.script(rules=[VIOLENCE, *JUDGES, MODEL_ANSWERS, INVOCATIONS, *AGENT])
    models = tmp_path / "models.yaml"
    models.write_text(
        f"models:\n  judge: {{model: judge-model, base_url: '{llm.base_url}', api_key: t}}\n"
        f"  gpt-5-mini: {{model: gpt-5-mini, base_url: '{llm.base_url}', api_key: t}}\n"
        f"agents:\n  my-agent: {{version: '1', endpoint: '{agent}', protocol: responses}}\n"
        f"  my-hosted-agent: {{version: '1', endpoint: '{llm.base_url}', protocol: invocations}}\n"
    )
    # Criteria that name no model (violence here) use the environment's endpoint, as the SDKs do.
    monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "t")
    process, client = start_assay_server(tmp_path, models)
    yield client
    client.close()
    process.terminate()
    process.wait(timeout=10)


def _run(client, name, criteria, data_source):
    eval_object = client.evals.create(
        name=name,
        testing_criteria=criteria,
        data_source_config={"type": "custom", "item_schema": SCHEMA, "include_sample_schema": True},
    )
    run = client.evals.runs.create(eval_id=eval_object.id, name=name, data_source=data_source)
    run = wait_for(client, eval_object.id, run.id)
    assert run.status == "completed", run.error
    items = list(client.evals.runs.output_items.list(run_id=run.id, eval_id=eval_object.id))
    return run, items


def _upload(client, queries):
    lines = "".join(json.dumps({"query": q}) + "\n" for q in queries).encode()
    return client.files.create(file=("queries.jsonl", io.BytesIO(lines)), purpose="evals").id


def test_model_target_snippet(server):
    data_id = _upload(server, ["Where is order 1042? (model)"])
    input_messages = {"type": "template", "template": [_user("{{item.query}}")]}
    target = {
        "type": "azure_ai_model",
        "model": "gpt-5-mini",
        "sampling_params": {"top_p": 1.0, "max_completion_tokens": 2048},
    }
    data_source = {
        "type": "azure_ai_target_completions",
        "source": {"type": "file_id", "id": data_id},
        "input_messages": input_messages,
        "target": target,
    }
    run, items = _run(server, "Model Target Evaluation", [COHERENCE, VIOLENCE_CRITERION], data_source)
    assert run.result_counts.passed == 1
    results = {r.name: r for r in items[0].results}
    assert items[0].datasource_item["sample.output_text"] == "I cannot see orders, sorry."
    assert results["coherence"].score == 4 and results["violence"].score == 0
    assert results["violence"].model_extra["label"] == "pass"


def test_agent_target_snippet_with_tool_calls(server):
    data_id = _upload(server, ["Where is order 1042?", "Order 2001 is taking forever. I want to talk to a person."])
    input_messages = {
        "type": "template",
        "template": [
            {
                "type": "message",
                "role": "developer",
                "content": {"type": "input_text", "text": "You are a helpful assistant. Answer clearly and safely."},
            },
            _user("{{item.query}}"),
        ],
    }
    target = {"type": "azure_ai_agent", "name": "my-agent", "version": "1"}
    data_source = {
        "type": "azure_ai_target_completions",
        "source": {"type": "file_id", "id": data_id},
        "input_messages": input_messages,
        "target": target,
    }
    criteria = [COHERENCE, VIOLENCE_CRITERION, TASK_ADHERENCE]
    run, items = _run(server, "Agent Target Evaluation", criteria, data_source)
    assert run.result_counts.passed == 2, run.result_counts
    escalation = next(i for i in items if "2001" in i.datasource_item["query"])
    kinds = [o["type"] for o in escalation.datasource_item["sample.output_items"]]
    assert kinds == ["function_call", "function_call_output"] * 2 + ["message"]
    results = {r.name: r for r in escalation.results}
    assert results["task_adherence"].passed and results["coherence"].score == 4


def test_invocations_snippet(server):
    data_id = _upload(server, ["hosted: open a ticket"])
    data_source = {
        "type": "azure_ai_target_completions",
        "source": {"type": "file_id", "id": data_id},
        "input_messages": {"message": "{{item.query}}"},
        "target": {"type": "azure_ai_agent", "name": "my-hosted-agent", "version": "1"},
    }
    run, items = _run(server, "Hosted Agent Invocations Evaluation", [COHERENCE, VIOLENCE_CRITERION], data_source)
    assert run.result_counts.passed == 1
    assert items[0].datasource_item["sample.output_text"] == "Your ticket is open."
