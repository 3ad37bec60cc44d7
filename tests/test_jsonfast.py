"""orjson reads JSON only where it reads what the standard library would."""

from __future__ import annotations

import json
import math

import pytest

from assay import jsonfast

TEXTS = [
    '{"a": 1, "b": [1.5, -0.0, 1e5], "c": null, "d": "été"}',
    '{"a": 123456789012345678901234567890}',  # orjson would make a float of it
    '{"a": -9223372036854775809}',  # one past the 64-bit integers' floor
    '{"a": 18446744073709551616}',  # one past the unsigned ceiling
    '{"note": "café", "a": 99999999999999999999}',  # not ASCII: the text is not its bytes
    '{"a": NaN, "b": Infinity}',
    '"\\ud800"',
    '{"a": 1, "a": 2}',
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("as_bytes", [False, True])
def test_reads_what_the_standard_library_reads(text, as_bytes):
    got = jsonfast.loads(text.encode() if as_bytes else text)
    expected = json.loads(text)
    assert repr(got) == repr(expected)  # repr: NaN equals nothing, and an int must stay an int


def test_errors_are_the_standard_librarys():
    with pytest.raises(json.JSONDecodeError) as raised:
        jsonfast.loads('{"a": }')
    assert raised.value.colno == 7
    assert math.isnan(jsonfast.loads("NaN"))


@pytest.mark.parametrize(
    "text",
    [
        '{"n": 12345678901234567890123}',  # a run of 19 digits: orjson would make a float of it
        '{"é": 1}',  # not ASCII
        "[1, 2]",  # not an object
        '{"a": NaN}',  # not JSON orjson reads
        '{"a": ' * 3 + "1" + "}" * 3,  # more brackets than allowed below
    ],
)
def test_a_line_that_needs_a_closer_look_is_left_to_the_general_path(text):
    assert jsonfast.plain_object(text, 2) is None


def test_a_plain_line_is_read_in_one_step():
    assert jsonfast.plain_object('{"q": "x", "n": [1, 2.5, null]}\n', 64) == {"q": "x", "n": [1, 2.5, None]}
