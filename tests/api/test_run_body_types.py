"""The run request's types are the truth: the server reads every kind they name and no other, the
OpenAPI document's run body is generated from them, and a shape the kind's own checks did not look
at is refused naming its field (through the real openai SDK), not failed on later."""

from __future__ import annotations

import openai
import pytest

from assay.api import create_app
from assay.api.openapi import RUN_BODY
from assay.run.data_sources import KINDS, parse_data_source
from assay.run.sources import FILE_SOURCES, TARGET_SOURCES
from assay.run.trace_sources import TRACE_SOURCES
from tests.api.test_evals_api import CRITERIA, make_eval

SOURCE = {"type": "file_content", "content": [{"item": {"query": "q", "response": "r", "ground_truth": "r"}}]}


def test_the_types_name_every_kind_the_server_reads():
    assert KINDS == FILE_SOURCES | TARGET_SOURCES | TRACE_SOURCES


def test_the_openapi_run_body_is_generated_from_the_types(store):
    document = create_app(store, catalog=lambda project: None, models=lambda: None).openapi()
    body = document["paths"]["/v1/evals/{eval_id}/runs"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"] == {"$ref": f"#/components/schemas/{RUN_BODY}"}
    schemas = document["components"]["schemas"]
    mapping = schemas[RUN_BODY]["properties"]["data_source"]["discriminator"]["mapping"]
    assert set(mapping) == FILE_SOURCES | TARGET_SOURCES | TRACE_SOURCES
    assert all(ref.removeprefix("#/components/schemas/") in schemas for ref in mapping.values())
    target = schemas["AssayTargetCompletionsDataSource"]
    assert set(target["required"]) == {"type", "source", "target"}
    assert "CreateEvalRunRequest" in schemas  # OpenAI's own components stay, for its other operations


@pytest.mark.parametrize(
    ("data_source", "named"),
    [
        ({"type": "jsonl", "source": {"type": "file_id"}}, "data_source.source.id: Field required"),
        (
            {"type": "completions", "source": SOURCE, "model": "judge", "input_messages": {"type": "item_reference"}},
            "data_source.input_messages.item_reference: Field required",
        ),
        (
            {"type": "jsonl", "source": {"type": "file_content", "content": ["a row"]}},
            "data_source.source.content[0]: Input should be a valid dictionary",
        ),
        (
            {
                "type": "azure_ai_target_completions",
                "source": SOURCE,
                "target": {"type": "azure_ai_model", "model": "judge", "sampling_params": "hot"},
            },
            "data_source.target.sampling_params: Input should be a valid dictionary",
        ),
    ],
)
def test_a_shape_the_kind_does_not_take_is_refused_naming_its_field(served, data_source, named):
    client = served.client()
    created = make_eval(client, CRITERIA)
    with pytest.raises(openai.BadRequestError) as refused:
        client.evals.runs.create(eval_id=created.id, data_source=data_source)
    assert named in str(refused.value)
    assert client.evals.runs.list(eval_id=created.id).data == []  # nothing was queued


def test_a_kind_s_own_message_comes_first_where_it_has_one():
    with pytest.raises(Exception, match="not supported by this server yet"):
        parse_then_check({"type": "responses", "source": SOURCE})
    with pytest.raises(Exception, match=r"data_source.source must be \{type: file_id"):
        parse_then_check({"type": "jsonl", "source": {"type": "url", "url": "x"}})


def parse_then_check(data_source: dict) -> None:
    from assay.run.sources import check_data_source

    check_data_source(data_source)
    parse_data_source(data_source)  # not reached: the check refuses first
