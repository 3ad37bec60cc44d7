"""A model target with tools runs as an agent: a scripted model calls a tool until it sees the
tool's result, then answers from it; the sample keeps every call and output, and a tool that
raises is recorded and shown to the model. Tools come from a Python module and from MCP servers
(one written with the official SDK, over stdio)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import assay

TOOLS = '''
from __future__ import annotations


def lookup_order(order_id: str) -> str:
    """Look an order up by its id."""
    return f"order {order_id}: shipped on 2026-11-30"


def refund(order_id: str, reason: str = "") -> dict:
    """Refund an order."""
    raise RuntimeError("refunds are closed today")


def _helper(x: int) -> int:
    return x
'''
MCP_SERVER = '''
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("orders")


@server.tool()
def lookup_order(order_id: str) -> str:
    """Look an order up by its id."""
    return f"order {order_id}: shipped on 2026-11-30"


@server.tool()
def refund(order_id: str, reason: str = "") -> str:
    """Refund an order."""
    raise ToolError("refunds are closed today")  # an error the server means its caller to read


if __name__ == "__main__":
    server.run()
'''


def call(name: str, arguments: dict, call_id: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def script(llm) -> None:
    llm.reset()
    llm.script(
        rules=[  # the first rule whose text is anywhere in the request's messages answers it
            {"match": "shipped on 2026-11-30", "reply": {"content": "Your order 42 shipped on 2026-11-30."}},
            {"match": "refunds are closed today", "reply": {"content": "Sorry: refunds are closed today."}},
            {"match": "Refund order 7", "reply": {"tool_calls": [call("refund", {"order_id": "7"}, "c_refund")]}},
        ],
        default={"tool_calls": [call("lookup_order", {"order_id": "42"}, "c_lookup")]},
    )


def write_project(tmp_path: Path, llm, tools: str) -> Path:
    (tmp_path / "data.jsonl").write_text(
        json.dumps({"query": "Where is order 42?"}) + "\n" + json.dumps({"query": "Refund order 7"}) + "\n"
    )
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: agent\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  bot: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n"
        "target:\n  type: model\n  model: bot\n  instructions: You are the support agent of a small shop.\n"
        f"  tools:\n{tools}  max_tool_rounds: 4\n"
        "evaluators:\n"
        "  - {type: string_check, name: dated, input: '{{sample.output_text}}', reference: '2026-11-30', operation: like}\n"
    )
    return config


def samples(tmp_path: Path, stdout: str) -> dict[int, dict]:
    run_id = stdout.split("run id: ")[1].split()[0]
    lines = assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()
    return {item["datasource_item_id"]: item["sample"] for item in map(json.loads, lines)}


def assert_trajectories(found: dict[int, dict]) -> None:
    shipped, refused = found[0], found[1]
    assert shipped["output_text"] == "Your order 42 shipped on 2026-11-30."
    assert [i["type"] for i in shipped["output_items"]] == ["function_call", "function_call_output", "message"]
    assert shipped["output_items"][0]["name"] == "lookup_order"
    assert json.loads(shipped["output_items"][0]["arguments"]) == {"order_id": "42"}
    assert shipped["output_items"][1] == {
        "type": "function_call_output",
        "call_id": "c_lookup",
        "output": "order 42: shipped on 2026-11-30",
    }
    assert shipped["calls"] == 2 and shipped["usage"]["prompt_tokens"] > 0  # both model calls counted
    assert {t["name"] for t in shipped["tool_definitions"]} == {"lookup_order", "refund"}  # for tool evaluators
    failed = refused["output_items"][1]
    assert failed["call_id"] == "c_refund" and "refunds are closed today" in failed["error"]
    assert refused["output_text"] == "Sorry: refunds are closed today."  # the model saw the error


def test_python_tools_are_executed_in_the_loop(tmp_path, llm):
    script(llm)
    (tmp_path / "tools.py").write_text(TOOLS)
    config = write_project(tmp_path, llm, "    - python: tools.py\n")
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_trajectories(samples(tmp_path, done.stdout))
    sent = llm.stats()["last"]
    assert {t["function"]["name"] for t in sent["tools"]} == {"lookup_order", "refund"}  # not _helper
    assert sent["messages"][0] == {"role": "system", "content": "You are the support agent of a small shop."}
    lookup = next(t["function"] for t in sent["tools"] if t["function"]["name"] == "lookup_order")
    assert lookup["parameters"]["required"] == ["order_id"] and lookup["description"] == "Look an order up by its id."


def test_an_mcp_servers_tools_are_executed_in_the_loop(tmp_path, llm):
    pytest.importorskip("mcp", reason="the mcp SDK is a dev dependency")
    script(llm)
    (tmp_path / "orders_server.py").write_text(MCP_SERVER)
    config = write_project(tmp_path, llm, f"    - mcp: {{command: ['{sys.executable}', orders_server.py]}}\n")
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_trajectories(samples(tmp_path, done.stdout))


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ("    - python\n", "target.tools[0]: 'python' is not a tool source"),
        ("    - {python: missing.py}\n", "target.tools[0].python: no file"),
        ("    - {mcp: {command: python}}\n", "target.tools[0]"),
        ("    - {shell: ls}\n", "target.tools[0]"),
    ],
)
def test_a_tool_source_of_the_wrong_shape_names_the_entry(tmp_path, llm, tools, message):
    config = write_project(tmp_path, llm, tools)
    done = assay("run", config, home=tmp_path)
    assert done.returncode != 0 and message in done.stderr and "eval.yaml:" in done.stderr, done.stderr


def test_a_tools_module_that_will_not_load_stops_the_run_before_any_item(tmp_path, llm):
    script(llm)
    (tmp_path / "tools.py").write_text('raise RuntimeError("no database here")\n')
    config = write_project(tmp_path, llm, "    - python: tools.py\n")
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr  # a usage error, said once: not every item's
    assert "importing it failed: RuntimeError: no database here" in done.stderr
    assert llm.stats()["completions"] == 0  # the model is never asked with tools it cannot use


def test_a_tools_module_without_tools_says_why_each_function_is_not_one(tmp_path, llm):
    (tmp_path / "tools.py").write_text(
        "def lookup_order(order_id):\n    return order_id\n\n\ndef refund(order_id: str):\n    return order_id\n"
    )
    done = assay("run", write_project(tmp_path, llm, "    - python: tools.py\n"), home=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    said = " ".join(done.stderr.split())
    assert "no tools found (lookup_order: no docstring; refund: no docstring)" in said


def test_an_mcp_server_that_cannot_start_says_so(tmp_path, llm):
    pytest.importorskip("mcp", reason="the mcp SDK is a dev dependency")
    config = write_project(tmp_path, llm, "    - mcp: {command: [no-such-mcp-server, --port, '1']}\n")
    done = assay("run", config, home=tmp_path)
    said = " ".join(done.stderr.split())
    assert done.returncode == 2 and "cannot start no-such-mcp-server: No such file or directory" in said, said
    assert "it exited with code 127" in said


def test_an_mcp_server_that_exits_at_start_says_what_it_wrote(tmp_path, llm):
    pytest.importorskip("mcp", reason="the mcp SDK is a dev dependency")
    script(llm)
    (tmp_path / "broken_server.py").write_text(
        "import sys\nprint('error: WEATHER_API_KEY is not set', file=sys.stderr)\nsys.exit(3)\n"
    )
    config = write_project(tmp_path, llm, f"    - mcp: {{command: ['{sys.executable}', broken_server.py]}}\n")
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    said = " ".join(done.stderr.split())
    assert "it exited with code 3; it wrote to stderr: error: WEATHER_API_KEY is not set" in said
    assert "TaskGroup" not in said


HANGING_TOOLS = '''
import time


def lookup_order(order_id: str) -> str:
    """Look an order up by its id."""
    time.sleep(3600)
    return "never"
'''


def test_a_tool_that_never_returns_is_abandoned_at_its_timeout_and_the_model_told(tmp_path, llm):
    llm.reset()
    llm.script(
        rules=[{"match": "did not answer within", "reply": {"content": "The order system is not answering."}}],
        default={"tool_calls": [call("lookup_order", {"order_id": "42"}, "c_lookup")]},
    )
    (tmp_path / "tools.py").write_text(HANGING_TOOLS)
    config = write_project(tmp_path, llm, "    - python: tools.py\n")
    config.write_text(
        config.read_text().replace("  max_tool_rounds: 4\n", "  max_tool_rounds: 4\n  tool_timeout_s: 1\n")
    )
    done = assay("run", config, home=tmp_path, cwd=tmp_path)  # a process of its own: it must exit too
    assert done.returncode == 0, done.stdout + done.stderr
    for sample in samples(tmp_path, done.stdout).values():
        timed_out = sample["output_items"][1]
        assert (
            timed_out["type"] == "function_call_output"
            and "'lookup_order' did not answer within 1 s" in timed_out["error"]
        )
        assert sample["output_text"] == "The order system is not answering."  # the model saw it


def test_a_run_in_which_every_item_errored_exits_3(tmp_path, llm):
    llm.reset()
    llm.script(rules=[], default={"status": 400})  # every call refused: every item errors
    (tmp_path / "tools.py").write_text(TOOLS)
    done = assay("run", write_project(tmp_path, llm, "    - python: tools.py\n"), home=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "nothing could be evaluated: all 2 items errored" in " ".join(done.stdout.split())


@pytest.mark.parametrize(
    ("timeout", "said"),
    [("0", "target.tool_timeout_s: seconds from 0"), ("{default: 5, search: -1}", "target.tool_timeout_s.search")],
)
def test_a_tool_timeout_that_is_not_seconds_is_named(tmp_path, llm, timeout, said):
    (tmp_path / "tools.py").write_text(TOOLS)
    config = write_project(tmp_path, llm, "    - python: tools.py\n")
    config.write_text(config.read_text().replace("  max_tool_rounds: 4\n", f"  tool_timeout_s: {timeout}\n"))
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 2 and said in done.stderr and "eval.yaml:" in done.stderr, done.stderr


HANGING_SERVER = '''
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("orders")


@server.tool()
def lookup_order(order_id: str) -> str:
    """Look an order up by its id."""
    time.sleep(3600)
    return "never"


if __name__ == "__main__":
    server.run()
'''


def test_an_mcp_tool_that_never_answers_is_abandoned_at_its_timeout(tmp_path, llm):
    pytest.importorskip("mcp", reason="the mcp SDK is a dev dependency")
    llm.reset()
    llm.script(
        rules=[{"match": "did not answer within", "reply": {"content": "The order system is not answering."}}],
        default={"tool_calls": [call("lookup_order", {"order_id": "42"}, "c_lookup")]},
    )
    (tmp_path / "hanging_server.py").write_text(HANGING_SERVER)
    config = write_project(tmp_path, llm, f"    - mcp: {{command: ['{sys.executable}', hanging_server.py]}}\n")
    config.write_text(config.read_text().replace("  max_tool_rounds: 4\n", "  tool_timeout_s: 1\n"))
    done = assay("run", config, home=tmp_path, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for sample in samples(tmp_path, done.stdout).values():
        assert "'lookup_order' did not answer within 1 s" in sample["output_items"][1]["error"]
        assert sample["output_text"] == "The order system is not answering."


def with_promptfoo_criterion(config: Path, name: str, parameters: str | None = None) -> Path:
    """``config`` with a criterion judging each row's promptfoo ``assert`` list on its sample."""
    config.write_text(
        config.read_text()
        + f"  - name: {name}\n    evaluator_name: builtin.promptfoo_assertions\n"
        + (f"    initialization_parameters: {parameters}\n" if parameters else "")
        + "    data_mapping: {assertions: '{{item.assert}}', sample: '{{sample}}', output: '{{sample.output_text}}'}\n"
    )
    return config


TRAJECTORY_CHECKS = [
    {"type": "trajectory:tool-used", "value": "lookup_order"},
    {"type": "trajectory:tool-args-match", "value": {"name": "lookup_order", "args": {"order_id": "42"}}},
    {"type": "trajectory:tool-sequence", "value": {"mode": "exact", "steps": ["lookup_order"]}},
    {"type": "trace-span-count", "value": {"pattern": "chat *", "min": 2, "max": 2}},
    {"type": "trace-error-spans", "value": 0},
    {"type": "trajectory:step-count", "value": {"type": "tool", "max": 1}},
]


def test_the_loops_spans_are_the_trajectory_promptfoos_trace_assertions_read(tmp_path, llm):
    """Each model call and each tool run is a span of the sample; promptfoo's trace and trajectory
    assertions judge them: the order lookup passes all six, the refund (its tool raised) fails the
    ones about lookups and errors and passes the rest."""
    script(llm)
    (tmp_path / "tools.py").write_text(TOOLS)
    config = with_promptfoo_criterion(
        write_project(tmp_path, llm, "    - python: tools.py\n"), "trajectory", "{trace_root: support-agent}"
    )
    rows = [{"query": "Where is order 42?"}, {"query": "Refund order 7"}]
    (tmp_path / "data.jsonl").write_text(
        "".join(json.dumps({**row, "assert": TRAJECTORY_CHECKS}) + "\n" for row in rows)
    )
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = done.stdout.split("run id: ")[1].split()[0]
    items = {
        item["datasource_item_id"]: item
        for item in map(json.loads, assay("results", run_id, home=tmp_path, check=True).stdout.splitlines())
    }
    spans = items[0]["sample"]["spans"]
    assert [span["name"] for span in spans] == ["chat m", "execute_tool lookup_order", "chat m"]
    assert all(span["start_ms"] <= span["end_ms"] for span in spans)
    assert json.loads(spans[1]["attributes"]["gen_ai.tool.call.arguments"]) == {"order_id": "42"}
    refund = items[1]["sample"]["spans"][1]
    assert refund["status_code"] == 2 and "refunds are closed today" in refund["status_message"]

    def verdicts(index: int) -> list[bool]:
        (judged,) = [r for r in items[index]["results"] if r["name"] == "trajectory"]
        return [component["pass"] for component in judged["properties"]["assertions"]]

    assert verdicts(0) == [True, True, True, True, True, True]
    assert verdicts(1) == [False, False, False, True, False, True]


SKILL_TOOLS = '''
def Skill(skill: str) -> str:
    """Load an Agent Skill by name."""
    if skill == "pptx":
        raise RuntimeError("no such skill")
    return f"skill {skill} loaded"
'''


def test_skill_tool_calls_are_the_skills_promptfoos_skill_used_reads(tmp_path, llm):
    """A ``Skill`` tool called in the loop is a skill used; one whose call failed is not."""
    llm.reset()
    llm.script(
        rules=[
            {"match": "no such skill", "reply": {"content": "That skill is missing."}},
            {"match": "skill pdf loaded", "reply": {"tool_calls": [call("Skill", {"skill": "pptx"}, "c_pptx")]}},
        ],
        default={"tool_calls": [call("Skill", {"skill": "pdf"}, "c_pdf")]},
    )
    (tmp_path / "tools.py").write_text(SKILL_TOOLS)
    config = with_promptfoo_criterion(write_project(tmp_path, llm, "    - python: tools.py\n"), "skills")
    checks = [
        {"type": "skill-used", "value": "pdf"},
        {"type": "skill-used", "value": "pptx"},  # called, but it failed
        {"type": "not-skill-used", "value": "xlsx"},
        {"type": "skill-used", "value": {"pattern": "p*", "max": 1}},
    ]
    (tmp_path / "data.jsonl").write_text(json.dumps({"query": "Make a deck", "assert": checks}) + "\n")
    done = assay("run", config, home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = done.stdout.split("run id: ")[1].split()[0]
    (item,) = map(json.loads, assay("results", run_id, home=tmp_path, check=True).stdout.splitlines())
    (judged,) = [r for r in item["results"] if r["name"] == "skills"]
    assert [c["pass"] for c in judged["properties"]["assertions"]] == [True, False, True, True]
    assert "Actual skills: pdf (tool)" in judged["properties"]["assertions"][1]["reason"]
