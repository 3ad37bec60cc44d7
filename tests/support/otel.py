"""Agent turns sent as the OpenTelemetry SDK sends them: one ``invoke_agent`` span per turn with its
messages (GenAI semantic conventions), exported over OTLP/HTTP to a server of the tests."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor


def export_agent_turns(
    base_url: str, agent: str, turns: list[tuple[str, str]], *, key: str | None = None, cert: Any = None
) -> None:
    """Each ``(question, answer)`` as one traced turn of ``agent``, sent to ``{base_url}/v1/traces``
    (with an API key and a certificate to trust, for a server that has them)."""
    provider = TracerProvider(resource=Resource.create({"service.name": agent}))
    exporter = OTLPSpanExporter(
        endpoint=f"{base_url}/v1/traces",
        headers={"Authorization": f"Bearer {key}"} if key else None,
        certificate_file=str(cert) if cert else None,
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tests")
    for index, (question, answer) in enumerate(turns):
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": f"{agent}-{index}",
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}]),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            ),
        }
        with tracer.start_as_current_span(f"invoke_agent {agent}", attributes=attributes):
            pass
    provider.shutdown()


def export_handoffs(base_url: str, cases: list[tuple[str, str, str]]) -> None:
    """A two-agent program, traced: for each ``(question, triage's reply, billing's answer)`` a
    workflow span holds the triage agent's turn, which hands off, and the billing agent's, which
    answers, in one trace and one conversation, exported to ``{base_url}/v1/traces``."""
    provider = TracerProvider(resource=Resource.create({"service.name": "support-workflow"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{base_url}/v1/traces")))
    tracer = provider.get_tracer("tests")

    def said(role: str, text: str) -> dict[str, Any]:
        return {"role": role, "parts": [{"type": "text", "content": text}]}

    for index, (question, handoff, answer) in enumerate(cases):
        conversation = f"case-{index}"
        with tracer.start_as_current_span("workflow support", attributes={"gen_ai.conversation.id": conversation}):
            for agent, history, reply in (
                ("triage", [said("user", question)], handoff),
                ("billing", [said("user", question), said("assistant", handoff)], answer),
            ):
                attributes = {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": agent,
                    "gen_ai.conversation.id": conversation,
                    "gen_ai.input.messages": json.dumps(history),
                    "gen_ai.output.messages": json.dumps([said("assistant", reply)]),
                }
                with tracer.start_as_current_span(f"invoke_agent {agent}", attributes=attributes):
                    pass
    provider.shutdown()
