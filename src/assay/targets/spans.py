"""The spans of what a target did for one item, kept in its sample as ``spans``: each model call
and each tool it ran, timed, named as OpenTelemetry's GenAI conventions name them (``chat
gpt-4.1-mini``, ``execute_tool lookup_order``), so trace assertions (promptfoo's
``trace-span-count``, ``trajectory:tool-used``, ...) read an item's trajectory as they read an
instrumented agent's trace.

A span is ``{name, span_id, start_ms, end_ms, status_code, status_message, attributes}``: times
in milliseconds since the epoch, the status as OpenTelemetry codes it (0 unset, 1 ok, 2 error).
"""

from __future__ import annotations

import secrets
import time
from typing import Any

STATUS_OK = 1
STATUS_ERROR = 2


def now_ms() -> float:
    return time.time_ns() / 1e6


def model_span(model: str, start_ms: float, *, error: str | None = None) -> dict[str, Any]:
    """A chat call to ``model`` that started at ``start_ms`` and ends now."""
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
    return _span(f"chat {model}", start_ms, attributes, error)


def tool_span(name: str, call_id: str, arguments: str, start_ms: float, *, error: str | None = None) -> dict[str, Any]:
    """A tool the target ran, with the arguments the model gave it, started at ``start_ms``."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": arguments,
    }
    return _span(f"execute_tool {name}", start_ms, attributes, error)


def _span(name: str, start_ms: float, attributes: dict[str, Any], error: str | None) -> dict[str, Any]:
    return {
        "name": name,
        "span_id": secrets.token_hex(8),
        "start_ms": start_ms,
        "end_ms": now_ms(),
        "status_code": STATUS_ERROR if error else STATUS_OK,
        "status_message": error or "",
        "attributes": attributes,
    }
