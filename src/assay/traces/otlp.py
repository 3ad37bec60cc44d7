"""OTLP/HTTP trace bodies → ``Span`` records: protobuf or JSON, gzip or deflate, size-capped.

JSON ids are hex, as the OTLP spec says; protobuf's ``json_format`` would read them as base64 and
silently make 24-byte ids, so the JSON is walked by hand. A span with a bad id is rejected on its
own (reported as ``partial_success``); a body that is not OTLP at all is refused whole.
"""

from __future__ import annotations

import base64
import json
import zlib
from dataclasses import dataclass, field
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from assay.traces.spans import Span

MAX_DECOMPRESSED = 64 * 1024 * 1024
M = TypeVar("M", bound=Message)


class OtlpError(ValueError):
    """A body that cannot be read at all: the status says which kind of refusal."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Decoded:
    spans: list[Span] = field(default_factory=list)
    rejected: int = 0
    problems: list[str] = field(default_factory=list)


def _inflate(body: bytes, wbits: int, limit: int) -> bytes:
    """Every member of the stream (a gzip file may hold several, one after another)."""
    out = bytearray()
    rest = body
    while rest:
        inflater = zlib.decompressobj(wbits)
        out += inflater.decompress(rest, limit + 1 - len(out))
        if len(out) > limit or inflater.unconsumed_tail:
            raise OtlpError(f"body decompresses to more than the {limit}-byte limit", 413)
        if not inflater.eof:
            raise zlib.error("truncated stream")
        rest = inflater.unused_data
        if wbits != 31:
            break  # zlib and raw deflate hold one stream; what follows is not data
    return bytes(out)


def decompress(body: bytes, encoding: str | None, limit: int = MAX_DECOMPRESSED) -> bytes:
    """Undo gzip or deflate, refusing (413) anything that would grow past ``limit`` bytes."""
    encoding = (encoding or "identity").strip().lower()
    if encoding in ("", "identity", "none"):
        if len(body) > limit:
            raise OtlpError(f"body of {len(body)} bytes is over the {limit}-byte limit", 413)
        return body
    if encoding not in ("gzip", "deflate"):
        raise OtlpError(f"Content-Encoding {encoding!r} is not supported; use gzip, deflate or none", 415)
    # gzip: header 31; deflate: zlib-wrapped (15) in practice, raw (-15) from some clients.
    for wbits in (31,) if encoding == "gzip" else (15, -15):
        try:
            return _inflate(body, wbits, limit)
        except zlib.error:
            continue
    raise OtlpError(f"body is not valid {encoding} data")


def is_json(content_type: str | None) -> bool:
    """Whether an OTLP body is JSON (else protobuf); an OtlpError (415) for any other content type."""
    kind = (content_type or "application/x-protobuf").split(";", 1)[0].strip().lower()
    if kind == "application/json":
        return True
    if kind in ("application/x-protobuf", "application/protobuf", "application/octet-stream"):
        return False
    raise OtlpError(f"Content-Type {kind!r} is not OTLP; send application/x-protobuf or application/json", 415)


def decode(body: bytes, content_type: str | None) -> Decoded:
    return _from_json(body) if is_json(content_type) else _from_protobuf(body)


# protobuf ---------------------------------------------------------------------------------------


def parse_request(request: M, body: bytes) -> M:
    """``request`` read from ``body``; an OtlpError (400) naming the message when it is not one."""
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise OtlpError(f"body is not an OTLP {type(request).__name__}: {exc}") from None
    return request


def _from_protobuf(body: bytes) -> Decoded:
    request = parse_request(ExportTraceServiceRequest(), body)
    out = Decoded()
    for resource_spans in request.resource_spans:
        resource = {a.key: pb_value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for s in scope_spans.spans:
                trace_id, span_id = s.trace_id.hex(), s.span_id.hex()
                problem = _id_problem(trace_id, span_id)
                if problem:
                    out.rejected += 1
                    out.problems.append(problem)
                    continue
                span = Span(
                    trace_id=trace_id,
                    span_id=span_id,
                    name=s.name,
                    parent_span_id=s.parent_span_id.hex() or None,
                    kind=s.kind,
                    start_ns=s.start_time_unix_nano,
                    end_ns=s.end_time_unix_nano,
                    status_code=s.status.code,
                    status_message=s.status.message,
                    attributes={a.key: pb_value(a.value) for a in s.attributes},
                    events=[
                        {
                            "name": e.name,
                            "time_ns": e.time_unix_nano,
                            "attributes": {a.key: pb_value(a.value) for a in e.attributes},
                        }
                        for e in s.events
                    ],
                    resource=resource,
                    dropped_attributes=s.dropped_attributes_count,
                )
                try:
                    out.spans.append(_checked(span))
                except ValueError as exc:
                    out.rejected += 1
                    out.problems.append(str(exc))
    return out


def pb_value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [pb_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: pb_value(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, which)


# JSON -------------------------------------------------------------------------------------------


def _from_json(body: bytes) -> Decoded:
    try:
        document = json.loads(body or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise OtlpError(f"body is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise OtlpError("body is not an OTLP ExportTraceServiceRequest: expected {resourceSpans: [...]}")
    out = Decoded()
    for r, resource_spans in enumerate(_list(document, "resourceSpans", "resourceSpans")):
        where = f"resourceSpans[{r}]"
        _object(resource_spans, where)
        resource_doc = _object(resource_spans.get("resource") or {}, f"{where}.resource")
        try:
            resource = json_attributes(resource_doc.get("attributes"))
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise OtlpError(f"{where}.resource.attributes: {exc}") from None
        for s, scope_spans in enumerate(_list(resource_spans, "scopeSpans", where)):
            scope_where = f"{where}.scopeSpans[{s}]"
            for raw in _list(_object(scope_spans, scope_where), "spans", scope_where):
                try:
                    out.spans.append(_checked(_json_span(_object(raw, "span"), resource)))
                except (ValueError, TypeError, AttributeError, KeyError, RecursionError, OtlpError) as exc:
                    out.rejected += 1
                    out.problems.append(str(exc))
    return out


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise OtlpError(f"{where} must be an object, not {type(value).__name__}")
    return value


def _list(parent: dict[str, Any], key: str, where: str) -> list[Any]:
    value = parent.get(key) or []
    if not isinstance(value, list):
        raise OtlpError(
            f"{where}.{key} must be an array, not {type(value).__name__}"
            if where != key
            else f"{key} must be an array, not {type(value).__name__}"
        )
    return value


MAX_NANOS = 2**63 - 1
"""Timestamps past this (the year 2262) fit no database's integer; such a span is rejected."""


def _checked(span: Span) -> Span:
    for name, value in (
        ("startTimeUnixNano", span.start_ns),
        ("endTimeUnixNano", span.end_ns),
        *(("event timeUnixNano", e["time_ns"]) for e in span.events),
    ):
        if not 0 <= value <= MAX_NANOS:
            raise ValueError(f"span {span.span_id}: {name} {value} is not a time (0 to 2^63-1 ns)")
    for name, value in (
        ("kind", span.kind),
        ("status.code", span.status_code),
        ("droppedAttributesCount", span.dropped_attributes),
    ):
        if not 0 <= value < 2**31:
            raise ValueError(f"span {span.span_id}: {name} {value} is out of range")
    return span


def _json_span(raw: dict[str, Any], resource: dict[str, Any]) -> Span:
    trace_id = str(raw.get("traceId") or "").lower()
    span_id = str(raw.get("spanId") or "").lower()
    problem = _id_problem(trace_id, span_id)
    if problem:
        raise ValueError(problem)
    parent = str(raw.get("parentSpanId") or "").lower() or None
    status = raw.get("status") or {}
    events = [
        {
            "name": str(e.get("name") or ""),
            "time_ns": int(e.get("timeUnixNano") or 0),
            "attributes": json_attributes(e.get("attributes")),
        }
        for e in raw.get("events") or []
    ]
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        name=str(raw.get("name") or ""),
        parent_span_id=parent,
        kind=_enum(raw.get("kind"), KIND_NAMES),
        start_ns=int(raw.get("startTimeUnixNano") or 0),
        end_ns=int(raw.get("endTimeUnixNano") or 0),
        status_code=_enum(status.get("code"), STATUS_NAMES),
        status_message=str(status.get("message") or ""),
        attributes=json_attributes(raw.get("attributes")),
        events=events,
        resource=resource,
        dropped_attributes=int(raw.get("droppedAttributesCount") or 0),
    )


KIND_NAMES = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


def _enum(value: Any, names: dict[str, int]) -> int:
    """OTLP/JSON enums are integers; some encoders write their names, which we read too."""
    if isinstance(value, str) and value in names:
        return names[value]
    return int(value or 0)


def json_attributes(raw: Any) -> dict[str, Any]:
    if not isinstance(raw or [], list):
        raise TypeError(f"attributes must be an array, not {type(raw).__name__}")
    return {str(a["key"]): _json_value(a.get("value") or {}) for a in raw or []}


def _json_value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        return int(value["intValue"])  # int64 arrives as a decimal string
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "bytesValue" in value:
        return str(value["bytesValue"])
    if "arrayValue" in value:
        return [_json_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        pairs = (value["kvlistValue"] or {}).get("values") or []
        return {str(kv["key"]): _json_value(kv.get("value") or {}) for kv in pairs}
    return None


def _id_problem(trace_id: str, span_id: str) -> str | None:
    if len(trace_id) != 32 or not _is_hex(trace_id) or set(trace_id) == {"0"}:
        return f"span {span_id or '?'}: traceId {trace_id!r} is not 32 hex digits"
    if len(span_id) != 16 or not _is_hex(span_id) or set(span_id) == {"0"}:
        return f"trace {trace_id}: spanId {span_id!r} is not 16 hex digits"
    return None


def _is_hex(text: str) -> bool:
    try:
        int(text, 16)
    except ValueError:
        return False
    return True
