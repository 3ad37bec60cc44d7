"""The OpenAI Evals API driven by the real openai SDK against a real assay server."""

from __future__ import annotations

import io
import json

import openai
import pytest

from tests.api.conftest import wait_for

ROWS = [
    {"query": "Capital of France?", "response": "Paris is the capital.", "ground_truth": "Paris"},
    {"query": "Capital of Japan?", "response": "Tokyo", "ground_truth": "Tokyo"},
    {"query": "Capital of Germany?", "response": "I don't know.", "ground_truth": "Berlin"},
]
SCHEMA = {
    "type": "object",
    "properties": {k: {"type": "string"} for k in ("query", "response", "ground_truth")},
    "required": ["query", "response", "ground_truth"],
}
CRITERIA = [
    {
        "type": "azure_ai_evaluator",
        "name": "f1",
        "evaluator_name": "builtin.f1_score",
        "data_mapping": {"response": "{{item.response}}", "ground_truth": "{{item.ground_truth}}"},
    },
    {
        "type": "string_check",
        "name": "mentions",
        "input": "{{item.response}}",
        "reference": "{{item.ground_truth}}",
        "operation": "ilike",
    },
]


def jsonl(rows, wrap=True) -> bytes:
    return "".join(json.dumps({"item": r} if wrap else r) + "\n" for r in rows).encode()


def make_eval(client, criteria=CRITERIA, schema=SCHEMA):
    return client.evals.create(
        name="capitals",
        data_source_config={"type": "custom", "item_schema": schema, "include_sample_schema": False},
        testing_criteria=criteria,
    )


@pytest.mark.parametrize("prefix", ["/v1", "/openai/v1", "/api/projects/default/openai/v1", "/openai"])
def test_seed_flow_with_an_uploaded_jsonl(served, prefix):
    client = served.client(prefix=prefix)
    uploaded = client.files.create(file=("capitals.jsonl", io.BytesIO(jsonl(ROWS))), purpose="evals")
    assert uploaded.status == "processed" and uploaded.bytes > 0
    created = make_eval(client)
    assert created.data_source_config.schema_["properties"]["item"] == SCHEMA
    assert all(c.model_extra.get("id") or getattr(c, "id", None) for c in created.testing_criteria)
    run = client.evals.runs.create(
        eval_id=created.id,
        name="first",
        data_source={"type": "jsonl", "source": {"type": "file_id", "id": uploaded.id}},
    )
    assert run.status == "queued" and run.result_counts.total == 0
    run = wait_for(client, created.id, run.id)
    assert run.status == "completed", run.error
    assert (run.result_counts.total, run.result_counts.passed, run.result_counts.failed) == (3, 2, 1)
    per = {r.model_extra["name"]: r for r in run.per_testing_criteria_results}
    assert (per["f1"].passed, per["mentions"].passed) == (2, 2)
    items = list(client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id))
    assert [i.datasource_item_id for i in items] == [0, 1, 2]
    first = items[0]
    assert first.datasource_item == ROWS[0] and first.status == "pass"
    f1 = next(r for r in first.results if r.name == "f1")
    assert f1.model_extra["metric"] == "f1_score" and f1.model_extra["label"] == "pass" and f1.passed is True
    assert f1.model_extra["threshold"] == 0.5 and round(f1.score, 4) == 0.5
    assert (
        client.evals.runs.output_items.retrieve(output_item_id=first.id, run_id=run.id, eval_id=created.id).id
        == first.id
    )
    failed = client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id, status="fail")
    assert [i.datasource_item_id for i in failed] == [2]
    assert run.report_url.endswith(f"/ui/runs/{run.id}")


def test_csv_and_inline_content_and_pagination(served):
    client = served.client()
    csv_bytes = b"query,response,ground_truth\n" + b"".join(f"q{i},answer {i},answer {i}\n".encode() for i in range(45))
    uploaded = client.files.create(file=("rows.csv", io.BytesIO(csv_bytes)), purpose="evals")
    created = make_eval(client)
    csv_run = client.evals.runs.create(
        eval_id=created.id, data_source={"type": "csv", "source": {"type": "file_id", "id": uploaded.id}}
    )
    inline = client.evals.runs.create(
        eval_id=created.id,
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in ROWS]}},
    )
    assert wait_for(client, created.id, csv_run.id).result_counts.passed == 45
    assert wait_for(client, created.id, inline.id).result_counts.total == 3
    page = client.evals.runs.output_items.list(run_id=csv_run.id, eval_id=created.id, limit=20)
    assert len(page.data) == 20 and page.has_more
    every = [item.datasource_item_id for item in page]  # the SDK follows `after` across pages
    assert every == list(range(45))
    backwards = client.evals.runs.output_items.list(run_id=csv_run.id, eval_id=created.id, limit=5, order="desc")
    assert [i.datasource_item_id for i in backwards.data] == [44, 43, 42, 41, 40]
    runs = client.evals.runs.list(eval_id=created.id, status="completed")
    assert {r.id for r in runs} == {csv_run.id, inline.id}
    assert client.evals.retrieve(created.id).name == "capitals"
    assert client.evals.update(created.id, name="renamed", metadata={"team": "qa"}).metadata == {"team": "qa"}
    assert created.id in {e.id for e in client.evals.list()}
    assert client.evals.runs.delete(run_id=inline.id, eval_id=created.id).deleted
    assert client.evals.delete(created.id).deleted
    assert client.files.delete(uploaded.id).deleted


@pytest.mark.parametrize(
    "call, status, fragment",
    [
        (
            lambda c: make_eval(
                c, criteria=[{"type": "azure_ai_evaluator", "name": "x", "evaluator_name": "builtin.nope"}]
            ),
            400,
            "unknown evaluator 'builtin.nope'",
        ),
        (lambda c: make_eval(c, schema={"type": "objekt"}), 400, "not a valid JSON Schema"),
        (
            lambda c: make_eval(
                c,
                criteria=[
                    {
                        **CRITERIA[0],
                        "data_mapping": {"response": "{{item.answer}}", "ground_truth": "{{item.ground_truth}}"},
                    }
                ],
            ),
            400,
            "no field 'answer'",
        ),
        (lambda c: c.evals.retrieve("eval_missing"), 404, "No eval found"),
    ],
)
def test_bad_requests_say_what_is_wrong(served, call, status, fragment):
    client = served.client()
    with pytest.raises(openai.APIStatusError) as info:
        call(client)
    assert info.value.status_code == status and fragment in info.value.message
    assert info.value.response.headers.get("x-request-id")


def test_a_file_that_is_not_jsonl_is_refused_with_its_lines(served):
    client = served.client()
    lines = b'{"query": "a", "response": "b", "ground_truth": "c"}\nnot json\n{"query": "only"}\n'
    uploaded = client.files.create(file=("bad.jsonl", io.BytesIO(lines)), purpose="evals")
    created = make_eval(client)
    with pytest.raises(openai.BadRequestError) as info:
        client.evals.runs.create(
            eval_id=created.id, data_source={"type": "jsonl", "source": {"type": "file_id", "id": uploaded.id}}
        )
    assert (
        "bad.jsonl:2: invalid JSON" in info.value.message
        and "bad.jsonl:3: 'response' is required" in info.value.message
    )
    assert list(client.evals.runs.list(eval_id=created.id)) == []
    with pytest.raises(openai.BadRequestError, match="No file found"):
        client.evals.runs.create(
            eval_id=created.id, data_source={"type": "jsonl", "source": {"type": "file_id", "id": "file_nope"}}
        )


def test_cancel_stops_a_run(served, llm):
    llm.script(default={"content": '{"reason": "ok", "score": 4}'}, latency_ms=300)
    client = served.client()
    created = make_eval(
        client,
        criteria=[
            {
                "type": "azure_ai_evaluator",
                "name": "relevance",
                "evaluator_name": "builtin.relevance",
                "initialization_parameters": {"model": "judge"},
            }
        ],
    )
    rows = [{"query": f"q{i}", "response": f"r{i}", "ground_truth": "g"} for i in range(400)]
    run = client.evals.runs.create(
        eval_id=created.id,
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in rows]}},
    )
    deadline = __import__("time").monotonic() + 20
    while client.evals.runs.retrieve(run_id=run.id, eval_id=created.id).status != "in_progress":
        assert __import__("time").monotonic() < deadline
    canceled = client.evals.runs.cancel(run_id=run.id, eval_id=created.id)
    assert canceled.status == "canceled"
    final = wait_for(client, created.id, run.id)
    assert final.status == "canceled" and final.result_counts.total < 400


def test_rows_with_their_samples_are_graded_through_the_api(served):
    client = served.client()
    created = client.evals.create(
        name="with samples",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}, "include_sample_schema": True},
        testing_criteria=[
            {
                "type": "string_check",
                "name": "exact",
                "input": "{{sample.output_text}}",
                "reference": "{{item.answer}}",
                "operation": "eq",
            }
        ],
    )
    run = client.evals.runs.create(
        eval_id=created.id, data_source={"type": "jsonl", "source": {"type": "file_content", "content": SAMPLED_ROWS}}
    )
    finished = wait_for(client, created.id, run.id)
    assert finished.status == "completed", finished.error
    assert (finished.result_counts.passed, finished.result_counts.failed) == (1, 1)
    # Created without a name, the run is named after its eval, as `assay run` names its runs.
    assert run.name == finished.name == "with samples"
    listed = served.store.list_runs_of(created.id)
    assert [r.name for r in listed] == ["with samples"]


SAMPLED_ROWS = [
    {"item": {"question": "2+2?", "answer": "4"}, "sample": {"output_text": "4"}},
    {"item": {"question": "3+3?", "answer": "6"}, "sample": {"output_text": "7"}},
]


def test_results_are_named_by_their_criterions_id_as_openai_names_them(served):
    """azure-ai-evaluation maps each result back to its grader through ``testing_criteria[i].id``:
    without an id given, a criterion's id is its name, so ``result.name`` is both."""
    client = served.client()
    criteria = [
        {"type": "string_check", "name": "exact", "input": "{{item.a}}", "reference": "{{item.b}}", "operation": "eq"},
        {
            "type": "string_check",
            "id": "mine-1",
            "name": "like",
            "input": "{{item.a}}",
            "reference": "x",
            "operation": "like",
        },
    ]
    created = client.evals.create(
        name="ids", data_source_config={"type": "custom", "item_schema": {"type": "object"}}, testing_criteria=criteria
    )
    assert [c.id for c in created.testing_criteria] == ["exact", "mine-1"]
    run = client.evals.runs.create(
        eval_id=created.id,
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": {"a": "x", "b": "x"}}]}},
    )
    finished = wait_for(client, created.id, run.id)
    assert sorted(r.testing_criteria for r in finished.per_testing_criteria_results) == ["exact", "mine-1"]
    (item,) = client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)
    assert sorted(r.name for r in item.results) == ["exact", "mine-1"]


def test_a_skipped_result_is_null_on_foundrys_paths_and_zero_on_openais(served, llm):
    """Foundry gives a result that was not scored a null score and verdict; OpenAI's spec requires a
    number and a boolean, so its paths keep 0 and false (``status`` says skipped on both)."""
    llm.script(default={"content": '{"reason": "no question was asked", "score": null, "status": "skipped"}'})
    client = served.client()
    judged = [
        {
            "type": "azure_ai_evaluator",
            "name": "relevance",
            "evaluator_name": "builtin.relevance",
            "initialization_parameters": {"model": "judge"},
        }
    ]
    created = make_eval(client, criteria=judged)
    source = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": ROWS[0]}]}}
    run = wait_for(client, created.id, client.evals.runs.create(created.id, data_source=source).id)
    assert run.result_counts.skipped == 1
    (openai_item,) = list(client.evals.runs.output_items.list(run.id, eval_id=created.id))
    foundry = served.client(prefix="/api/projects/default/openai/v1")
    (foundry_item,) = list(foundry.evals.runs.output_items.list(run.id, eval_id=created.id))
    (on_openai,), (on_foundry,) = openai_item.results, foundry_item.results
    assert on_openai.model_extra["status"] == on_foundry.model_extra["status"] == "skipped"
    assert (on_openai.score, on_openai.passed) == (0.0, False)
    assert (on_foundry.score, on_foundry.passed) == (None, None)
    again = foundry.evals.runs.output_items.retrieve(foundry_item.id, eval_id=created.id, run_id=run.id)
    assert again.results[0].score is None
