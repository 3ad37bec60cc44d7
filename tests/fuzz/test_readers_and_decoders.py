"""Hypothesis property tests for every reader and decoder that meets outside input: whatever the
bytes, each either gives its result or raises its own designed error, never anything else."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.dataset.readers import csv_rows, jsonl_rows, parse_json
from assay.errors import ConfigError, ItemError
from assay.evaluators.judges.parse import JudgeAnswerError, answer_object
from assay.mapping.templates import Template
from assay.messages import MessageFormatError, normalize
from assay.store import values
from assay.traces.otlp import OtlpError, decode, decompress

EXAMPLES = settings(max_examples=150)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text()
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
jsonish_text = st.one_of(
    st.text(),
    json_values.map(lambda v: json.dumps(v, allow_nan=True)),
    st.text(alphabet='{}[]":,0123456789 \\\nabe', max_size=200),
)


@EXAMPLES
@given(st.lists(jsonish_text, max_size=6))
def test_jsonl_rows_give_rows_or_a_config_error(lines):
    try:
        rows = list(jsonl_rows([line + "\n" for line in lines], "fuzz.jsonl"))
    except ConfigError:
        return
    for row in rows:
        assert (row.item is None) != (row.issue is None)
        if row.issue is not None:
            assert row.issue.line >= 1 and row.issue.message


@EXAMPLES
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=400))
def test_csv_rows_give_rows_or_a_config_error(text):
    try:
        rows = list(csv_rows(text.splitlines(keepends=True), "fuzz.csv"))
    except ConfigError as exc:
        assert "fuzz.csv" in exc.message
        return
    assert all(isinstance(row.item, dict) or row.issue is not None for row in rows)


@EXAMPLES
@given(st.one_of(jsonish_text, st.binary(max_size=200)))
def test_parse_json_never_raises(text):
    value, problem = parse_json(text)
    assert problem is None or value is None


@EXAMPLES
@given(json_values)
def test_normalize_gives_messages_or_a_format_error(value):
    try:
        messages = normalize(value)
    except MessageFormatError:
        return
    assert all(m.role in ("developer", "system", "user", "assistant", "tool") for m in messages)


@EXAMPLES
@given(st.text(alphabet=st.sampled_from(list("{}. []0123456789_itemsaple$")), max_size=60), json_values)
def test_templates_compile_and_render_or_say_why(template, item):
    try:
        compiled = Template(template, "fuzz")
    except ConfigError:
        return
    try:
        compiled.render(item if isinstance(item, dict) else {"x": item}, {"output_text": "o"})
    except ItemError:
        pass


@EXAMPLES
@given(
    st.one_of(
        json_values.map(lambda v: json.dumps(v, allow_nan=True).encode()),
        st.builds(
            lambda spans: json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode(),
            st.lists(json_values, max_size=3),
        ),
    )
)
def test_otlp_json_decodes_or_is_refused(body):
    try:
        decoded = decode(body, "application/json")
    except OtlpError as exc:
        assert 400 <= exc.status < 500
        return
    assert decoded.rejected >= 0 and all(len(s.trace_id) == 32 for s in decoded.spans)


@EXAMPLES
@given(st.binary(max_size=300), st.sampled_from([None, "gzip", "deflate"]))
def test_otlp_protobuf_and_compression_decode_or_are_refused(body, encoding):
    try:
        decode(decompress(body, encoding), "application/x-protobuf")
    except OtlpError as exc:
        assert 400 <= exc.status < 500


@EXAMPLES
@given(st.text(max_size=300) | json_values.map(lambda v: f"Here you go: {json.dumps(v)} done"))
def test_judge_answers_parse_or_say_there_is_no_json(text):
    try:
        assert isinstance(answer_object(text), dict)
    except JudgeAnswerError:
        pass


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _same(a, b) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@EXAMPLES
@given(
    st.recursive(
        scalars | st.text(alphabet=st.sampled_from(["a", "\x00", "\ud800", "\udfff", "é"])),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.text(alphabet=st.sampled_from(["k", "\x00", "\ud800"]), max_size=3), inner, max_size=3)
        ),
        max_leaves=20,
    )
)
def test_store_json_keeps_every_value_and_writes_what_databases_accept(value):
    text = values.dumps(value)
    text.encode("utf-8")  # no lone surrogate left
    written = json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(AssertionError(name)))
    assert not any("\x00" in s for s in _strings(written))  # what jsonb refuses
    assert _same(value, values.loads(text))


def test_a_row_is_refused_past_64_levels_whatever_else_it_holds():
    # Counting brackets spares the walk over a shallow row; a bracket inside a string counts too,
    # so a row that only seems deep is walked and read.
    def nested(depth: int) -> str:
        return '{"a": ' * depth + "1" + "}" * depth

    assert parse_json(nested(64))[1] is None
    assert parse_json(nested(65))[1] == "invalid JSON (nested deeper than 64 levels)"
    shallow = json.dumps({"text": "{[" * 100, "list": [[1], [2]]})
    assert parse_json(shallow) == (json.loads(shallow), None)


@EXAMPLES
@given(st.integers(min_value=1, max_value=200), st.integers(min_value=0, max_value=80))
def test_the_depth_verdict_does_not_depend_on_the_brackets_in_strings(depth, decoys):
    text = json.dumps({"decoy": "[" * decoys, "v": json.loads("[" * depth + "]" * depth)})
    value, problem = parse_json(text)
    assert (problem is not None) == (depth + 1 > 64)
