"""How inputs appear in a judge prompt: conversations as numbered turns with tool calls and results."""

from __future__ import annotations

import json
from typing import Any

from assay.messages import Message, TextPart, ToolCall, ToolResult, normalize, normalize_tool_definitions


def conversation(messages: list[Message]) -> str:
    """``SYSTEM_PROMPT:`` / ``User turn N:`` / ``Agent turn N:`` blocks, tool calls as ``[TOOL_CALL]`` lines."""
    lines: list[str] = []
    user_turn = agent_turn = 0
    previous = None
    for message in messages:
        if message.role in ("system", "developer"):
            lines.append(f"SYSTEM_PROMPT:\n{message.text}")
            previous = None
            continue
        if message.role == "user":
            user_turn += 1
            lines.append(f"User turn {user_turn}:\n{message.text}")
            previous = "user"
            continue
        if previous != "agent":
            agent_turn += 1
            lines.append(f"Agent turn {agent_turn}:")
            previous = "agent"
        lines.extend(_agent_parts(message))
    return "\n".join(lines)


def _agent_parts(message: Message) -> list[str]:
    out = []
    for part in message.content:
        if isinstance(part, TextPart) and part.text:
            out.append(part.text)
        elif isinstance(part, ToolCall):
            out.append(f"[TOOL_CALL] {call_text(part)}")
        elif isinstance(part, ToolResult):
            out.append(f"[TOOL_RESULT] {_compact(part.result)}")
    return out


def call_text(call: ToolCall) -> str:
    args = call.arguments
    if isinstance(args, dict):
        inner = ", ".join(f"{key}={_compact(value)}" for key, value in args.items())
    else:
        inner = _compact(args)
    return f"{call.name}({inner})"


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def value_text(name: str, value: Any) -> str:
    """Any input as the judge should read it."""
    if value is None:
        return ""
    if name == "tool_definitions":
        tools = normalize_tool_definitions(value)
        return "\n".join(
            f"- {tool.name}: {tool.description}\n  parameters: {json.dumps(tool.parameters, ensure_ascii=False)}"
            for tool in tools
        )
    if name == "tool_calls":
        return "\n".join(f"[TOOL_CALL] {call_text(call)}" for call in tool_calls_in(value))
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, dict) and ("role" in v or "type" in v) for v in value):
        role = "user" if name == "query" else "assistant"
        return conversation(normalize(value, default_role=role, where=name))  # type: ignore[arg-type]
    return json.dumps(value, ensure_ascii=False, indent=1)


def tool_calls_in(value: Any) -> list[ToolCall]:
    """Tool calls given as Foundry parts, OpenAI chat calls, Responses items or whole messages."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    messages: list[Any] = []
    for raw in items:
        if isinstance(raw, dict) and "role" not in raw and raw.get("type") == "tool_call":
            messages.append({"role": "assistant", "content": [raw]})
        elif isinstance(raw, dict) and "role" not in raw and isinstance(raw.get("function"), dict):
            messages.append({"role": "assistant", "tool_calls": [raw]})
        else:
            messages.append(raw)
    return [
        call
        for message in normalize(messages, default_role="assistant", where="tool_calls")
        for call in message.tool_calls
    ]
