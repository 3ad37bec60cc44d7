"""The OTLP/HTTP receiver: the real OpenTelemetry exporter (protobuf, gzip), hex ids in JSON,
partial success, refusals that keep what was stored, and 429 when the store falls behind."""

from __future__ import annotations

import gzip
import json
import threading
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass

import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.traces import otlp_fixtures as fx


@dataclass
class Reply:
    status_code: int
    headers: dict
    content: bytes

    def json(self):
        return json.loads(self.content)

    @property
    def text(self):
        return self.content.decode(errors="replace")


def post(url, content=None, headers=None, json_body=None, timeout=30):
    if json_body is not None:
        content, headers = json.dumps(json_body).encode(), {"content-type": "application/json"}
    request = urllib.request.Request(url, data=content, headers=headers or {}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return Reply(response.status, {k.lower(): v for k, v in response.headers.items()}, response.read())
    except urllib.error.HTTPError as error:
        return Reply(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())


def _count(store, trace_id):
    return len(store.trace_spans("default", [trace_id])[trace_id])


def test_sdk_exporter_protobuf_gzip(served):
    provider = TracerProvider(resource=Resource.create({"service.name": "weather"}))
    exporter = OTLPSpanExporter(endpoint=f"{served.url}/v1/traces", compression=Compression.Gzip)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("invoke_agent weather", attributes=fx.agent_attributes()) as agent:
        with tracer.start_as_current_span("execute_tool get_weather", attributes={"gen_ai.tool.name": "get_weather"}):
            pass
    provider.shutdown()
    trace_id = format(agent.get_span_context().trace_id, "032x")
    spans = served.store.trace_spans("default", [trace_id])[trace_id]
    assert sorted(s.name for s in spans) == ["execute_tool get_weather", "invoke_agent weather"]
    root = next(s for s in spans if s.parent_span_id is None)
    assert root.span_id == format(agent.get_span_context().span_id, "016x")
    assert root.agent_name == "weather" and root.resource["service.name"] == "weather"


def test_json_hex_ids_partial_success_and_deflate(served):
    doc = fx.current()
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans.append({**spans[0], "spanId": "not-hex", "name": "broken"})
    body = zlib.compress(json.dumps(doc).encode())
    reply = post(
        f"{served.url}/v1/traces",
        content=body,
        headers={"content-type": "application/json", "content-encoding": "deflate"},
    )
    assert reply.status_code == 200
    assert (
        reply.json()["partialSuccess"]["rejectedSpans"] == "1"
        and "not-hex" in reply.json()["partialSuccess"]["errorMessage"]
    )
    (stored,) = served.store.trace_spans("default", ["0af7651916cd43dd8448eb211c80319c"])[
        "0af7651916cd43dd8448eb211c80319c"
    ]
    assert stored.span_id == "b7ad6b7169203331"  # hex as sent, not read as base64
    again = post(f"{served.url}/v1/traces", json_body=fx.current())
    assert again.status_code == 200 and again.json() == {}
    assert _count(served.store, "0af7651916cd43dd8448eb211c80319c") == 1  # an exporter's retry is not a duplicate


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        (b"\xff\xff\xff garbage", {"content-type": "application/x-protobuf"}, 400),
        (b"{not json", {"content-type": "application/json"}, 400),
        (b'{"resourceSpans": 5}', {"content-type": "application/json"}, 400),
        (
            gzip.compress(b"\0" * (64 * 1024 * 1024 + 10)),
            {"content-type": "application/x-protobuf", "content-encoding": "gzip"},
            413,
        ),
        (b"not gzip", {"content-type": "application/x-protobuf", "content-encoding": "gzip"}, 400),
        (b"{}", {"content-type": "text/plain"}, 415),
    ],
)
def test_malformed_bodies_are_refused_and_nothing_stored_is_lost(served, body, headers, status):
    assert post(f"{served.url}/v1/traces", json_body=fx.current()).status_code == 200
    reply = post(f"{served.url}/v1/traces", content=body, headers=headers)
    assert reply.status_code == status, reply.text
    if headers["content-type"] == "application/json":
        assert reply.json()["code"] == 3 and reply.json()["message"]
    assert _count(served.store, "0af7651916cd43dd8448eb211c80319c") == 1


def test_backpressure_answers_429_with_retry_after(served, monkeypatch):
    served.app_state.max_pending_ingest = 1
    entered, release = threading.Event(), threading.Event()
    original = served.store.add_spans

    def slow_add(project, spans):
        entered.set()
        release.wait(10)
        return original(project, spans)

    monkeypatch.setattr(served.store, "add_spans", slow_add)
    first = threading.Thread(target=lambda: post(f"{served.url}/v1/traces", json_body=fx.current(), timeout=20))
    first.start()
    assert entered.wait(10)
    refused = post(f"{served.url}/v1/traces", json_body=fx.events())
    release.set()
    first.join(10)
    assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
    assert _count(served.store, "0af7651916cd43dd8448eb211c80319c") == 1
    assert post(f"{served.url}/v1/traces", json_body=fx.events()).status_code == 200
