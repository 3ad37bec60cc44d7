"""JSON read by orjson (several times faster than the standard library) wherever it reads exactly
what the standard library would: orjson makes a float of an integer past 64 bits and refuses
NaN, Infinity and lone surrogates, which ``json`` reads."""

from __future__ import annotations

import json
from typing import Any

import orjson

_TO_ZERO = str.maketrans("123456789", "000000000")
_TO_ZERO_BYTES = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = "0" * 19
"""19 digits: an integer orjson may not hold in 64 bits (a negative one past -2**63)."""
_LONG_RUN_BYTES = _LONG_RUN.encode("ascii")


def has_long_number(text: str | bytes) -> bool:
    # Every digit made 0, then one substring search: a regular expression for a digit run costs
    # more than orjson's whole reading. Bytes translate fastest; ASCII text is its bytes.
    if isinstance(text, str) and text.isascii():
        text = text.encode("ascii")
    if isinstance(text, bytes):
        return text.translate(_TO_ZERO_BYTES).find(_LONG_RUN_BYTES) != -1  # ``in`` raises inside first
    return _LONG_RUN in text.translate(_TO_ZERO)


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``, through orjson when that gives the same value. A text with 19 digits
    in a row (inside a string too: the check stays cheap) takes the standard library's path, as
    does anything orjson refuses, so errors are the standard library's, with their positions."""
    if not has_long_number(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def plain_object(text: str, max_brackets: int) -> dict[str, Any] | None:
    """An ASCII line's JSON object in one step, when nothing about it needs a closer look: no run of
    19 digits, no more brackets than ``max_brackets`` (so no deeper nesting), valid JSON, an
    object. None otherwise, and the caller takes its general path (a dataset's hot path: every line
    of every run is read here)."""
    if not text.isascii():
        return None
    raw = text.encode("ascii")
    if has_long_number(raw) or raw.count(b"{") + raw.count(b"[") > max_brackets:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if type(value) is dict else None
