"""One OpenTelemetry span as assay keeps it: hex ids, plain Python attribute values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
STATUS_ERROR = 2


@dataclass(slots=True)
class Span:
    trace_id: str
    """32 lowercase hex digits."""
    span_id: str
    """16 lowercase hex digits."""
    name: str
    parent_span_id: str | None = None
    kind: int = 0
    start_ns: int = 0
    end_ns: int = 0
    status_code: int = 0
    status_message: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    """``[{name, time_ns, attributes}]``."""
    resource: dict[str, Any] = field(default_factory=dict)
    dropped_attributes: int = 0

    @property
    def operation(self) -> str:
        """``gen_ai.operation.name``; ``invoke_agent`` for OpenInference and OpenLLMetry agent spans;
        else the span name's first word (``invoke_agent support``)."""
        op = self.attributes.get("gen_ai.operation.name")
        if op:
            return str(op)
        if (
            self.attributes.get("openinference.span.kind") == "AGENT"
            or self.attributes.get("traceloop.span.kind") == "agent"
        ):
            return "invoke_agent"
        return self.name.split(" ", 1)[0] if self.name else ""

    @property
    def agent_name(self) -> str | None:
        name = self.attributes.get("gen_ai.agent.name")
        if name:
            return str(name)
        agent_id = self.attributes.get("gen_ai.agent.id")
        return str(agent_id).split(":", 1)[0] if agent_id else None

    @property
    def agent_version(self) -> str | None:
        version = self.attributes.get("gen_ai.agent.version")
        if version is not None:
            return str(version)
        agent_id = str(self.attributes.get("gen_ai.agent.id") or "")
        return agent_id.split(":", 1)[1] if ":" in agent_id else None

    @property
    def conversation_id(self) -> str | None:
        found = self.attributes.get("gen_ai.conversation.id") or self.attributes.get("session.id")
        return None if found is None else str(found)

    @property
    def failed(self) -> bool:
        return self.status_code == STATUS_ERROR or bool(self.attributes.get("error.type"))
