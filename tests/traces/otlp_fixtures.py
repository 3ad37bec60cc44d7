"""One agent turn (a weather question answered with one tool call) written in each of the four
trace dialects, as OTLP/JSON documents: what different instrumentations would export."""

from __future__ import annotations

import json
from typing import Any

SYSTEM = "You are a weather agent."
QUESTION = "What's the weather in Paris?"
ARGS = {"location": "Paris"}
RESULT = "rainy, 57°F"
ANSWER = "It's rainy and 57°F in Paris."
TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a location",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
}
T0 = 1_764_000_000_000_000_000


def value(v: Any) -> dict[str, Any]:
    """A Python value as an OTLP/JSON AnyValue."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    if isinstance(v, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": value(x)} for k, x in v.items()]}}
    return {"stringValue": str(v)}


def attrs(**pairs: Any) -> list[dict[str, Any]]:
    return [{"key": k.replace("__", "."), "value": value(v)} for k, v in pairs.items()]


def span(
    trace: str,
    span_id: str,
    name: str,
    attributes: dict[str, Any],
    *,
    parent: str | None = None,
    offset_ms: int = 0,
    events: list[dict[str, Any]] | None = None,
    status: int = 0,
) -> dict[str, Any]:
    start = T0 + offset_ms * 1_000_000
    return {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent or "",
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 900_000_000),
        "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
        "events": events or [],
        "status": {"code": status},
    }


def document(*spans: dict[str, Any], service: str = "weather") -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attrs(service__name=service)},
                "scopeSpans": [{"scope": {"name": "test"}, "spans": list(spans)}],
            }
        ]
    }


def agent_attributes(conversation: str = "conv-1", version: str = "1") -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather",
        "gen_ai.agent.version": version,
        "gen_ai.agent.id": f"weather:{version}",
        "gen_ai.conversation.id": conversation,
    }


def current(trace: str = "0af7651916cd43dd8448eb211c80319c") -> dict[str, Any]:
    """Current conventions: JSON-string inputs, structured (AnyValue) outputs, on the agent span."""
    outputs = [
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": ARGS}],
        },
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": RESULT}]},
        {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}], "finish_reason": "stop"},
    ]
    attributes = {
        **agent_attributes(),
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]),
        "gen_ai.output.messages": outputs,
        "gen_ai.tool.definitions": json.dumps([TOOL]),
    }
    return document(span(trace, "b7ad6b7169203331", "invoke_agent weather", attributes))


def events(trace: str = "1af7651916cd43dd8448eb211c80319c") -> dict[str, Any]:
    """Event-based messages on the model-call span, Azure SDK style (``gen_ai.event.content``)."""

    def event(name: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "timeUnixNano": str(T0), "attributes": attrs(gen_ai__event__content=json.dumps(body))}

    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps(ARGS)}}
    chat_events = [
        event("gen_ai.system.message", {"role": "system", "content": SYSTEM}),
        event("gen_ai.user.message", {"role": "user", "content": QUESTION}),
        event("gen_ai.assistant.message", {"role": "assistant", "tool_calls": [call]}),
        event("gen_ai.tool.message", {"role": "tool", "content": RESULT, "id": "call_1"}),
        event("gen_ai.choice", {"finish_reason": "stop", "index": 0, "message": {"content": ANSWER}}),
    ]
    tools = {"gen_ai.tool.definitions": json.dumps([TOOL])}
    return document(
        span(trace, "c7ad6b7169203331", "invoke_agent weather", {**agent_attributes(), **tools}),
        span(
            trace,
            "c7ad6b7169203332",
            "chat gpt-4.1",
            {"gen_ai.operation.name": "chat"},
            parent="c7ad6b7169203331",
            offset_ms=100,
            events=chat_events,
        ),
    )


def openllmetry(trace: str = "2af7651916cd43dd8448eb211c80319c") -> dict[str, Any]:
    """OpenLLMetry: indexed ``gen_ai.prompt.{i}`` / ``gen_ai.completion.{i}`` on the LLM span."""
    llm = {
        "traceloop.span.kind": "llm",
        "gen_ai.operation.name": "chat",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": SYSTEM,
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": QUESTION,
        "gen_ai.prompt.2.role": "assistant",
        "gen_ai.prompt.2.tool_calls.0.id": "call_1",
        "gen_ai.prompt.2.tool_calls.0.name": "get_weather",
        "gen_ai.prompt.2.tool_calls.0.arguments": json.dumps(ARGS),
        "gen_ai.prompt.3.role": "tool",
        "gen_ai.prompt.3.tool_call_id": "call_1",
        "gen_ai.prompt.3.content": RESULT,
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": ANSWER,
        "gen_ai.completion.0.finish_reason": "stop",
        "llm.request.functions.0.name": TOOL["name"],
        "llm.request.functions.0.description": TOOL["description"],
        "llm.request.functions.0.parameters": json.dumps(TOOL["parameters"]),
    }
    return document(
        span(trace, "d7ad6b7169203331", "weather.agent", {**agent_attributes(), "traceloop.span.kind": "agent"}),
        span(trace, "d7ad6b7169203332", "openai.chat", llm, parent="d7ad6b7169203331", offset_ms=100),
    )


def openinference(trace: str = "3af7651916cd43dd8448eb211c80319c") -> dict[str, Any]:
    """OpenInference: ``llm.input_messages.{i}.message.*`` on an LLM span under an AGENT span."""
    schema = json.dumps({"type": "function", "function": {k: TOOL[k] for k in ("name", "description", "parameters")}})
    llm = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": SYSTEM,
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
        "llm.input_messages.1.message.contents.0.message_content.text": QUESTION,
        "llm.input_messages.2.message.role": "assistant",
        "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_1",
        "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "get_weather",
        "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": json.dumps(ARGS),
        "llm.input_messages.3.message.role": "tool",
        "llm.input_messages.3.message.tool_call_id": "call_1",
        "llm.input_messages.3.message.content": RESULT,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": ANSWER,
        "llm.tools.0.tool.json_schema": schema,
    }
    agent = {**agent_attributes(), "openinference.span.kind": "AGENT"}
    agent.pop("gen_ai.operation.name")
    return document(
        span(trace, "e7ad6b7169203331", "weather-agent", agent),
        span(trace, "e7ad6b7169203332", "ChatOpenAI", llm, parent="e7ad6b7169203331", offset_ms=100),
    )


DIALECTS = {"current": current, "events": events, "openllmetry": openllmetry, "openinference": openinference}
