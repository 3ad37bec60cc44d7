"""promptfoo's trace assertions on one agent's trace, and ``skill-used`` on its skill calls, judged
by promptfoo and by assay.

promptfoo judges ``trace-*`` and ``trajectory:*`` assertions on the spans its tracing collected for
a test; assay on the spans its target kept. Which spans a run makes is each tool's own (the
end-to-end cases in ``promptfoo_diff`` compare those); what the assertions make of a trace is
compared here, on one trace with every kind of step promptfoo reads: model calls, tool calls named
by GenAI or ``tool.*`` attributes or by an MCP span name, a failed tool, commands (a span named
``exec ...``, a shell tool's command list), searches, reasoning, a message, an HTTP error.

promptfoo's side is its public API, ``assertions.runAssertion`` given the trace
(``traceData``); assay's is the same assertion through ``builtin.promptfoo_assertions``' checks.
An assertion either tool refuses must be refused by both.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from assay.errors import ItemError
from assay.evaluators.promptfoo import DETERMINISTIC, base_type
from assay.evaluators.promptfoo.checks import Seen


def _span(
    span_id: str, name: str, start: int, end: int, attributes: dict[str, Any] | None = None, **status: Any
) -> dict[str, Any]:
    return {
        "spanId": span_id,
        "parentSpanId": "root",
        "name": name,
        "startTime": start,
        "endTime": end,
        "statusCode": status.get("code", 1),
        **({"statusMessage": status["message"]} if "message" in status else {}),
        "attributes": attributes or {},
    }


REFUND_ARGS = '{"order_id":"7","reason":"late","amount":12.5}'
SPANS = [
    _span("root", "support-agent", 0, 1000),
    _span("a", "chat gpt-4.1-mini", 10, 200, {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1-mini"}),
    _span(
        "b",
        "execute_tool lookup_order",
        210,
        260,
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup_order",
            "gen_ai.tool.call.arguments": '{"order_id": "42", "verbose": false}',
        },
    ),
    _span("c", "chat gpt-4.1-mini", 270, 500, {"gen_ai.operation.name": "chat"}),
    _span(
        "d",
        "execute_tool refund",
        510,
        900,
        {"gen_ai.tool.name": "refund", "gen_ai.tool.call.arguments": REFUND_ARGS},
        code=2,
        message="refunds are closed today",
    ),
    _span("e", "exec ls -la", 905, 910),
    _span("f", 'search "weather"', 911, 920),
    _span("g", "reasoning", 921, 925),
    _span("h", "agent response", 926, 930),
    _span("i", "mcp tools/call server/get_time", 931, 940),
    _span("j", "shell call", 941, 950, {"tool.name": "shell", "tool.arguments": '{"command": ["git", "status"]}'}),
    _span("k", "http GET", 951, 960, {"http.status_code": 503}, code=0),
    _span("l", "retrieval step", 961, 970, {"query": "docs about refunds"}, code=0),
]

TOOL_ARGS = "trajectory:tool-args-match"
CASES: list[tuple[str, dict[str, Any]]] = [
    ("count-chat", {"type": "trace-span-count", "value": {"pattern": "chat*", "min": 2}}),
    ("count-chat-max", {"type": "trace-span-count", "value": {"pattern": "chat*", "max": 1}}),
    ("count-glob", {"type": "trace-span-count", "value": {"pattern": "execute_tool ?efund"}}),
    ("count-case", {"type": "trace-span-count", "value": {"pattern": "CHAT *", "min": 1, "max": 3}}),
    ("count-none", {"type": "trace-span-count", "value": {"pattern": "nothing*", "min": 1}}),
    ("count-no-pattern", {"type": "trace-span-count", "value": {"min": 1}}),
    ("duration-all", {"type": "trace-span-duration", "value": {"max": 1000}}),
    ("duration-tools", {"type": "trace-span-duration", "value": {"max": 100, "pattern": "execute_tool*"}}),
    ("duration-p50", {"type": "trace-span-duration", "value": {"max": 300, "percentile": 50}}),
    ("duration-p95-chat", {"type": "trace-span-duration", "value": {"max": 10, "percentile": 95, "pattern": "chat*"}}),
    ("duration-none", {"type": "trace-span-duration", "value": {"max": 5, "pattern": "none*"}}),
    ("duration-bad-percentile", {"type": "trace-span-duration", "value": {"max": 5, "percentile": 101}}),
    ("errors-zero", {"type": "trace-error-spans", "value": 0}),
    ("errors-default", {"type": "trace-error-spans"}),
    ("errors-count", {"type": "trace-error-spans", "value": {"max_count": 2}}),
    ("errors-share", {"type": "trace-error-spans", "value": {"max_percentage": 10}}),
    ("errors-share-tools", {"type": "trace-error-spans", "value": {"max_percentage": 50, "pattern": "execute_tool*"}}),
    ("errors-chat", {"type": "trace-error-spans", "value": {"pattern": "chat*"}}),
    ("used-one", {"type": "trajectory:tool-used", "value": "lookup_order"}),
    ("used-two", {"type": "trajectory:tool-used", "value": ["lookup_order", "refund"]}),
    ("used-missing", {"type": "trajectory:tool-used", "value": ["lookup_order", "cancel_order"]}),
    ("used-glob", {"type": "trajectory:tool-used", "value": "look*"}),
    ("used-count", {"type": "trajectory:tool-used", "value": {"name": "lookup_order", "min": 2}}),
    ("used-count-max", {"type": "trajectory:tool-used", "value": {"pattern": "*", "max": 3}}),
    ("used-mcp", {"type": "trajectory:tool-used", "value": "get_time"}),
    ("used-empty", {"type": "trajectory:tool-used", "value": []}),
    ("not-used", {"type": "not-trajectory:tool-used", "value": "cancel_order"}),
    ("not-used-fails", {"type": "not-trajectory:tool-used", "value": "refund"}),
    ("not-used-count", {"type": "not-trajectory:tool-used", "value": {"name": "refund", "max": 1}}),
    ("sequence", {"type": "trajectory:tool-sequence", "value": ["lookup_order", "refund"]}),
    ("sequence-reversed", {"type": "trajectory:tool-sequence", "value": ["refund", "lookup_order"]}),
    (
        "sequence-exact-short",
        {"type": "trajectory:tool-sequence", "value": {"mode": "exact", "steps": ["lookup_order", "refund"]}},
    ),
    (
        "sequence-exact",
        {
            "type": "trajectory:tool-sequence",
            "value": {"mode": "exact", "steps": ["lookup_order", "refund", "get_time"]},
        },
    ),
    (
        "sequence-objects",
        {"type": "trajectory:tool-sequence", "value": {"steps": [{"name": "lookup*"}, {"pattern": "get_*"}]}},
    ),
    ("sequence-unnamed", {"type": "trajectory:tool-sequence", "value": [{"type": "tool"}]}),
    ("not-sequence", {"type": "not-trajectory:tool-sequence", "value": ["refund", "lookup_order"]}),
    ("args-partial", {"type": TOOL_ARGS, "value": {"name": "lookup_order", "args": {"order_id": "42"}}}),
    (
        "args-exact-fails",
        {"type": TOOL_ARGS, "value": {"name": "lookup_order", "args": {"order_id": "42"}, "mode": "exact"}},
    ),
    (
        "args-exact-defaults",
        {
            "type": TOOL_ARGS,
            "value": {
                "name": "lookup_order",
                "args": {"order_id": "42"},
                "mode": "exact",
                "defaults": {"verbose": False},
            },
        },
    ),
    (
        "args-exact-ignore",
        {
            "type": TOOL_ARGS,
            "value": {"name": "refund", "arguments": {"order_id": "7"}, "mode": "exact", "ignore": ["reason", "amo*"]},
        },
    ),
    ("args-number", {"type": TOOL_ARGS, "value": {"name": "refund", "args": {"amount": 12.5}}}),
    ("args-type", {"type": TOOL_ARGS, "value": {"name": "refund", "args": {"order_id": 7}}}),
    ("args-no-tool", {"type": TOOL_ARGS, "value": {"name": "cancel", "args": {}}}),
    ("args-no-args-captured", {"type": TOOL_ARGS, "value": {"name": "get_time", "args": {}}}),
    ("args-bad-mode", {"type": TOOL_ARGS, "value": {"name": "refund", "args": {}, "mode": "fuzzy"}}),
    ("args-missing", {"type": TOOL_ARGS, "value": {"name": "refund"}}),
    ("not-args", {"type": f"not-{TOOL_ARGS}", "value": {"name": "refund", "args": {"order_id": "7"}}}),
    ("steps-tools", {"type": "trajectory:step-count", "value": {"type": "tool", "min": 2}}),
    ("steps-kinds", {"type": "trajectory:step-count", "value": {"type": ["command", "search"], "max": 1}}),
    ("steps-all", {"type": "trajectory:step-count", "value": {"min": 5}}),
    ("steps-chat", {"type": "trajectory:step-count", "value": {"pattern": "chat*", "min": 2, "max": 2}}),
    ("steps-reasoning", {"type": "trajectory:step-count", "value": {"type": "reasoning", "max": 0}}),
    ("steps-message", {"type": "trajectory:step-count", "value": {"type": "message", "min": 1}}),
    ("steps-commands", {"type": "trajectory:step-count", "value": {"type": "command", "min": 2, "max": 2}}),
    ("steps-search", {"type": "trajectory:step-count", "value": {"type": "search", "pattern": "weather", "min": 1}}),
    ("steps-git", {"type": "trajectory:step-count", "value": {"type": "command", "pattern": "git", "min": 1}}),
    ("steps-no-bounds", {"type": "trajectory:step-count", "value": {"type": "tool"}}),
    ("not-steps", {"type": "not-trajectory:step-count", "value": {"type": "tool", "min": 2}}),
]

SKILL_CALLS = [
    {"name": "pdf", "input": {"skill": "pdf"}, "source": "tool"},
    {"name": "xlsx", "input": {"skill": "xlsx"}, "source": "tool", "path": ".claude/skills/xlsx"},
    {"name": "pdf", "input": {"skill": "pdf"}, "source": "tool"},
    {"name": "docx", "input": {"skill": "docx"}, "is_error": True, "source": "tool"},
]
"""What the agent reported invoking (promptfoo: its Claude Agent SDK provider's ``skillCalls``); the
failed ``docx`` call counts for neither."""
CASES += [
    ("skill-one", {"type": "skill-used", "value": "pdf"}),
    ("skill-two", {"type": "skill-used", "value": ["pdf", "xlsx"]}),
    ("skill-failed", {"type": "skill-used", "value": "docx"}),
    ("skill-missing", {"type": "skill-used", "value": ["pdf", "pptx"]}),
    ("skill-count", {"type": "skill-used", "value": {"name": "pdf", "min": 2, "max": 2}}),
    ("skill-count-over", {"type": "skill-used", "value": {"name": "pdf", "max": 1}}),
    ("skill-pattern", {"type": "skill-used", "value": {"pattern": "x*"}}),
    ("skill-bad-count", {"type": "skill-used", "value": {"name": "pdf", "min": 1.5}}),
    ("skill-inverted-bounds", {"type": "skill-used", "value": {"name": "pdf", "min": 3, "max": 1}}),
    ("skill-no-name", {"type": "skill-used", "value": {"min": 1}}),
    ("skill-empty-list", {"type": "skill-used", "value": []}),
    ("not-skill", {"type": "not-skill-used", "value": "docx"}),
    ("not-skill-fails", {"type": "not-skill-used", "value": ["pdf", "pptx"]}),
    ("not-skill-object", {"type": "not-skill-used", "value": {"pattern": "p*"}}),
    ("not-skill-max-zero", {"type": "not-skill-used", "value": {"name": "pptx", "max": 0}}),
    ("not-skill-bounded", {"type": "not-skill-used", "value": {"name": "pdf", "min": 1}}),
]

RUNNER = """
import { readFileSync } from 'node:fs';
const [module, cases, spansFile, skillsFile] = process.argv.slice(2);
const { assertions } = await import(module);
const spans = JSON.parse(readFileSync(spansFile, 'utf8'));
const skillCalls = JSON.parse(readFileSync(skillsFile, 'utf8'));
const found = {};
for (const [name, assertion] of JSON.parse(readFileSync(cases, 'utf8'))) {
  try {
    const traceData = { traceId: 'trace-1', spans };
    const r = await assertions.runAssertion({
      assertion, test: { vars: {} }, providerResponse: { output: 'done', metadata: { skillCalls } },
      traceId: 'trace-1', traceData,
    });
    found[name] = { pass: r.pass, score: r.score, reason: r.reason };
  } catch (e) {
    found[name] = { error: String(e && e.message ? e.message : e) };
  }
}
console.log(JSON.stringify(found));
"""


def theirs(folder: Path, promptfoo_home: Path) -> dict[str, dict[str, Any]]:
    """promptfoo's verdict on each case: ``{pass, score, reason}``, or ``{error}`` when it refuses it."""
    (folder / "trace-cases.json").write_text(json.dumps(CASES))
    (folder / "trace-spans.json").write_text(json.dumps(SPANS))
    (folder / "skill-calls.json").write_text(json.dumps(SKILL_CALLS))
    (folder / "traces.mjs").write_text(RUNNER)
    module = promptfoo_home / "node_modules" / "promptfoo" / "dist" / "src" / "index.js"
    node = promptfoo_home / "node_modules" / ".bin" / "node"
    env = {"PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo-traces")}
    ran = subprocess.run(
        [str(node), "traces.mjs", str(module), "trace-cases.json", "trace-spans.json", "skill-calls.json"],
        cwd=folder,
        env={**env, "PATH": str(node.parent), "HOME": str(folder)},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    found: dict[str, dict[str, Any]] = json.loads(ran.stdout.strip().splitlines()[-1])
    return found


def ours() -> dict[str, dict[str, Any]]:
    """assay's verdict on each case, as ``theirs`` gives promptfoo's."""
    found: dict[str, dict[str, Any]] = {}
    for name, assertion in CASES:
        kind, inverse = base_type(str(assertion["type"]))
        seen = Seen("done", {"skill_calls": SKILL_CALLS}, {}, "", trace={"traceId": "trace-1", "spans": SPANS})
        try:
            verdict = DETERMINISTIC[kind](assertion, seen, inverse)
        except ItemError as exc:
            found[name] = {"error": str(exc)}
            continue
        found[name] = {"pass": verdict.passed, "score": verdict.score, "reason": verdict.reason}
    return found
