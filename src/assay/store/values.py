"""Values the databases cannot hold as they are, handled at the store's edge, alike on SQLite and
PostgreSQL.

- **JSON columns** keep everything, losslessly: a NaN or infinite float, a string holding NUL
  (PostgreSQL's ``jsonb`` refuses ``\\u0000``) or a lone surrogate (not UTF-8), and a dict key
  holding either, are written as small tagged objects (``{"$assay": "float", "v": "NaN"}``) and
  read back as the original Python value. Values without them take orjson's path (a JSON column
  is written for every output item, so encoding is on a run's hot path); the rest, the standard
  library's.
- **Text columns** (ids, names, versions, purposes, projects) refuse a NUL, a lone surrogate or
  more characters than the column holds with a ``StoreValueError`` naming the field, which the API
  answers with 400; derived index columns (``clip=True``) are cleaned and clipped instead.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson
import sqlalchemy as sa

from assay import jsonfast
from assay.errors import UserError

TAG = "$assay"
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
"""What no text column can hold: NUL (PostgreSQL refuses it) and lone surrogates (not UTF-8)."""


class StoreValueError(UserError):
    code = "invalid_value"


def _bad_string(text: str) -> bool:
    return UNSTORABLE.search(text) is not None


def _tagged_string(text: str) -> dict[str, str]:
    # Python's escapes are plain ASCII and give back every code point as it was (JSON's \u escapes
    # would fuse two lone surrogates into one character).
    return {TAG: "str", "v": text.encode("unicode_escape").decode("ascii")}


def _encode(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return {TAG: "float", "v": repr(value)}
    if isinstance(value, str):
        return _tagged_string(value) if _bad_string(value) else value
    if isinstance(value, dict):
        if any(isinstance(k, str) and _bad_string(k) for k in value):
            return {TAG: "dict", "v": [[_encode(str(k)), _encode(v)] for k, v in value.items()]}
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    return value


def exact_orjson(value: Any, *, finite: bool = False) -> bytes | None:
    """orjson's encoding when it says what the standard library's would, else None. orjson refuses
    lone surrogates, keys that are not strings and integers past 64 bits, and writes NaN and
    infinities as null: a text holding ``null`` must read back equal to the value (compared in C,
    cheaper than a walk), unless the caller knows the value holds neither (``finite``: orjson read
    it; the search for ``null`` reads English text slowly, on every item)."""
    try:
        encoded = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return None
    # ``find``, not ``in``: ``bytes in bytes`` first tries the left side as a byte's number, raising
    # (and clearing) a TypeError each time, which costs more than the search (a hot path: every item).
    if not finite and encoded.find(b"null") != -1 and orjson.loads(encoded) != value:
        return None
    return encoded


def _holds_nul(encoded: bytes) -> bool:
    """Whether JSON text holds ``\\u0000``, looked for only where it holds a backslash at all (one
    ``memchr``: the six-byte search reads English text several times slower, on every item)."""
    return encoded.find(b"\\") != -1 and encoded.find(b"\\u0000") != -1


def _fast_dumps(value: Any, finite: bool) -> str | None:
    """``exact_orjson`` for a JSON column, which must not hold ``\\u0000`` either (PostgreSQL)."""
    encoded = exact_orjson(value, finite=finite)
    return None if encoded is None or _holds_nul(encoded) else encoded.decode()


def dumps_counted(value: Any, nulls: int) -> str | None:
    """What ``dumps`` writes, through orjson, for a value the caller knows holds ``nulls`` Nones: a
    text with no more ``null`` than that has no NaN or infinity written as one (a string that holds
    "null" makes it more too). None where that cannot be told or orjson refuses the value; the caller
    then takes ``dumps``."""
    try:
        encoded = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return None
    if encoded.count(b"null") != nulls or _holds_nul(encoded):
        return None
    return encoded.decode()


def dumps(value: Any, *, finite: bool = False) -> str:
    """The JSON written to a JSON column; ``finite``: the value holds no NaN or infinite float."""
    if value is None:  # most samples of a run without a target
        return "null"
    text = _fast_dumps(value, finite)
    if text is not None:
        return text
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except ValueError:
        text = None
    if text is None or "\\u0000" in text or UNSTORABLE.search(text):
        text = json.dumps(_encode(value), allow_nan=False, ensure_ascii=False)
    return text


def _decode(value: dict[str, Any]) -> Any:
    kind = value.get(TAG)
    if kind == "float" and len(value) == 2:
        return float(value["v"])
    if kind == "str" and len(value) == 2:
        return value["v"].encode("ascii").decode("unicode_escape")
    if kind == "dict" and len(value) == 2:
        return {key: item for key, item in value["v"]}
    return value


def loads(text: str | bytes) -> Any:
    """A JSON column's value, with what ``dumps`` tagged restored."""
    if isinstance(text, bytes):
        text = text.decode()
    if f'"{TAG}"' not in text:
        return jsonfast.loads(text)
    return json.loads(text, object_hook=_decode)


class StoreText(sa.types.TypeDecorator[str]):
    """A text column that refuses (or, with ``clip``, cleans) what the database cannot hold."""

    impl = sa.Text
    cache_ok = True

    def __init__(self, length: int | None = None, *, clip: bool = False) -> None:
        super().__init__()
        self.impl = sa.String(length) if length else sa.Text()  # type: ignore[assignment]
        self.length = length
        self.clip = clip
        self.field = "value"
        """The column's name, set once the tables are built, for the error message."""

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if not isinstance(value, str):
            return value
        if self.clip:
            return self.clipped(value)
        if _bad_string(value):
            raise StoreValueError(f"'{self.field}' holds a NUL character or a lone surrogate, which cannot be stored")
        if self.length and len(value) > self.length:
            raise StoreValueError(f"'{self.field}' is {len(value)} characters long; it holds at most {self.length}")
        return value

    def clipped(self, value: str) -> str:
        """What a ``clip`` column keeps of ``value``: what it cannot hold replaced, cut to its length."""
        cleaned = UNSTORABLE.sub("\ufffd", value)
        return cleaned[: self.length] if self.length else cleaned


def name_text_columns(metadata: sa.MetaData) -> None:
    """Tell each text column its own name, for its errors."""
    for table in metadata.tables.values():
        for column in table.c:
            if isinstance(column.type, StoreText):
                column.type.field = column.name


def store_value_error(exc: BaseException) -> StoreValueError | None:
    """The ``StoreValueError`` behind a SQLAlchemy error, if that is what it is."""
    orig = getattr(exc, "orig", None)
    return orig if isinstance(orig, StoreValueError) else None
