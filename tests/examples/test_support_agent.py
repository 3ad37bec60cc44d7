"""``examples/support_agent``: a real agent process (its model scripted) evaluated end to end by ``assay run``."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from tests.cli.test_cli import assay
from tests.support.fixtures import ROOT
from tests.support.servers import start_support_agent

EXAMPLE = ROOT / "examples" / "support_agent"


def _call(call_id: str, name: str, **arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


# Judges first: their prompts quote the agent's conversation, which the agent's own rules match too.
JUDGES = [
    {"match": "# Property: tool call accuracy", "reply": {"content": '{"reason": "right tools", "score": 5}'}},
    {"match": "# Property: task adherence", "reply": {"content": '{"reason": "followed the task", "score": 1}'}},
    {"match": "# Property: coherence", "reply": {"content": '{"reason": "clear", "score": 4}'}},
]
# The agent's model: a second step (a tool result in the conversation) answers; a first step calls tools.
AGENT = [
    {"match": "2026-12-03", "reply": {"content": "Order 1042 shipped with DHL and arrives on 3 December."}},
    {"match": "delivered", "reply": {"content": "Yes, order 3107 was delivered."}},
    {"match": "seal is unbroken", "reply": {"content": "Electronics: refund within 14 days if the seal is unbroken."}},
    {"match": "support-tier-2", "reply": {"content": "Order 2001 is still processing; a colleague will call you."}},
    {"match": "no order 9999", "reply": {"content": "I could not find order 9999; please check the number."}},
    {"match": "original payment method", "reply": {"content": "You can return a kettle within 30 days."}},
    {"match": "order 1042", "reply": {"tool_calls": [_call("c1", "lookup_order", order_id="1042")]}},
    {"match": "order 3107", "reply": {"tool_calls": [_call("c2", "lookup_order", order_id="3107")]}},
    {"match": "electronics", "reply": {"tool_calls": [_call("c3", "refund_policy", category="electronics")]}},
    {
        "match": "Order 2001",
        "reply": {
            "tool_calls": [
                _call("c4", "lookup_order", order_id="2001"),
                _call("c5", "escalate_to_human", reason="slow order 2001"),
            ]
        },
    },
    {"match": "order 9999", "reply": {"tool_calls": [_call("c6", "lookup_order", order_id="9999")]}},
    {"match": "kettle", "reply": {"tool_calls": [_call("c7", "refund_policy", category="standard")]}},
]


@pytest.fixture
def agent(llm, tmp_path):
    llm.reset()
    llm.script(rules=JUDGES + AGENT)
    process, url = start_support_agent(llm.base_url, tmp_path / "agent.log")
    yield url
    process.terminate()
    process.wait(timeout=10)


def test_support_agent_example_end_to_end(tmp_path, agent, llm):
    shutil.copy(EXAMPLE / "dataset.jsonl", tmp_path / "dataset.jsonl")
    config = yaml.safe_load((EXAMPLE / "eval.yaml").read_text(encoding="utf-8"))
    config["agents"]["support-agent"]["endpoint"] = agent
    config["models"]["judge"].update(base_url=llm.base_url, api_key="test")
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")

    result = assay("run", str(tmp_path / "eval.yaml"), home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "items: 6 total, 6 passed" in result.stdout, result.stdout
    assert "target: 6 samples, 0 failed; latency p50" in result.stdout
    run_id = result.stdout.split("run id: ")[1].split()[0]
    rows = [json.loads(line) for line in assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()]
    escalation = next(r for r in rows if "2001" in r["datasource_item"]["query"])
    calls = [o["name"] for o in escalation["sample"]["output_items"] if o["type"] == "function_call"]
    assert calls == ["lookup_order", "escalate_to_human"]
    assert escalation["sample"]["output_text"].startswith("Order 2001 is still processing")
    results = {r["name"]: r for r in escalation["results"]}
    assert results["tool_call_accuracy"]["score"] == 5 and results["tools_used"]["passed"]
    assert escalation["sample"]["tool_definitions"][2]["name"] == "escalate_to_human"
    assert escalation["sample"]["usage"]["total_tokens"] > 0  # the agent's own model usage, as it reported it
