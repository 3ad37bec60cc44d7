"""OTLP/HTTP log bodies → log records: protobuf or JSON (already decompressed by ``otlp.decompress``).

Only what an event needs is kept: its name (the record's ``event_name``, or the older
``event.name`` attribute), attributes, and the trace and span it was emitted in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from assay.traces.otlp import OtlpError, is_json, json_attributes, parse_request, pb_value


@dataclass
class LogRecord:
    event_name: str
    attributes: dict[str, Any]
    trace_id: str | None = None
    span_id: str | None = None


@dataclass
class DecodedLogs:
    records: list[LogRecord] = field(default_factory=list)
    rejected: int = 0
    problems: list[str] = field(default_factory=list)


def decode_logs(body: bytes, content_type: str | None) -> DecodedLogs:
    return _from_json(body) if is_json(content_type) else _from_protobuf(body)


def _record(event_name: str, attributes: dict[str, Any], trace_id: str, span_id: str) -> LogRecord:
    name = event_name or str(attributes.get("event.name") or "")
    return LogRecord(name, attributes, trace_id.lower() or None, span_id.lower() or None)


def _from_protobuf(body: bytes) -> DecodedLogs:
    request = parse_request(ExportLogsServiceRequest(), body)
    out = DecodedLogs()
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                attributes = {a.key: pb_value(a.value) for a in record.attributes}
                out.records.append(_record(record.event_name, attributes, record.trace_id.hex(), record.span_id.hex()))
    return out


def _from_json(body: bytes) -> DecodedLogs:
    try:
        document = json.loads(body or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise OtlpError(f"body is not JSON: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("resourceLogs") or [], list):
        raise OtlpError("body is not an OTLP ExportLogsServiceRequest: expected {resourceLogs: [...]}")
    out = DecodedLogs()
    for r, resource_logs in enumerate(document.get("resourceLogs") or []):
        scopes = resource_logs.get("scopeLogs") if isinstance(resource_logs, dict) else None
        for s, scope_logs in enumerate(scopes if isinstance(scopes, list) else []):
            records = scope_logs.get("logRecords") if isinstance(scope_logs, dict) else None
            for n, raw in enumerate(records if isinstance(records, list) else []):
                try:
                    out.records.append(
                        _record(
                            str(raw.get("eventName") or ""),
                            json_attributes(raw.get("attributes")),
                            str(raw.get("traceId") or ""),
                            str(raw.get("spanId") or ""),
                        )
                    )
                except (ValueError, TypeError, AttributeError, KeyError, RecursionError) as exc:
                    out.rejected += 1
                    out.problems.append(f"resourceLogs[{r}].scopeLogs[{s}].logRecords[{n}]: {exc}")
    return out
