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
