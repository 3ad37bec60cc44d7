"""A JSONL file read at once (its bytes, line by line by orjson) gives exactly the rows, issues and
line numbers the general reader gives, or leaves the file to it."""

from __future__ import annotations

import io
import json

import pytest

from assay.dataset import Dataset
from assay.dataset.readers import BYTE_ORDER_MARK, MAX_DEPTH, jsonl_rows, jsonl_rows_at_once


def _general(data: bytes) -> list[tuple[object, ...]]:
    text = io.StringIO(data.decode("utf-8-sig"), newline="")
    return [_seen(row) for row in jsonl_rows(text, "data.jsonl")]


def _at_once(data: bytes) -> list[tuple[object, ...]] | None:
    rows = jsonl_rows_at_once(data, "data.jsonl")
    return None if rows is None else [_seen(row) for row in rows]


def _seen(row):
    issue = None if row.issue is None else (row.issue.source, row.issue.line, row.issue.message)
    return row.index, row.line, json.dumps(row.item, allow_nan=True), json.dumps(row.sample), issue


DEEP = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
LINES = [
    '{"q": "plain", "n": 1, "x": [1, 2.5, null, true]}',
    "",
    "   ",
    "\x1c",  # blank to a text reader
    '{"q": "caf\u00e9 \u4e2d\u6587 \U0001f600"}',  # not ASCII
    '{"q": "\\ud800"}',  # a lone surrogate: orjson refuses it, the standard library reads it
    '{"q": NaN, "r": Infinity}',
    '{"q": 1e400}',
    '{"q": 1, "q": 2}',
    "not json",
    "[1, 2]",
    '"text"',
    "42",
    '{"q": 1} {"r": 2}',
    '{"item": {"q": "wrapped"}, "sample": {"output_text": "hi"}}',
    '{"item": {"q": "x"}, "other": 1}',
    '{"deep": ' + DEEP + "}",
    '{"q": "\\u0000 nul"}',
    '{"q": "\t tab"}',
]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("bom", [b"", BYTE_ORDER_MARK])
def test_every_kind_of_line_reads_as_the_general_reader_reads_it(newline, bom):
    data = bom + newline.join(LINES).encode("utf-8") + newline.encode()
    at_once = _at_once(data)
    assert at_once is not None
    assert at_once == _general(data)
    assert len(at_once) == len(LINES) - 3  # the blank lines hold no row


def test_a_last_line_without_a_newline_is_read():
    data = b'{"q": 1}\n{"q": 2}'
    assert _at_once(data) == _general(data)
    assert [row[1] for row in _at_once(data) or []] == [1, 2]


def test_a_file_not_utf8_goes_to_the_general_reader():
    assert jsonl_rows_at_once(b'{"q": "\xff"}\n', "data.jsonl") is None


@pytest.mark.parametrize(
    "line",
    [
        b'{"id": 12345678901234567890}',  # past 64 bits: orjson makes it a float
        b'{"id": -9223372036854775809}',  # below -2**63: a float too
        b'{"n": [1, {"id": 123456789012345678901234567890}]}',  # nested
        b'{"id": 18446744073709551615, "m": -9223372036854775808}',  # the last that orjson holds
        b'{"x": 1e19, "y": -2.5e300}',  # floats as large
        b'{"id": "1234567890123456789"}',  # digits in a string
    ],
)
def test_a_number_orjson_may_read_otherwise_reads_exactly(line):
    data = b'{"q": 1}\n' + line + b"\n"
    assert _at_once(data) == _general(data)
    assert json.loads(line) == (jsonl_rows_at_once(data, "data.jsonl") or [])[1].item


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 2000])
@pytest.mark.parametrize("kind", ["[]", "{}"])
def test_nesting_is_measured_as_the_general_reader_measures_it(depth, kind):
    opening, closing = ('{"a": ', "}") if kind == "{}" else ("[", "]")
    line = '{"deep": ' + opening * depth + "1" + closing * depth + "}"
    data = ('{"q": 1}\n' + line + "\n").encode()
    assert _at_once(data) == _general(data)


def test_a_file_with_a_long_number_still_reads_it_exactly(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_bytes(b'{"id": 123456789012345678901234567890}\n')
    assert [row.item for row in Dataset.from_path(path).rows()] == [{"id": 123456789012345678901234567890}]


def test_an_uploaded_file_reads_the_same_either_way():
    data = "\n".join(LINES).encode("utf-8")
    uploaded = [_seen(row) for row in Dataset.from_bytes(data, "upload.jsonl").rows()]
    assert uploaded == [_seen(row) for row in jsonl_rows(io.StringIO(data.decode(), newline=""), "upload.jsonl")]


def test_a_file_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_bytes(b'{"q": "a"}\n{"q": "\xff"}\n')
    with pytest.raises(Exception, match=r"data.jsonl:2: not UTF-8"):
        list(Dataset.from_path(path).rows())


def test_only_rows_orjson_read_are_finite_and_a_nan_is_stored_as_one():
    """``Row.finite`` (a null in the row's JSON is a None, so the store skips its check) holds only
    for what orjson read: a line with NaN, an infinity or a number past a double's range is read by
    the standard library, whose floats may be any, and its item is stored with them."""
    import math

    from assay.store import values

    lines = [
        b'{"q": "a", "n": null, "x": 1.5}',
        b'{"item": {"q": "b"}, "sample": {"output_text": null}}',
        b'{"q": NaN}',
        b'{"q": -Infinity}',
        b'{"q": 1e400}',
    ]
    rows = jsonl_rows_at_once(b"\n".join(lines) + b"\n", "data.jsonl") or []
    assert [row.finite for row in rows] == [True, True, False, False, False]
    for row in rows:
        stored = values.loads(values.dumps(row.item, finite=row.finite))
        assert json.dumps(stored) == json.dumps(row.item)  # NaN and infinities read back as themselves
    assert math.isnan(values.loads(values.dumps(rows[2].item, finite=rows[2].finite))["q"])
