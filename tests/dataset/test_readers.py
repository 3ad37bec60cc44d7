import json

import pytest

from assay.dataset import Dataset, ItemSchema, scan
from assay.errors import ConfigError, DataError

SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def bad_file(tmp_path):
    lines = [json.dumps({"query": f"q{i}"}) for i in range(1, 11)]
    lines[2] = '{"query": "q3" "oops": 1}'
    lines[6] = json.dumps({"question": "q7"})
    lines[8] = "[1, 2, 3]"
    return write_lines(tmp_path / "data.jsonl", lines)


def test_scan_reports_every_bad_line_with_its_number(tmp_path):
    report = scan(Dataset.from_path(bad_file(tmp_path)), ItemSchema(SCHEMA))
    assert [str(issue) for issue in report.issues] == [
        "data.jsonl:3: invalid JSON (Expecting ',' delimiter, column 16)",
        "data.jsonl:7: 'query' is required by the item_schema",
        "data.jsonl:9: expected a JSON object, got array",
    ]
    assert report.rows == 10 and not report.ok
    with pytest.raises(DataError) as info:
        report.raise_if_invalid()
    assert "data.jsonl:9" in str(info.value)


def test_item_wrapped_lines_are_unwrapped_and_blank_lines_skipped(tmp_path):
    path = write_lines(
        tmp_path / "d.jsonl",
        [
            json.dumps({"item": {"query": "a"}, "sample": {"output_text": "b"}}),
            "",
            json.dumps({"query": "c"}),
        ],
    )
    rows = list(Dataset.from_path(path).rows())
    assert [(r.index, r.line, r.item, r.sample) for r in rows] == [
        (0, 1, {"query": "a"}, {"output_text": "b"}),
        (1, 3, {"query": "c"}, None),
    ]


def test_csv_needs_a_header_and_reports_ragged_rows(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('query,response\nhello,world\n"with, comma",x\nonly-one\n', encoding="utf-8")
    rows = list(Dataset.from_path(path).rows())
    assert rows[0].item == {"query": "hello", "response": "world"}
    assert rows[1].item == {"query": "with, comma", "response": "x"}
    assert str(rows[2].issue) == "d.csv:4: has 1 cells but the header has 2 columns"
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match="needs a header row"):
        list(Dataset.from_path(empty).rows())


def test_inline_file_content(tmp_path):
    rows = list(Dataset.from_content([{"item": {"q": 1}}, "nope"]).rows())
    assert rows[0].item == {"q": 1}
    assert str(rows[1].issue) == "file_content:2: expected an object, got str"


def test_schema_type_errors_name_the_field():
    schema = ItemSchema({"type": "object", "properties": {"n": {"type": "integer"}}})
    assert schema.problems({"n": "x"}) == [("n", "'n': 'x' is not of type 'integer'")]


def test_malformed_schema_is_a_config_error():
    with pytest.raises(ConfigError, match="not a valid JSON Schema"):
        ItemSchema({"type": "objekt"})


def test_missing_file_and_bad_encoding_are_clear(tmp_path):
    with pytest.raises(ConfigError, match="dataset not found"):
        list(Dataset.from_path(tmp_path / "nope.jsonl").rows())
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"q": "caf\xe9"}\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        list(Dataset.from_path(latin).rows())
