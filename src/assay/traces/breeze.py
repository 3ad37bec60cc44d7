"""Azure Monitor's ingestion format ("Breeze", ``POST /v2.1/track``) → spans and log events.

An application set up as Foundry's docs say, ``configure_azure_monitor(connection_string=
project_client.telemetry.get_application_insights_connection_string())``, sends its telemetry as
a JSON array (or newline-delimited JSON) of envelopes ``{name, time, iKey, tags, data: {baseType,
baseData}}``. Spans arrive as ``RequestData`` and ``RemoteDependencyData`` (``tags`` carry the
trace id and parent span, ``baseData.properties`` the attributes, all as strings); log records as
``MessageData`` and custom events (``microsoft.custom_event.name``) as ``EventData``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from typing import Any

from assay.traces.otlp import OtlpError
from assay.traces.otlp_logs import LogRecord
from assay.traces.spans import STATUS_ERROR, Span

SPAN_TYPES = ("RequestData", "RemoteDependencyData")
EVENT_TYPES = ("EventData", "MessageData")
DURATION = re.compile(r"^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$")
NUMERIC = ("gen_ai.evaluation.score.value",)
"""Attributes Azure Monitor sends as text that are numbers to whoever reads them."""


@dataclass
class DecodedTelemetry:
    keys: set[str] = field(default_factory=set)
    """The instrumentation keys the envelopes name."""
    spans: list[Span] = field(default_factory=list)
    records: list[LogRecord] = field(default_factory=list)
    received: int = 0
    rejected: list[tuple[int, str]] = field(default_factory=list)
    """(index, why) of each envelope not read, as Breeze's ``errors`` name them."""


def decode_envelopes(body: bytes) -> DecodedTelemetry:
    text = body.decode("utf-8", errors="replace").strip()
    try:
        parsed = json.loads(text) if text.startswith("[") else [json.loads(line) for line in text.splitlines() if line]
    except (ValueError, RecursionError) as exc:
        raise OtlpError(f"the body is not Azure Monitor telemetry (JSON envelopes): {exc}", 400) from None
    if not isinstance(parsed, list):
        raise OtlpError("the body is not Azure Monitor telemetry: expected a JSON array of envelopes", 400)
    out = DecodedTelemetry(received=len(parsed))
    for index, envelope in enumerate(parsed):
        try:
            _read(envelope, out)
        except (TypeError, ValueError, KeyError, AttributeError, OverflowError, RecursionError) as exc:
            out.rejected.append((index, f"unreadable envelope: {exc}"))
    return out


def _read(envelope: Any, out: DecodedTelemetry) -> None:
    if not isinstance(envelope, dict):
        raise TypeError("an envelope is an object")
    out.keys.add(str(envelope.get("iKey") or ""))
    data = envelope.get("data") or {}
    kind, base = data.get("baseType"), data.get("baseData") or {}
    tags = envelope.get("tags") or {}
    attributes = {key: _value(key, value) for key, value in (base.get("properties") or {}).items()}
    trace_id = str(tags.get("ai.operation.id") or "").lower() or None
    parent = str(tags.get("ai.operation.parentId") or "").lower() or None
    started = _time(envelope.get("time"))
    if kind in SPAN_TYPES:
        if not trace_id or not base.get("id"):
            raise ValueError("a span needs tags['ai.operation.id'] and baseData.id")
        failed = str(base.get("success", True)).lower() == "false"
        out.spans.append(
            Span(
                trace_id=trace_id,
                span_id=str(base["id"]).lower(),
                name=str(base.get("name") or ""),
                parent_span_id=parent if parent != trace_id else None,
                kind=2 if kind == "RequestData" else 3,
                start_ns=started,
                end_ns=started + _duration_ns(str(base.get("duration") or "0:00:00")),
                status_code=STATUS_ERROR if failed else 0,
                attributes=attributes,
                resource={"service.name": str(tags.get("ai.cloud.role") or "")},
            )
        )
    elif kind in EVENT_TYPES:
        name = str(
            attributes.get("microsoft.custom_event.name") or base.get("name") or attributes.get("event.name") or ""
        )
        out.records.append(LogRecord(name, attributes, trace_id, parent))


def _value(key: str, value: Any) -> Any:
    if key in NUMERIC and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _time(value: Any) -> int:
    if not value:
        return 0
    text = str(value).replace("Z", "+00:00")
    text = re.sub(r"\.(\d{6})\d+", r".\1", text)  # Breeze writes seven fractional digits
    return int(dt.datetime.fromisoformat(text).timestamp() * 1e9)


def _duration_ns(text: str) -> int:
    """``d.hh:mm:ss.fffffff`` in nanoseconds."""
    found = DURATION.match(text)
    if found is None:
        raise ValueError(f"duration {text!r} is not d.hh:mm:ss.fffffff")
    days, hours, minutes, seconds, fraction = found.groups()
    whole = ((int(days or 0) * 24 + int(hours)) * 60 + int(minutes)) * 60 + int(seconds)
    return whole * 1_000_000_000 + int((fraction or "0").ljust(9, "0")[:9])
