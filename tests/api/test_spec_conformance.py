"""Every Files and Evals operation of OpenAI's published spec, replayed through the openai SDK with
strict response validation against a real server; every response body is validated against the
spec's schema for that operation (``tests/support/openai_spec.py``, documented exceptions there)."""

from __future__ import annotations

import io
import json

import httpx2 as httpx
import openai
import pytest
from openai import OpenAI
from openai.types.evals import RunCancelResponse

from tests.api.conftest import wait_for
from tests.support.openai_spec import EXCEPTIONS, OPERATIONS, Recorder

ROWS = [
    {"review": "I love it", "expected": "positive"},
    {"review": "It broke on day one", "expected": "negative"},
    {"review": "meh", "expected": "neutral"},
]
SCHEMA = {
    "type": "object",
    "properties": {"review": {"type": "string"}, "expected": {"type": "string"}},
    "required": ["review", "expected"],
}
MESSAGES = [
    {"role": "system", "content": "Classify the sentiment."},
    {"role": "user", "content": [{"type": "input_text", "text": "{{item.review}}"}]},
]
GRADERS = [
    {
        "type": "string_check",
        "name": "exact",
        "input": "{{sample.output_text}}",
        "reference": "{{item.expected}}",
        "operation": "eq",
    },
    {
        "type": "text_similarity",
        "name": "similar",
        "input": "{{sample.output_text}}",
        "reference": "{{item.expected}}",
        "evaluation_metric": "fuzzy_match",
        "pass_threshold": 0.8,
    },
    {
        "type": "label_model",
        "name": "sentiment",
        "model": "judge",
        "input": MESSAGES,
        "labels": ["positive", "neutral", "negative"],
        "passing_labels": ["positive", "neutral"],
    },
    {
        "type": "score_model",
        "name": "quality",
        "model": "judge",
        "input": MESSAGES,
        "range": [0, 10],
        "pass_threshold": 5,
    },
    {
        "type": "python",
        "name": "short",
        "source": "def grade(sample, item):\n    return float(len(sample['output_text']) < 9)\n",
        "pass_threshold": 0.5,
    },
]
ITEM_GRADER = [
    {
        "type": "string_check",
        "name": "same",
        "input": "{{item.review}}",
        "reference": "{{item.expected}}",
        "operation": "eq",
    }
]


@pytest.fixture
def strict(served):
    """A strict SDK client whose every response is recorded and validated against the spec."""
    recorder = Recorder()
    http = httpx.Client(event_hooks={"response": [recorder]})
    client = OpenAI(
        base_url=f"{served.url}/v1",
        api_key="anonymous",
        max_retries=0,
        http_client=http,
        _strict_response_validation=True,
    )
    yield client, recorder
    client.close()


def test_every_operation_validates_against_the_spec(served, strict, llm):
    client, recorder = strict
    llm.script(
        rules=[
            {"match": "love", "reply": {"content": '{"label": "positive", "result": 8}'}},
            {"match": "broke", "reply": {"content": '{"label": "negative", "result": 2}'}},
            {"match": "meh", "reply": {"content": '{"label": "sarcastic", "result": 5}'}},
        ],
        default={"content": "positive"},
    )
    body = "".join(json.dumps({"item": r}) + "\n" for r in ROWS).encode()
    uploaded = client.files.create(file=("reviews.jsonl", io.BytesIO(body)), purpose="user_data")
    client.files.retrieve(uploaded.id)
    assert client.files.content(uploaded.id).read() == body
    assert [f.id for f in client.files.list()] == [uploaded.id]
    assert list(client.files.list(purpose="batch")) == []  # an empty page

    created = client.evals.create(
        name="sentiment",
        metadata={"team": "search"},
        testing_criteria=GRADERS,
        data_source_config={"type": "custom", "item_schema": SCHEMA, "include_sample_schema": True},
    )
    unnamed = client.evals.create(
        data_source_config={"type": "custom", "item_schema": SCHEMA}, testing_criteria=ITEM_GRADER
    )
    assert unnamed.name  # never null
    client.evals.retrieve(created.id)
    _backdate(served.store, {created.id: 20, unnamed.id: 10})  # timestamps are seconds: no ties to break
    client.evals.update(created.id, name="sentiment v2", metadata={"team": "ranking"})
    assert [e.id for e in client.evals.list(order_by="updated_at", order="desc")] == [created.id, unnamed.id]
    assert [e.id for e in client.evals.list(order_by="created_at", order="desc")] == [unnamed.id, created.id]

    data_source = {
        "type": "completions",
        "model": "judge",
        "input_messages": {"type": "template", "template": MESSAGES},
        "source": {"type": "file_id", "id": uploaded.id},
    }
    run = client.evals.runs.create(created.id, name="first", metadata={"commit": "abc"}, data_source=data_source)
    run = wait_for(client, created.id, run.id)
    assert run.status == "completed", run.error
    items = list(client.evals.runs.output_items.list(run.id, eval_id=created.id))
    assert len(items) == 3 and all(len(i.results) == len(GRADERS) for i in items)
    errored = next(r for r in items[2].results if r.name == "sentiment")
    assert errored.model_extra["status"] == "error" and (errored.score, errored.passed) == (0.0, False)
    client.evals.runs.output_items.retrieve(items[0].id, eval_id=created.id, run_id=run.id)
    failed = list(client.evals.runs.output_items.list(run.id, eval_id=created.id, status="fail"))
    assert failed and {i.id for i in failed} <= {i.id for i in items if i.status == "fail"}
    assert list(client.evals.runs.output_items.list(run.id, eval_id=created.id, status="pass")) == []
    client.evals.runs.list(created.id)
    client.evals.runs.list(unnamed.id)  # an empty page

    queued = client.evals.runs.create(
        unnamed.id, data_source={"type": "jsonl", "source": {"type": "file_id", "id": uploaded.id}}
    )
    client.evals.runs.cancel(queued.id, eval_id=unnamed.id)
    # The spec's own cancel route (the SDK posts to .../cancel).
    spec_cancel = client.post(f"/evals/{unnamed.id}/runs/{queued.id}", cast_to=RunCancelResponse)
    assert spec_cancel.status in ("canceled", "completed")
    client.evals.runs.delete(queued.id, eval_id=unnamed.id)
    client.evals.delete(unnamed.id)
    client.files.delete(uploaded.id)

    every = {op["operationId"] for _, _, op in OPERATIONS}
    assert recorder.operations() == every, every - recorder.operations()
    assert not recorder.unmatched
    assert not recorder.problems(), "\n".join(recorder.problems())


def _backdate(store, seconds_by_eval: dict[str, int]) -> None:
    from assay.store import tables

    with store.engine.begin() as conn:
        for eval_id, seconds in seconds_by_eval.items():
            evals = tables.evals
            conn.execute(evals.update().where(evals.c.id == eval_id).values(created_at=evals.c.created_at - seconds))


def test_purpose_evals_is_kept_as_uploaded(served):
    """The one documented exception on files: the SDK parses it (not strictly: its Literal lacks it)."""
    client = served.client()
    uploaded = client.files.create(file=("rows.jsonl", io.BytesIO(b'{"a": 1}\n')), purpose="evals")
    assert uploaded.purpose == "evals"
    assert [f.id for f in client.files.list(purpose="evals")] == [uploaded.id]
    assert any("purpose" in e.where for e in EXCEPTIONS)


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"n": 1}, "metadata.n: expected a string, got int"),
        ("tag", "metadata: expected an object, got str"),
        ({f"k{i}": "v" for i in range(17)}, "17 pairs, at most 16"),
        ({"k" * 65: "v"}, "65 characters, at most 64"),
        ({"k": "v" * 513}, "513 characters, at most 512"),
    ],
)
def test_metadata_is_bounded_as_the_spec_says(served, metadata, message):
    client = served.client()
    config = {"type": "custom", "item_schema": SCHEMA}
    with pytest.raises(openai.BadRequestError, match=message):
        client.evals.create(data_source_config=config, testing_criteria=ITEM_GRADER, metadata=metadata)
    created = client.evals.create(data_source_config=config, testing_criteria=ITEM_GRADER, metadata={"ok": "yes"})
    with pytest.raises(openai.BadRequestError, match=message):
        client.evals.update(created.id, metadata=metadata)
    inline = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": ROWS[0]}]}}
    with pytest.raises(openai.BadRequestError, match=message):
        client.evals.runs.create(created.id, data_source=inline, metadata=metadata)
    assert client.evals.retrieve(created.id).metadata == {"ok": "yes"}


def test_an_unknown_purpose_is_refused(served):
    client = served.client()
    with pytest.raises(openai.BadRequestError, match="purpose: 'not-a-purpose' is not a file purpose"):
        client.files.create(file=("rows.jsonl", io.BytesIO(b"{}\n")), purpose="not-a-purpose")  # type: ignore[arg-type]
    assert list(client.files.list()) == []


def test_creates_answer_201_as_the_spec_says(served):
    config = {"type": "custom", "item_schema": SCHEMA}
    response = httpx.post(
        f"{served.url}/v1/evals", json={"data_source_config": config, "testing_criteria": ITEM_GRADER}
    )
    assert response.status_code == 201
    inline = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": ROWS[0]}]}}
    run = httpx.post(f"{served.url}/v1/evals/{response.json()['id']}/runs", json={"data_source": inline})
    assert run.status_code == 201
