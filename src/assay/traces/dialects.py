"""What a span says went into and came out of a model or agent, in any of four dialects.

Each reader turns one span into an ``Exchange`` of OpenAI chat-style messages, which
``messages.normalize`` then reads like any dataset row:

- current GenAI conventions: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (parts model),
  ``gen_ai.system_instructions``, ``gen_ai.tool.definitions``, as JSON strings or structured values;
- older event-based messages: span events ``gen_ai.{system,user,assistant,tool}.message`` and
  ``gen_ai.choice`` (Azure SDKs put the message in ``gen_ai.event.content``), and the oldest
  ``gen_ai.content.prompt|completion`` events;
- OpenLLMetry: ``gen_ai.prompt.{i}.*``, ``gen_ai.completion.{i}.*``, ``llm.request.functions.{i}.*``;
- OpenInference: ``llm.input_messages.{i}.message.*``, ``llm.output_messages.{i}.message.*``,
  ``llm.tools.{i}.tool.json_schema``.

Content that should be JSON but does not parse (an exporter cut it at its length limit) is noted
as a problem, never guessed at.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from assay.traces.spans import Span

Chat = dict[str, Any]


@dataclass
class Exchange:
    inputs: list[Chat] = field(default_factory=list)
    """System instructions first, then the input messages, in chat form."""
    outputs: list[Chat] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    finish_reasons: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    dialect: str = ""

    @property
    def empty(self) -> bool:
        return not self.inputs and not self.outputs


def read_exchange(span: Span) -> Exchange:
    """The first dialect that finds messages on this span wins; tool definitions come from any."""
    found = Exchange()
    for reader in (_current, _events, _openllmetry, _openinference):
        exchange = reader(span)
        found.problems += exchange.problems
        found.tools = found.tools or exchange.tools
        if not exchange.empty and found.empty:
            found.inputs, found.outputs = exchange.inputs, exchange.outputs
            found.finish_reasons, found.dialect = exchange.finish_reasons, exchange.dialect
    return found


# current conventions --------------------------------------------------------------------------


def _current(span: Span) -> Exchange:
    attributes, out = span.attributes, Exchange(dialect="gen_ai")
    system = _json(attributes.get("gen_ai.system_instructions"), "gen_ai.system_instructions", out)
    if system:
        parts = system if isinstance(system, list) else [system]
        text = "\n".join(_part_text(p) for p in parts if _part_text(p))
        if text:
            out.inputs.append({"role": "system", "content": text})
    for raw in _json(attributes.get("gen_ai.input.messages"), "gen_ai.input.messages", out) or []:
        out.inputs += _from_parts(raw)
    for raw in _json(attributes.get("gen_ai.output.messages"), "gen_ai.output.messages", out) or []:
        out.outputs += _from_parts(raw)
        if isinstance(raw, dict) and raw.get("finish_reason"):
            out.finish_reasons.append(str(raw["finish_reason"]))
    out.tools = _tools(_json(attributes.get("gen_ai.tool.definitions"), "gen_ai.tool.definitions", out))
    return out


def _from_parts(raw: Any) -> list[Chat]:
    """A parts-model message ``{role, parts}`` as chat messages (tool results become tool messages)."""
    if not isinstance(raw, dict):
        return []
    role, texts, calls, results = str(raw.get("role") or "user"), [], [], []
    for part in raw.get("parts") or []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            texts.append(str(part.get("content") or ""))
        elif kind == "tool_call":
            calls.append(_call(part.get("id"), part.get("name"), part.get("arguments")))
        elif kind == "tool_call_response":
            results.append({"role": "tool", "tool_call_id": part.get("id"), "content": _text(part.get("response"))})
    messages: list[Chat] = []
    if texts or calls:
        message: Chat = {"role": "tool" if role == "tool" and not calls else role, "content": "".join(texts) or None}
        if calls:
            message["tool_calls"] = calls
        messages.append(message)
    return messages + results


# event-based messages (≤ v1.36, Azure SDKs, ≤ v1.26) -------------------------------------------

EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def _events(span: Span) -> Exchange:
    out = Exchange(dialect="events")
    for event in span.events:
        name, attributes = event.get("name"), event.get("attributes") or {}
        if name in EVENT_ROLES or name == "gen_ai.choice":
            body = _event_body(attributes, out)
            if name == "gen_ai.choice":
                message = body.get("message") if isinstance(body.get("message"), dict) else body
                out.outputs.append(_chat(message, "assistant", body.get("tool_calls")))
                if body.get("finish_reason"):
                    out.finish_reasons.append(str(body["finish_reason"]))
            else:
                out.inputs.append(_chat(body, EVENT_ROLES[str(name)], body.get("tool_calls")))
        elif name == "gen_ai.content.prompt":
            out.inputs += [_chat(m, "user") for m in _json(attributes.get("gen_ai.prompt"), "gen_ai.prompt", out) or []]
        elif name == "gen_ai.content.completion":
            found = _json(attributes.get("gen_ai.completion"), "gen_ai.completion", out) or []
            out.outputs += [_chat(m, "assistant") for m in found]
    return out


def _event_body(attributes: dict[str, Any], out: Exchange) -> dict[str, Any]:
    if "gen_ai.event.content" in attributes:
        body = _json(attributes["gen_ai.event.content"], "gen_ai.event.content", out)
        return body if isinstance(body, dict) else {}
    return {k: (_json(v, k, out) if k in ("tool_calls", "message") else v) for k, v in attributes.items()}


def _chat(raw: Any, role: str, tool_calls: Any = None) -> Chat:
    """An OpenAI-style message, whatever field names the event used."""
    raw = raw if isinstance(raw, dict) else {"content": raw}
    message: Chat = {"role": str(raw.get("role") or role), "content": _text(raw.get("content")) or None}
    calls = tool_calls if tool_calls is not None else raw.get("tool_calls")
    if calls:
        message["tool_calls"] = [
            _call(c.get("id"), (c.get("function") or c).get("name"), (c.get("function") or c).get("arguments"))
            for c in calls
            if isinstance(c, dict)
        ]
    if raw.get("id") or raw.get("tool_call_id"):
        message["tool_call_id"] = raw.get("tool_call_id") or raw.get("id")
    return message


# OpenLLMetry -------------------------------------------------------------------------------------


def _openllmetry(span: Span) -> Exchange:
    attributes, out = span.attributes, Exchange(dialect="openllmetry")
    for _, fields in _indexed(attributes, "gen_ai.prompt"):
        out.inputs.append(_flat_message(fields, "user"))
    for _, fields in _indexed(attributes, "gen_ai.completion"):
        out.outputs.append(_flat_message(fields, "assistant"))
        if fields.get("finish_reason"):
            out.finish_reasons.append(str(fields["finish_reason"]))
    functions = [
        {
            "name": f.get("name"),
            "description": f.get("description"),
            "parameters": _json(f.get("parameters"), "llm.request.functions.parameters", out) or {},
        }
        for _, f in _indexed(attributes, "llm.request.functions")
    ]
    out.tools = _tools(functions) or _tools(_json(attributes.get("gen_ai.tool.definitions"), "tools", out))
    return out


def _flat_message(fields: dict[str, Any], role: str) -> Chat:
    calls = [_call(c.get("id"), c.get("name"), c.get("arguments")) for _, c in _indexed(fields, "tool_calls")]
    message: Chat = {"role": str(fields.get("role") or role), "content": _text(fields.get("content")) or None}
    if calls:
        message["tool_calls"] = calls
    if fields.get("tool_call_id"):
        message["tool_call_id"] = fields["tool_call_id"]
    return message


# OpenInference -----------------------------------------------------------------------------------


def _openinference(span: Span) -> Exchange:
    attributes, out = span.attributes, Exchange(dialect="openinference")
    out.inputs = [_inference_message(fields, "user") for _, fields in _indexed(attributes, "llm.input_messages")]
    out.outputs = [_inference_message(f, "assistant") for _, f in _indexed(attributes, "llm.output_messages")]
    tools = _indexed(attributes, "llm.tools")
    schemas = [_json(f.get("tool.json_schema"), "llm.tools.tool.json_schema", out) for _, f in tools]
    out.tools = _tools([s for s in schemas if s])
    return out


def _inference_message(fields: dict[str, Any], role: str) -> Chat:
    text = fields.get("message.content")
    if text is None:
        parts = _indexed(fields, "message.contents")
        text = "".join(
            str(p.get("message_content.text") or "")
            for _, p in parts
            if p.get("message_content.type", "text") == "text"
        )
    calls = [
        _call(c.get("tool_call.id"), c.get("tool_call.function.name"), c.get("tool_call.function.arguments"))
        for _, c in _indexed(fields, "message.tool_calls")
    ]
    message: Chat = {"role": str(fields.get("message.role") or role), "content": _text(text) or None}
    if calls:
        message["tool_calls"] = calls
    if fields.get("message.tool_call_id"):
        message["tool_call_id"] = fields["message.tool_call_id"]
    return message


# shared helpers ----------------------------------------------------------------------------------


def _indexed(attributes: dict[str, Any], prefix: str) -> list[tuple[int, dict[str, Any]]]:
    """``prefix.{i}.rest`` keys grouped by ``i``, in index order: ``[(i, {rest: value})]``."""
    pattern = re.compile(rf"^{re.escape(prefix)}\.(\d+)\.(.+)$")
    groups: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = pattern.match(key)
        if match:
            groups.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return sorted(groups.items())


def _json(value: Any, name: str, out: Exchange) -> Any:
    """A structured value as-is; a JSON string parsed; unparseable JSON noted as truncated content."""
    if not isinstance(value, str):
        return value
    stripped = value.strip()
    if not stripped or stripped[0] not in "[{":
        return value
    try:
        return json.loads(stripped)
    except ValueError:
        out.problems.append(f"truncated or unparseable content in {name}")
        return None


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return {
        "id": None if call_id is None else str(call_id),
        "type": "function",
        "function": {"name": "" if name is None else str(name), "arguments": arguments},
    }


def _tools(raw: Any) -> list[dict[str, Any]]:
    tools = []
    for entry in raw if isinstance(raw, list) else []:
        spec = entry.get("function") if isinstance(entry, dict) and isinstance(entry.get("function"), dict) else entry
        if isinstance(spec, dict) and spec.get("name"):
            tools.append(
                {
                    "name": str(spec["name"]),
                    "description": str(spec.get("description") or ""),
                    "parameters": spec.get("parameters") or {},
                }
            )
    return tools


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    return str(part.get("content") or part.get("text") or "") if isinstance(part, dict) else ""


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
