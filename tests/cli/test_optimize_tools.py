"""The optimizer scores the agent as an agent: in a scripted world where the right answer needs a
tool's result, the baseline's instructions never call the tool, and the reflection proposes "look
the order up", the starred candidate calls the tool (run in the loop) and its score rises."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.cli.test_cli import assay
from tests.cli.test_optimize import BASELINE, job, score
from tests.targets.test_agent_loop import call

RULE = "RULE:lookup Look the order up with lookup_order before answering."
TOOLS = '''
def lookup_order(order_id: str) -> str:
    """Look an order up by its number."""
    return f"order {order_id}: delivered on 2026-11-28"
'''


def tool_world(llm) -> list[dict]:
    """The scripted world: only the tool's result answers; the reflection proposes the lookup.
    Its tasks, returned, each need the order's delivery date."""
    llm.reset()
    llm.script(
        rules=[  # the first rule whose text is in the request answers it
            {"match": "# How it did", "reply": {"content": json.dumps({"instructions": BASELINE + RULE})}},
            {"match": "RESPONSE:\\nIt was delivered on 2026-11-28", "reply": score(1, "it gives the delivery date")},
            {"match": "# Property: task criterion", "reply": score(0, "it does not say when the order arrived")},
            {"match": "# Property: task adherence", "reply": score(1, "on task")},
            {"match": "delivered on 2026-11-28", "reply": {"content": "It was delivered on 2026-11-28."}},
            {"match": "RULE:lookup", "reply": {"tool_calls": [call("lookup_order", {"order_id": "4001"}, "c1")]}},
        ],
        default={"content": "Sorry, I cannot see your order."},
    )
    return [
        {
            "name": f"where_{i}",
            "query": f"When did my order {4000 + i} arrive?",
            "criteria": [{"name": "delivery_date", "instruction": "Response must give the order's delivery date"}],
        }
        for i in range(1, 13)
    ]


def test_the_starred_candidate_calls_the_tool_and_scores_higher(tmp_path, llm):
    tasks = tool_world(llm)
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / ".agent_configs" / "baseline").mkdir(parents=True)
    (tmp_path / ".agent_configs" / "baseline" / "instructions.md").write_text(BASELINE)
    (tmp_path / ".agent_configs" / "baseline" / "metadata.yaml").write_text("instruction_file: instructions.md\n")
    models = {n: {"model": f"{n}-m", "base_url": llm.base_url, "api_key": "t"} for n in ("agent", "judge", "opt")}
    agent = {"name": "shop", "config": ".agent_configs/baseline/metadata.yaml", "model": "agent"}
    (tmp_path / "eval.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "orders",
                "agent": {**agent, "tools": [{"python": "tools.py"}]},  # tools.json describes; tools.py does
                "dataset": {"local_uri": "tasks.jsonl"},
                "models": models,
                "evaluators": ["builtin.task_adherence"],
                "options": {"eval_model": "judge", "optimization_model": "opt"},
            }
        )
    )
    found = job(assay("optimize", "--config", str(tmp_path / "eval.yaml"), "--output", "json", home=tmp_path))
    best, baseline = found["result"]["best"], found["result"]["baseline"]
    assert found["result"]["starred"] is True and found["result"]["gain"] == pytest.approx(0.5)
    assert set(baseline["task_scores"].values()) == {0.5} and set(best["task_scores"].values()) == {1.0}
    # The report: validation and test apart, Pareto as dominance on validation, a small test split flagged.
    assert best["validation_score"] == best["avg_score"] == 1.0 and baseline["validation_score"] == 0.5
    assert best["test_score"] == 1.0 and baseline["test_score"] == 0.5
    assert best["is_pareto_optimal"] is True and baseline["is_pareto_optimal"] is False
    assert any("under 30" in warning for warning in found["result"]["warnings"])
    # The starred candidate's runs called the tool and answered from its result.
    listed = assay("results", best["eval_run_id"], home=tmp_path, check=True).stdout.splitlines()
    sample = json.loads(listed[0])["sample"]
    assert {json.loads(line)["sample"]["trial"] for line in listed} == {0, 1, 2}  # each task scored 3 times
    assert [i["type"] for i in sample["output_items"]] == ["function_call", "function_call_output", "message"]
    assert sample["output_items"][1]["output"].endswith("delivered on 2026-11-28")


@pytest.mark.parametrize(
    ("implemented", "missing"),
    [(None, "lookup_order, cancel_order"), ("tools.py", "cancel_order")],
    ids=["no-implementation", "one-of-two"],
)
def test_an_agent_whose_described_tools_nothing_implements_is_not_optimized(tmp_path, llm, implemented, missing):
    """``assay eval generate`` writes tools.json descriptions; tools nothing implements would be
    offered to the model and never run, the agent judged on empty answers: refused, each named."""
    llm.reset()
    folder = tmp_path / ".agent_configs" / "baseline"
    folder.mkdir(parents=True)
    (folder / "instructions.md").write_text(BASELINE)
    (folder / "metadata.yaml").write_text("instruction_file: instructions.md\ntools_file: tools.json\n")
    described = [{"name": name, "description": f"{name} by number"} for name in ("lookup_order", "cancel_order")]
    (folder / "tools.json").write_text(json.dumps(described))
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"name": "t1", "query": "When did order 4001 arrive?"}) + "\n")
    models = {n: {"model": f"{n}-m", "base_url": llm.base_url, "api_key": "t"} for n in ("agent", "judge", "opt")}
    agent = {"name": "shop", "config": ".agent_configs/baseline/metadata.yaml", "model": "agent"}
    if implemented:
        agent["tools"] = [{"python": implemented}]
    (tmp_path / "eval.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "orders",
                "agent": agent,
                "dataset": {"local_uri": "tasks.jsonl"},
                "models": models,
                "evaluators": ["builtin.task_adherence"],
                "options": {"eval_model": "judge", "optimization_model": "opt"},
            }
        )
    )
    refused = assay("optimize", "--config", str(tmp_path / "eval.yaml"), home=tmp_path)
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 2 and f"the agent's tools {missing} are described" in said, refused.stderr
    assert "agent: tools: [{python: tools.py}]" in said
    assert llm.stats()["completions"] == 0  # nothing was scored


def test_eval_generate_writes_stubs_of_the_described_tools_that_optimize_then_runs(tmp_path):
    """tools.json only describes: the generated project gets tools.py with a stub of each (its
    docstring and typed parameters, raising until filled in) and eval.yaml's agent names it, so the
    optimizer's check finds every tool implemented; a tools.py the user wrote is never replaced."""
    from assay.config.agents import AgentDefinition
    from assay.evalgen.layout import write_project
    from assay.sync import run_sync
    from assay.targets.tools import open_tools

    described = (
        {
            "name": "lookup_order",
            "description": "Find an order",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["order_id"],
            },
        },
        {"name": "escalate", "description": "Open a ticket"},
    )
    agent = AgentDefinition("Help.", tools=described, name="shop")
    out = tmp_path / "eval.yaml"
    write_project(tmp_path, "orders", agent, [], [], out_file=out, eval_model="m", evaluators=[], max_samples=5)
    assert yaml.safe_load(out.read_text())["agent"]["tools"] == [{"python": "tools.py"}]
    tools = open_tools([{"python": str(tmp_path / "tools.py")}])

    async def called():
        await tools.ready()
        try:
            definitions = {d["function"]["name"]: d["function"] for d in tools.definitions()}
            return definitions, await tools.call("c1", "lookup_order", '{"order_id": "7"}')
        finally:
            await tools.aclose()

    definitions, result = run_sync(called())
    assert set(definitions) == {"lookup_order", "escalate"}
    assert definitions["lookup_order"]["parameters"]["required"] == ["order_id"]
    assert definitions["lookup_order"]["description"] == "Find an order"
    assert "NotImplementedError: lookup_order is a stub" in result.error
    (tmp_path / "tools.py").write_text("# mine\n")
    write_project(tmp_path, "orders", agent, [], [], out_file=out, eval_model="m", evaluators=[], max_samples=5)
    assert (tmp_path / "tools.py").read_text() == "# mine\n"
