"""OTLP/HTTP receivers: ``POST /v1/traces`` and ``POST /v1/logs`` (and per project), protobuf or
JSON, gzip or deflate. Traces are stored as spans; of logs, the ``gen_ai.evaluation.result``
events are kept, as labels (human feedback), and so are such events on spans.

Answers as the OTLP spec asks: 200 with an empty ``ExportTraceServiceResponse`` (or
``partial_success`` naming how many spans were rejected and why); 400 for a body that is not OTLP;
413 for one that is too large once decompressed; 415 for an unknown content type or encoding;
429 with ``Retry-After`` when writes to the store fall behind (exporters retry those). The reply
has the request's content type. Spans already stored are never touched by a refused request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from starlette.datastructures import Headers

from assay.api.context import Owner, context
from assay.api.rules import TRACE_EVENT, record_response
from assay.config.settings import settings
from assay.review.labels import EVENT_NAME, from_event
from assay.store import DEFAULT_PROJECT, Store
from assay.traces.breeze import DecodedTelemetry, decode_envelopes
from assay.traces.otlp import Decoded, OtlpError, decode, decompress
from assay.traces.otlp_logs import DecodedLogs, decode_logs

router = APIRouter()
RPC_INVALID_ARGUMENT, RPC_RESOURCE_EXHAUSTED = 3, 8


@router.post("/v1/traces")
@router.post("/api/projects/{project}/v1/traces")
async def receive_traces(request: Request, owner: Owner) -> Response:
    return await _receive(request, owner, _decode_and_store)


@router.post("/v1/logs")
@router.post("/api/projects/{project}/v1/logs")
async def receive_logs(request: Request, owner: Owner) -> Response:
    return await _receive(request, owner, _decode_logs_and_store)


@router.post("/v2.1/track")
@router.post("/v2/track")
async def receive_azure_monitor(request: Request) -> Response:
    """Azure Monitor's ingestion (what ``configure_azure_monitor`` sends to the project's
    Application Insights connection): spans kept, ``gen_ai.evaluation.result`` events as labels.
    The envelopes' instrumentation key names the project (``getConnectionWithCredentials`` gave
    it); on a server with API keys, an unknown one is refused, as Breeze refuses it."""
    ctx = context(request)
    try:
        body = decompress(
            await _read_capped(request, settings().otlp_max_bytes),
            request.headers.get("content-encoding"),
            settings().otlp_max_bytes,
        )
        decoded = await asyncio.to_thread(decode_envelopes, body)
    except OtlpError as exc:
        return Response(json.dumps({"message": str(exc)}), status_code=exc.status, media_type="application/json")
    owners = {key: await asyncio.to_thread(ctx.store.project_of_ingestion_key, key) for key in decoded.keys}
    unknown = sorted(key for key, owner in owners.items() if owner is None)
    if len(owners) != 1 or (unknown and ctx.keys_exist()):
        message = f"Invalid instrumentation key {unknown[0]!r}" if unknown else "one instrumentation key per request"
        return Response(json.dumps({"message": message}), status_code=400, media_type="application/json")
    owner = next(iter(owners.values())) or DEFAULT_PROJECT
    await asyncio.to_thread(_store_telemetry, ctx.store, owner, decoded)
    errors = [{"index": index, "statusCode": 400, "message": why} for index, why in decoded.rejected]
    reply = {"itemsReceived": decoded.received, "itemsAccepted": decoded.received - len(errors), "errors": errors}
    return Response(json.dumps(reply), status_code=206 if errors else 200, media_type="application/json")


def _store_telemetry(store: Store, owner: str, decoded: DecodedTelemetry) -> None:
    store.add_spans(owner, decoded.spans)
    for trace_id, agent in {(s.trace_id, s.agent_name) for s in decoded.spans if s.operation == "invoke_agent"}:
        record_response(store, owner, agent, TRACE_EVENT + trace_id)
    events = [(r.attributes, r.trace_id, r.span_id) for r in decoded.records if r.event_name == EVENT_NAME]
    _keep_labels(store, owner, events, source="azure_monitor")


async def _receive(request: Request, owner: str, store_body: Callable[..., Decoded | DecodedLogs]) -> Response:
    ctx = context(request)
    as_json = (request.headers.get("content-type") or "").startswith("application/json")
    try:
        body = await _read_capped(request, settings().otlp_max_bytes)
    except OtlpError as exc:
        return _status(exc.status, str(exc), as_json)
    if ctx.ingest_pending >= ctx.max_pending_ingest:
        reply = _status(429, "the store is behind; retry shortly", as_json, RPC_RESOURCE_EXHAUSTED)
        reply.headers["Retry-After"] = "1"
        return reply
    ctx.ingest_pending += 1
    try:
        # Decoding and writing both happen off the event loop, which keeps serving reads meanwhile.
        decoded = await asyncio.to_thread(store_body, ctx.store, owner, body, request.headers)
    except OtlpError as exc:
        return _status(exc.status, str(exc), as_json)
    finally:
        ctx.ingest_pending -= 1
    logs = isinstance(decoded, DecodedLogs)
    return _success(decoded.rejected, "; ".join(decoded.problems[:5]), as_json, logs)


def _decode_and_store(store: Store, owner: str, body: bytes, headers: Headers) -> Decoded:
    raw = decompress(body, headers.get("content-encoding"), settings().otlp_max_bytes)
    decoded = decode(raw, headers.get("content-type"))
    store.add_spans(owner, decoded.spans)
    # An agent's turn arriving as a trace is a completed response for the rules on that agent.
    for trace_id, agent in {(s.trace_id, s.agent_name) for s in decoded.spans if s.operation == "invoke_agent"}:
        record_response(store, owner, agent, TRACE_EVENT + trace_id)
    events = [
        (e["attributes"], s.trace_id, s.span_id) for s in decoded.spans for e in s.events if e["name"] == EVENT_NAME
    ]
    _keep_labels(store, owner, events)
    return decoded


def _decode_logs_and_store(store: Store, owner: str, body: bytes, headers: Headers) -> DecodedLogs:
    """Logs: the ``gen_ai.evaluation.result`` events become labels; other records are not kept."""
    raw = decompress(body, headers.get("content-encoding"), settings().otlp_max_bytes)
    decoded = decode_logs(raw, headers.get("content-type"))
    _keep_labels(
        store, owner, [(r.attributes, r.trace_id, r.span_id) for r in decoded.records if r.event_name == EVENT_NAME]
    )
    return decoded


def _keep_labels(
    store: Store, owner: str, events: Sequence[tuple[dict[str, Any], str | None, str | None]], source: str = "otlp"
) -> None:
    """The labels ``gen_ai.evaluation.result`` events carry (attributes, trace id, span id each)."""
    labels = [from_event(attributes, trace_id=trace, span_id=span, source=source) for attributes, trace, span in events]
    store.add_labels(owner, [label for label in labels if label is not None])


async def _read_capped(request: Request, limit: int) -> bytes:
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise OtlpError(f"body is over the {limit}-byte limit", 413)
        chunks.append(chunk)
    return b"".join(chunks)


def _success(rejected: int, message: str, as_json: bool, logs: bool = False) -> Response:
    counted = "rejectedLogRecords" if logs else "rejectedSpans"
    if as_json:
        payload = {"partialSuccess": {counted: str(rejected), "errorMessage": message}} if rejected else {}
        return Response(json.dumps(payload), media_type="application/json")
    reply = ExportLogsServiceResponse() if logs else ExportTraceServiceResponse()
    if rejected:
        if isinstance(reply, ExportLogsServiceResponse):
            reply.partial_success.rejected_log_records = rejected
        else:
            reply.partial_success.rejected_spans = rejected
        reply.partial_success.error_message = message
    return Response(reply.SerializeToString(), media_type="application/x-protobuf")


def _status(status: int, message: str, as_json: bool, code: int = RPC_INVALID_ARGUMENT) -> Response:
    """A ``google.rpc.Status`` body, in the request's encoding."""
    if as_json:
        payload = json.dumps({"code": code, "message": message})
        return Response(payload, status_code=status, media_type="application/json")
    text = message.encode()
    encoded = b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text  # fields 1 (code) and 2 (message)
    return Response(encoded, status_code=status, media_type="application/x-protobuf")


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)
