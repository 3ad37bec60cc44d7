"""OpenTelemetry spans for the support agent, following the GenAI semantic conventions.

One ``invoke_agent`` span per request (input, output, system instructions and tool definitions as
JSON), a ``chat`` span per model call and an ``execute_tool`` span per tool run under it, sent by
the OTLP/HTTP exporter (protobuf, gzip). Off unless an endpoint is given; then it needs
``pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

AGENT = {"name": "support-agent", "version": "1"}


class AgentTracer:
    def __init__(self, endpoint: str | None) -> None:
        self.tracer: Any = None
        self.provider: Any = None
        if endpoint:
            from opentelemetry.exporter.otlp.proto.http import Compression
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            self.provider = TracerProvider(resource=Resource.create({"service.name": AGENT["name"]}))
            exporter = OTLPSpanExporter(endpoint=endpoint, compression=Compression.Gzip)
            self.provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=200))
            self.tracer = self.provider.get_tracer("support-agent")

    @contextlib.contextmanager
    def span(self, name: str, attributes: dict[str, Any]) -> Iterator[Any]:
        if self.tracer is None:
            yield None
            return
        with self.tracer.start_as_current_span(name, attributes=attributes) as span:
            yield span

    def shutdown(self) -> None:
        if self.provider is not None:
            self.provider.shutdown()


def agent_attributes(
    conversation_id: str, instructions: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": AGENT["name"],
        "gen_ai.agent.version": AGENT["version"],
        "gen_ai.agent.id": f"{AGENT['name']}:{AGENT['version']}",
        "gen_ai.conversation.id": conversation_id,
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": instructions}]),
        "gen_ai.input.messages": json.dumps([_parts(m) for m in messages]),
        "gen_ai.tool.definitions": json.dumps([{"type": "function", **t["function"]} for t in tools]),
    }


def output_messages(output: list[dict[str, Any]]) -> str:
    """The agent's Responses output items in the conventions' parts model."""
    messages = []
    for item in output:
        if item["type"] == "function_call":
            part = {
                "type": "tool_call",
                "id": item["call_id"],
                "name": item["name"],
                "arguments": json.loads(item["arguments"] or "{}"),
            }
            messages.append({"role": "assistant", "parts": [part]})
        elif item["type"] == "function_call_output":
            part = {"type": "tool_call_response", "id": item["call_id"], "response": json.loads(item["output"])}
            messages.append({"role": "tool", "parts": [part]})
        else:
            text = "".join(p["text"] for p in item["content"])
            messages.append(
                {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": text}],
                    "finish_reason": "stop" if item.get("status") == "completed" else "length",
                }
            )
    return json.dumps(messages)


def _parts(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    text = (
        content
        if isinstance(content, str)
        else "".join(str(p.get("text", "")) for p in content or [] if isinstance(p, dict))
    )
    return {"role": message.get("role", "user"), "parts": [{"type": "text", "content": text}]}
