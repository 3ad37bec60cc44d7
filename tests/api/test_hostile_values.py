"""Values the databases cannot hold as they are (NUL, lone surrogates, NaN, infinities, strings
longer than a column), sent through the real API on SQLite and PostgreSQL: kept losslessly or
refused for that one request with a 400 naming the field; never a failed run or a 500."""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.request

import pytest

from tests.api.conftest import wait_for
from tests.api.test_otlp import post
from tests.traces import otlp_fixtures as fx

CRITERIA = [
    {"type": "string_check", "name": "echo", "input": "{{item.text}}", "reference": "{{item.text}}", "operation": "eq"}
]


def _raw(url: str, body: str | None = None, method: str = "POST") -> tuple[int, dict]:
    data = None if body is None else body.encode("utf-8", errors="surrogatepass")
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_nul_nan_infinity_and_surrogates_in_items_keep_every_item(served):
    client = served.client()
    rows = [{"text": f"row {i}", "n": i} for i in range(200)]
    rows[3] = {"text": "nul \u0000 inside", "n": 3}
    rows[50] = {"text": "not a number", "n": float("nan")}
    rows[90] = {"text": "too big", "n": float("inf"), "m": float("-inf")}
    rows[120] = {"text": "lone \ud800 surrogate", "n": 120}
    created = client.evals.create(
        name="odd values",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=CRITERIA,
    )
    body = json.dumps(
        {"data_source": {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in rows]}}}
    )
    status, run = _raw(f"{served.url}/v1/evals/{created.id}/runs", body)
    assert status in (200, 201), run
    finished = wait_for(client, created.id, run["id"])
    assert finished.status == "completed", finished.error
    assert finished.result_counts.total == 200 and finished.result_counts.passed == 200
    items = list(client.evals.runs.output_items.list(run_id=run["id"], eval_id=created.id, limit=100))
    assert sorted(i.datasource_item_id for i in items) == list(range(200))
    by_id = {i.datasource_item_id: i.datasource_item for i in items}
    assert by_id[3]["text"] == "nul \u0000 inside"
    assert by_id[50]["n"] == "NaN" and by_id[90]["n"] == "Infinity" and by_id[90]["m"] == "-Infinity"
    assert by_id[120]["text"] == "lone \ud800 surrogate"
    again = client.evals.runs.retrieve(run_id=run["id"], eval_id=created.id)  # every later read works too
    assert again.status == "completed"


def test_a_dataset_number_too_large_for_a_float_is_kept(served):
    client = served.client()
    content = b'{"item": {"text": "a", "n": 1e999}}\n{"item": {"text": "b", "n": 2}}\n'
    uploaded = client.files.create(file=("big.jsonl", io.BytesIO(content)), purpose="evals")
    created = client.evals.create(
        name="big", data_source_config={"type": "custom", "item_schema": {"type": "object"}}, testing_criteria=CRITERIA
    )
    run = client.evals.runs.create(
        eval_id=created.id, data_source={"type": "jsonl", "source": {"type": "file_id", "id": uploaded.id}}
    )
    finished = wait_for(client, created.id, run.id)
    assert finished.status == "completed" and finished.result_counts.total == 2
    items = list(client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id))
    assert {i.datasource_item["n"] for i in items} == {"Infinity", 2}


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "/v1/evals",
            {
                "name": "n" * 600,
                "data_source_config": {"type": "custom", "item_schema": {"type": "object"}},
                "testing_criteria": CRITERIA,
            },
            "name",
        ),
        (
            "/v1/evals",
            {
                "name": "nul \u0000",
                "data_source_config": {"type": "custom", "item_schema": {"type": "object"}},
                "testing_criteria": CRITERIA,
            },
            "name",
        ),
    ],
)
def test_strings_a_column_cannot_hold_are_a_400_naming_the_field(served, path, body, field):
    status, reply = _raw(f"{served.url}{path}", json.dumps(body))
    assert status == 400, reply
    assert f"'{field}'" in reply["error"]["message"]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/evals/%00",
        "/v1/evals?after=%00",
        "/v1/files/file_%00abc",
        "/api/projects/%00/openai/v1/evals",
        "/v1/evals/" + "e" * 500,
        "/api/projects/" + "p" * 300 + "/openai/v1/evals",
    ],
)
def test_nul_and_overlong_path_and_query_values_are_4xx(served, path):
    status, reply = _raw(f"{served.url}{path}", method="GET")
    assert 400 <= status < 500, (status, reply)


def test_a_file_purpose_too_long_is_a_400(served):
    client = served.client()
    import openai

    with pytest.raises(openai.BadRequestError, match="purpose"):
        client.files.create(file=("a.jsonl", io.BytesIO(b'{"a": 1}\n')), purpose="p" * 100)  # type: ignore[arg-type]


def test_one_span_the_store_cannot_hold_does_not_lose_the_batch(served):
    doc = fx.current()
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans.append(
        {
            **spans[0],
            "spanId": "c7ad6b7169203331",
            "name": "nul \u0000 name",
            "attributes": fx.attrs(**{"gen_ai.operation.name": "chat\u0000", "odd": "a\u0000b"}),
        }
    )
    spans.append({**spans[0], "spanId": "d7ad6b7169203331", "startTimeUnixNano": str(10**23)})
    reply = post(f"{served.url}/v1/traces", json_body=doc)
    assert reply.status_code == 200, reply.text
    assert reply.json()["partialSuccess"]["rejectedSpans"] == "1"  # the timestamp no clock can hold
    trace = "0af7651916cd43dd8448eb211c80319c"
    stored = {s.span_id: s for s in served.store.trace_spans("default", [trace])[trace]}
    assert set(stored) == {spans[0]["spanId"], "c7ad6b7169203331"}
    assert stored["c7ad6b7169203331"].attributes["odd"] == "a\u0000b"  # attributes kept as sent


def test_the_capture_pass_through_keeps_replies_to_odd_messages(served, llm):
    llm.reset()
    llm.script(default={"content": "fine"})
    for text in ("nul \u0000 here", "lone \udc00 here"):
        body = json.dumps({"model": "judge", "messages": [{"role": "user", "content": text}]})
        status, reply = _raw(f"{served.url}/v1/chat/completions", body)
        assert status == 200, reply
        got, stored = _raw(f"{served.url}/v1/chat/completions/{reply['id']}", method="GET")
        assert got == 200 and stored["choices"][0]["message"]["content"] == "fine"


@pytest.mark.parametrize(
    "document",
    [
        {"resourceSpans": [1]},
        {"resourceSpans": [{"resource": "not an object", "scopeSpans": []}]},
        {"resourceSpans": [{"resource": {"attributes": 7}, "scopeSpans": []}]},
        {"resourceSpans": [{"scopeSpans": [{"spans": 5}]}]},
        {"resourceSpans": [{"scopeSpans": "x"}]},
    ],
)
def test_otlp_json_of_the_wrong_shape_is_a_400_naming_where(served, document):
    assert post(f"{served.url}/v1/traces", json_body=fx.current()).status_code == 200
    reply = post(f"{served.url}/v1/traces", json_body=document)
    assert reply.status_code == 400, reply.text
    assert "resourceSpans" in reply.json()["message"]
    trace = "0af7651916cd43dd8448eb211c80319c"
    assert len(served.store.trace_spans("default", [trace])[trace]) == 1  # what was stored stays
