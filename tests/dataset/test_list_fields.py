"""Which item fields hold lists (an agent's messages), as the data and as a schema tell: a response
read from one is an agent's answer, whose tool results are its context (``bind_criteria``)."""

from __future__ import annotations

from assay.dataset import Dataset
from assay.dataset.schema import ItemSchema
from assay.dataset.source import scan


def test_the_scan_notes_the_fields_that_hold_lists(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(
        '{"query": "q", "response": [{"role": "assistant", "content": "a"}]}\n'
        '{"query": "q", "response": [], "extra": [1]}\n'
        '{"query": "q", "response": "a string"}\n'
    )
    assert scan(Dataset.from_path(path)).list_fields == {"response", "extra"}


def test_a_schema_lets_a_field_hold_a_list_when_it_types_it_array_or_not_at_all():
    schema = ItemSchema(
        {
            "type": "object",
            "properties": {
                "messages": {"type": "array"},
                "either": {"type": ["string", "array"]},
                "anything": {},
                "text": {"type": "string"},
                "number": {"type": "number"},
            },
        }
    )
    assert schema.list_fields() == {"messages", "either", "anything"}
    assert ItemSchema(None).list_fields() == frozenset()
