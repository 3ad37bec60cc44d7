"""Bad input through the real API, on SQLite and PostgreSQL: a 4xx that says what is wrong, never
a 500, and nothing already stored is lost."""

from __future__ import annotations

import gzip
import http.client
import io
import json
import urllib.parse

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.api.test_hostile_values import _raw
from tests.api.test_otlp import post

EVAL = {
    "name": "e",
    "data_source_config": {"type": "custom", "item_schema": {"type": "object"}},
    "testing_criteria": [
        {"type": "string_check", "name": "s", "input": "{{item.a}}", "reference": "x", "operation": "eq"}
    ],
}


def test_json_nested_a_thousand_levels_deep_is_a_400(served):
    body = json.dumps({**EVAL, "metadata": {"k": "v"}})[:-1] + ', "deep": ' + "[" * 1000 + "]" * 1000 + "}"
    status, reply = _raw(f"{served.url}/v1/evals", body)
    assert status == 400 and "nested deeper" in reply["error"]["message"]


def test_an_integer_of_five_thousand_digits_is_a_400(served):
    body = json.dumps(EVAL)[:-1] + ', "huge": ' + "9" * 5000 + "}"
    status, reply = _raw(f"{served.url}/v1/evals", body)
    assert status == 400 and "digits" in reply["error"]["message"]


def test_a_body_that_is_not_an_object_is_a_400(served):
    status, reply = _raw(f"{served.url}/v1/evals", "[1, 2]")
    assert status == 400 and "JSON object" in reply["error"]["message"]


def test_the_same_dataset_version_put_twice_updates_it(served):
    client = served.client()
    first = client.files.create(file=("a.jsonl", io.BytesIO(b'{"a": 1}\n')), purpose="evals")
    second = client.files.create(file=("b.jsonl", io.BytesIO(b'{"a": 2}\n')), purpose="evals")
    url = f"{served.url}/api/projects/default/datasets/shop/versions/1"
    for file in (first, second):
        status, reply = _raw(url, json.dumps({"dataUri": file.id}), method="PUT")
        assert status == 200, reply
    status, reply = _raw(url, method="GET")
    assert status == 200 and reply["dataUri"] == second.id


def test_an_output_item_cursor_past_two_to_the_63_is_a_400(served):
    client = served.client()
    created = client.evals.create(**EVAL)
    run = client.evals.runs.create(
        eval_id=created.id,
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": {"a": "x"}}]}},
    )
    for cursor in (f"outputitem_{run.id}_{2**64}", f"outputitem_{run.id}_" + "9" * 5000, "outputitem_²"):
        query = urllib.parse.urlencode({"after": cursor})
        status, reply = _raw(f"{served.url}/v1/evals/{created.id}/runs/{run.id}/output_items?{query}", method="GET")
        assert status == 400, (cursor[:40], reply)
        item_url = f"{served.url}/v1/evals/{created.id}/runs/{run.id}/output_items/{urllib.parse.quote(cursor)}"
        status, _ = _raw(item_url, method="GET")
        assert status == 404


def test_an_upload_over_the_limit_is_refused_while_it_arrives(served, monkeypatch):
    monkeypatch.setenv("ASSAY_MAX_UPLOAD_MB", "1")
    host, port = served.url.removeprefix("http://").split(":")
    boundary = "assayboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nevals\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n\r\n'
    ).encode()

    def chunks():  # no Content-Length: the server cannot know the size before reading
        yield head
        line = b'{"a": "' + b"x" * 65000 + b'"}\n'
        for _ in range(80):
            yield line

    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request(
            "POST",
            "/v1/files",
            body=chunks(),
            encode_chunked=True,
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
        )
        response = connection.getresponse()
        assert response.status == 413, response.read()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered 413 and closed while we were still sending: refused early, as wanted
    finally:
        connection.close()
    assert served.client().files.list().data == []
    declared = _raw_declared(served.url, 5 * 1024 * 1024)
    assert declared == 413


def test_the_server_stops_reading_an_upload_at_the_limit(store, monkeypatch):
    """Driven at the ASGI level, to count how much of the body the server asked for."""
    import asyncio

    from assay.api import create_app

    monkeypatch.setenv("ASSAY_MAX_UPLOAD_MB", "1")
    app = create_app(store)
    chunk, total = b"x" * 65536, 800
    pulled = 0
    replies: list[dict] = []

    async def receive():
        nonlocal pulled
        pulled += 1
        if pulled == 1:
            return {
                "type": "http.request",
                "body": b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\n',
                "more_body": True,
            }
        return {"type": "http.request", "body": chunk, "more_body": pulled < total}

    async def send(message):
        replies.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v1/files",
        "raw_path": b"/v1/files",
        "query_string": b"",
        "headers": [(b"content-type", b"multipart/form-data; boundary=b")],
        "root_path": "",
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1),
        "http_version": "1.1",
    }
    asyncio.run(app(scope, receive, send))
    assert replies[0]["status"] == 413
    assert pulled < 40  # ~1 MB of a 52 MB body was read, not all of it


def _raw_declared(url: str, size: int) -> int:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.putrequest("POST", "/v1/files")
        connection.putheader("Content-Type", "multipart/form-data; boundary=x")
        connection.putheader("Content-Length", str(size))
        connection.endheaders()
        return connection.getresponse().status
    finally:
        connection.close()


def test_every_gzip_member_of_an_otlp_body_is_read(served):
    from tests.traces import otlp_fixtures as fx

    def protobuf(trace: str) -> bytes:
        request = ExportTraceServiceRequest()
        document = fx.current(trace)
        span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        added = request.resource_spans.add().scope_spans.add().spans.add()
        added.trace_id, added.span_id, added.name = bytes.fromhex(trace), bytes.fromhex(span["spanId"]), "s"
        return request.SerializeToString()

    traces = ["1" * 32, "2" * 32]
    body = gzip.compress(protobuf(traces[0])) + gzip.compress(protobuf(traces[1]))  # two members
    reply = post(
        f"{served.url}/v1/traces",
        content=body,
        headers={"content-type": "application/x-protobuf", "content-encoding": "gzip"},
    )
    assert reply.status_code == 200, reply.text
    stored = served.store.trace_spans("default", traces)
    assert all(len(stored[t]) == 1 for t in traces)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/v1/evals", {"GET", "POST"}),
        ("PUT", "/v1/files", {"GET", "POST"}),
    ],
)
def test_405_names_the_allowed_methods(served, method, path, allowed):
    host, port = served.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        assert response.status == 405
        assert allowed <= {m.strip() for m in response.getheader("Allow", "").split(",")}
    finally:
        connection.close()


def test_a_criterion_name_too_long_to_store_is_refused_at_creation(served):
    """Accepted, its runs would fail writing their first result: refused now, naming the field and the limit."""
    criterion = {**EVAL["testing_criteria"][0], "name": "n" * 300}
    status, reply = _raw(f"{served.url}/v1/evals", json.dumps({**EVAL, "testing_criteria": [criterion]}))
    assert status == 400
    message = reply["error"]["message"]
    assert "testing_criteria[0].name" in message and "300" in message and "256" in message


SHAPES_THAT_WERE_500S = {
    # What schemathesis' coverage phase sent: a JSON value of the wrong type where a name belongs.
    "a list as a judge's model": {"type": "score_model", "name": "s", "model": [None, None], "input": [], "range": []},
    "an object as a criterion's type": {"type": {}, "name": "s", "model": "", "input": []},
    "an object as a metric's name": {
        "type": "text_similarity",
        "name": "s",
        "input": "",
        "reference": "",
        "evaluation_metric": {},
    },
    "a python grader without its source": {"type": "python", "name": "s"},
}


@pytest.mark.parametrize("criterion", SHAPES_THAT_WERE_500S.values(), ids=SHAPES_THAT_WERE_500S.keys())
def test_a_criterion_value_of_the_wrong_type_is_a_400(served, criterion):
    status, reply = _raw(f"{served.url}/v1/evals", json.dumps({**EVAL, "testing_criteria": [criterion]}))
    assert status == 400, reply
    message = reply["error"]["message"]
    assert "testing criterion 's'" in message or "testing_criteria[0]" in message, message


def test_an_object_as_a_data_source_type_is_a_400(served):
    status, reply = _raw(f"{served.url}/v1/evals", json.dumps({**EVAL, "data_source_config": {"type": {}}}))
    assert status == 400 and "data_source_config.type" in reply["error"]["message"]
    status, created = _raw(f"{served.url}/v1/evals", json.dumps(EVAL))
    assert status in (200, 201)
    bad_run = {"data_source": {"type": {}, "source": {"type": "file_content", "content": []}}}
    status, reply = _raw(f"{served.url}/v1/evals/{created['id']}/runs", json.dumps(bad_run))
    assert status == 400 and "data_source.type" in reply["error"]["message"]
