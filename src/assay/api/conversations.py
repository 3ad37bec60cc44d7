"""The Conversations API's items, and what a response in a conversation does with them.

A conversation holds Responses API items (messages, function calls and their outputs) in order.
``responses.create(conversation=id, input=...)`` answers with the conversation's items before the
new input, then appends the new input and the response's output to it, as OpenAI and Foundry do.
A response an agent gave is also kept as an ``invoke_agent`` span, the way Foundry traces its
agents, so trace data sources and dataset generation find the agent's conversations."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from assay.errors import ConfigError
from assay.traces.spans import Span

MAX_ITEMS_PER_CALL = 20
"""OpenAI's limit on the items one ``conversations.create`` or ``items.create`` adds."""
MAX_ID = 128
ASSISTANT_TEXT = "output_text"
OTHER_TEXT = "input_text"


def normalized_items(raw: Any, where: str) -> list[dict[str, Any]]:
    """Input items as a conversation keeps them: typed, with an id and a status; a message's text
    content as parts (``input_text``, or ``output_text`` for the assistant)."""
    if raw is None:
        return []
    if isinstance(raw, str):
        raw = [{"type": "message", "role": "user", "content": raw}]
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected a list of items")
    return [_item(entry, f"{where}[{index}]") for index, entry in enumerate(raw)]


def _item(entry: Any, where: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: an item is an object such as {{role: user, content: ...}}")
    item = dict(entry)
    kind = item.setdefault("type", "message" if "role" in item else None)
    if not isinstance(kind, str):
        raise ConfigError(f"{where}: an item needs a type (message, function_call, function_call_output, ...)")
    if kind == "message":
        role = item.get("role")
        if role not in ("user", "assistant", "system", "developer"):
            raise ConfigError(f"{where}.role: expected user, assistant, system or developer")
        content = item.get("content")
        if isinstance(content, str):
            part = ASSISTANT_TEXT if role == "assistant" else OTHER_TEXT
            item["content"] = [{"type": part, "text": content}]
        elif not isinstance(content, list):
            raise ConfigError(f"{where}.content: expected text or a list of content parts")
    given = item.get("id")
    if given is not None and (not isinstance(given, str) or not 0 < len(given) <= MAX_ID):
        raise ConfigError(f"{where}.id: an item id is a string of 1 to {MAX_ID} characters")
    item.setdefault("id", f"{'msg' if kind == 'message' else 'item'}_{secrets.token_hex(16)}")
    item.setdefault("status", "completed")
    return item


def output_items(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """A response's output items as the conversation keeps them: as the model gave them, each with
    an id (a provider that gave none gets one)."""
    given = reply.get("output")
    items: list[Any] = given if isinstance(given, list) else []
    return [
        item if item.get("id") else {**item, "id": f"item_{secrets.token_hex(16)}"}
        for item in items
        if isinstance(item, dict)
    ]


def upstream_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items as a model's Responses endpoint takes them: without the ids and statuses the
    conversation gave them (a provider would look those ids up as its own)."""
    return [{key: value for key, value in item.items() if key not in ("id", "status")} for item in items]


def conversation_id(body: dict[str, Any]) -> str | None:
    """``conversation``: an id, or ``{id}``."""
    given = body.get("conversation")
    if given is None:
        return None
    if isinstance(given, dict):
        given = given.get("id")
    if not isinstance(given, str) or not given:
        raise ConfigError('conversation: expected a conversation id, or {"id": <a conversation id>}')
    return given


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and "text" in p)
    return ""


def _parts(item: dict[str, Any]) -> dict[str, Any] | None:
    """One Responses item as an OpenTelemetry GenAI parts-model message."""
    kind = item.get("type", "message")
    if kind == "message":
        return {
            "role": item.get("role") or "user",
            "parts": [{"type": "text", "content": _text_of(item.get("content"))}],
        }
    if kind == "function_call":
        arguments = item.get("arguments")
        try:
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            pass
        call = {"type": "tool_call", "id": item.get("call_id"), "name": item.get("name"), "arguments": arguments}
        return {"role": "assistant", "parts": [call]}
    if kind == "function_call_output":
        result = {"type": "tool_call_response", "id": item.get("call_id"), "response": item.get("output")}
        return {"role": "tool", "parts": [result]}
    return None


def agent_span(
    agent: str,
    version: str | None,
    conversation: str | None,
    inputs: list[dict[str, Any]],
    reply: dict[str, Any],
    instructions: str | None,
    started: float,
) -> Span:
    """The ``invoke_agent`` span of one response an agent gave: what it was asked (``inputs``, the
    conversation's earlier items included) and what it answered, in the GenAI conventions."""
    outputs = [message for item in reply.get("output") or [] if (message := _parts(item)) is not None]
    if outputs and outputs[-1]["role"] == "assistant":
        outputs[-1]["finish_reason"] = "stop"
    usage = reply.get("usage") or {}
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.agent.id": f"{agent}:{version}" if version else agent,
        "gen_ai.conversation.id": conversation or str(reply.get("id") or ""),
        "gen_ai.response.id": str(reply.get("id") or ""),
        "gen_ai.request.model": str(reply.get("model") or ""),
        "gen_ai.input.messages": json.dumps([m for item in inputs if (m := _parts(item)) is not None]),
        "gen_ai.output.messages": json.dumps(outputs),
        "gen_ai.usage.input_tokens": int(usage.get("input_tokens") or 0),
        "gen_ai.usage.output_tokens": int(usage.get("output_tokens") or 0),
    }
    if version:
        attributes["gen_ai.agent.version"] = version
    if instructions:
        attributes["gen_ai.system_instructions"] = json.dumps([{"type": "text", "content": instructions}])
    return Span(
        trace_id=secrets.token_hex(16),
        span_id=secrets.token_hex(8),
        name=f"invoke_agent {agent}",
        kind=2,
        start_ns=int(started * 1e9),
        end_ns=time.time_ns(),
        attributes=attributes,
        resource={"service.name": "assay", "gen_ai.agent.name": agent},
    )
