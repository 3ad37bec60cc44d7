"""OTLP/JSON details the spec leaves to encoders: enum names, int64 as strings, nested values."""

from __future__ import annotations

import json

from assay.traces.otlp import decode
from tests.traces import otlp_fixtures as fx


def test_enum_names_int64_strings_and_nested_values():
    doc = fx.current()
    span = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span.update(kind="SPAN_KIND_CLIENT", status={"code": "STATUS_CODE_ERROR", "message": "boom"})
    span["attributes"] += fx.attrs(retries=3, ratio=0.5, flags=[True, False], meta={"a": {"b": "c"}})
    (decoded,) = decode(json.dumps(doc).encode(), "application/json; charset=utf-8").spans
    assert (decoded.kind, decoded.status_code, decoded.status_message) == (3, 2, "boom")
    assert decoded.start_ns == fx.T0 and decoded.attributes["retries"] == 3 and decoded.attributes["ratio"] == 0.5
    assert decoded.attributes["flags"] == [True, False] and decoded.attributes["meta"] == {"a": {"b": "c"}}
    assert decoded.failed and decoded.agent_name == "weather" and decoded.conversation_id == "conv-1"
