"""Read dataset rows from JSONL (streamed), CSV and inline ``file_content``.

Every reader yields ``Row`` objects in order. A bad line is a ``Row`` with an ``issue`` rather
than an exception, so a caller can list every problem in one pass. Memory stays flat: nothing
holds more than one line at a time.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from assay import jsonfast
from assay.errors import ConfigError, DataIssue


@dataclass(slots=True)
class Row:
    """One dataset line: its item (and sample, if the line carried one) or what is wrong with it."""

    index: int
    """0-based position among the data rows: the output item's ``datasource_item_id``."""
    line: int
    """1-based line number in the source, for error messages."""
    item: dict[str, Any] | None = None
    sample: dict[str, Any] | None = None
    issue: DataIssue | None = None
    source: str | None = None
    """The file the row came from, when a dataset is a folder of files."""
    trial: int | None = None
    """Which of the target's trials this row is, in a run with target repeats (``assay.run.trials``)."""
    finite: bool = False
    """Read by orjson, which reads no NaN or infinity: a null in its item's or sample's JSON is a None
    (``assay.store.values.dumps``)."""


def unwrap(value: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """OpenAI's ``{"item": {...}, "sample": {...}}`` lines are unwrapped; flat rows are the item."""
    if "item" in value and isinstance(value["item"], dict) and set(value) <= {"item", "sample"}:
        sample = value.get("sample")
        return value["item"], sample if isinstance(sample, dict) else None
    return value, None


MAX_DEPTH = 64
"""Deepest nesting of objects and arrays a row may have (deeper JSON is a bomb, not data)."""
MAX_CSV_FIELD = 16 * 1024 * 1024
"""Largest CSV cell (Python's default, 128 kB, is smaller than many RAG contexts)."""


def depth_problem(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """Why ``value`` is nested too deeply, or None; iterative, so it cannot itself overflow."""
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict | list):
            if depth > limit:
                return f"nested deeper than {limit} levels"
            children = current.values() if isinstance(current, dict) else current
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return None


def parse_json(text: str | bytes) -> tuple[Any, str | None]:
    """A JSON value and None, or None and what is wrong (bad syntax, too deep, a number too long)."""
    try:
        value = jsonfast.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg}, column {exc.colno})"
    except RecursionError:
        return None, f"invalid JSON (nested deeper than {MAX_DEPTH} levels)"
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        return None, f"invalid JSON ({exc})"
    if _brackets(text) <= MAX_DEPTH:  # no deeper than it has brackets: the walk is not needed
        return value, None
    too_deep = depth_problem(value)
    return value, None if too_deep is None else f"invalid JSON ({too_deep})"


def _brackets(text: str | bytes) -> int:
    if isinstance(text, str):
        return text.count("{") + text.count("[")
    return text.count(b"{") + text.count(b"[")


def not_utf8(lines: Iterable[bytes], source: str) -> ConfigError | None:
    """The error naming the first line that is not UTF-8 (text decoders read in blocks, so the
    failure they raise cannot say which line); None when every line decodes."""
    for line_no, raw in enumerate(lines, 1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return ConfigError(
                f"{source}:{line_no}: not UTF-8 text ({exc.reason} at column {exc.start + 1})",
                hint="save the file as UTF-8",
            )
    return None


def _utf8_checked(rows: Iterator[Row], path: Path, source: str) -> Iterator[Row]:
    try:
        yield from rows
    except ConfigError as exc:
        with path.open("rb") as handle:
            precise = not_utf8(handle, source) if "not UTF-8" in exc.message else None
        raise (precise or exc) from None


def read_jsonl(path: Path, *, name: str | None = None) -> Iterator[Row]:
    # utf-8-sig: a byte-order mark at the start (some Windows editors write one) is not data.
    with path.open("r", encoding="utf-8-sig", errors="strict", newline="") as handle:
        yield from _utf8_checked(jsonl_rows(handle, name or path.name), path, name or path.name)


BYTE_ORDER_MARK = b"\xef\xbb\xbf"
_PAST_64_BITS = float(2**63)
"""orjson reads an integer past 64 bits as a float: a float this large may have been one."""


def jsonl_rows_at_once(data: bytes, source: str) -> list[Row] | None:
    """A whole JSONL file's rows from its bytes, each line given to orjson as it is: what
    ``jsonl_rows`` reads, in less than half its time. None when the file is not UTF-8 (the general
    reader names the line). A line orjson refuses, or whose reading needs a closer look (nested
    deeper than ``MAX_DEPTH``, or holding a number orjson may not read as the standard library
    does), is read the general way.

    Lines end as text files' do (``\\n``, ``\\r\\n`` or ``\\r``: ``bytes.splitlines`` splits on
    exactly these), so line numbers agree with ``jsonl_rows``."""
    data = data.removeprefix(BYTE_ORDER_MARK)
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    rows: list[Row] = []
    keep, loads = rows.append, orjson.loads  # the loop's names, looked up once
    index = 0
    for line_no, raw in enumerate(_lines(data), 1):
        try:
            value = loads(raw)
        except orjson.JSONDecodeError:
            value = None
        if type(value) is dict and _read_exactly(value):
            keep(
                Row(index, line_no, *unwrap(value), finite=True)
                if "item" in value
                else Row(index, line_no, value, finite=True)
            )
            index += 1
            continue
        text = raw.decode("utf-8")
        if not text or text.isspace():
            continue
        keep(_parse_json_line(text, source, line_no, index))
        index += 1
    return rows


def _lines(data: bytes) -> list[bytes]:
    """``data.splitlines()``: split at each ``\\n``, faster, when the file has no ``\\r`` (most
    have none)."""
    if data.find(b"\r") != -1:
        return data.splitlines()
    lines = data.split(b"\n")
    if lines[-1] == b"":  # the newline that ends the last line starts none
        lines.pop()
    return lines


def _read_exactly(row: dict[str, Any]) -> bool:
    """Whether orjson's reading of a row is the standard library's and nested no deeper than
    ``MAX_DEPTH``: no float from what may have been an integer past 64 bits. One walk over the
    values, cheaper than searching the line's text for long digit runs and counting its brackets
    (a dataset's hot path: every row of every run)."""
    pending: list[tuple[Iterable[Any], int]] = []
    children: Iterable[Any] = row.values()
    depth = 1
    while True:
        for child in children:
            kind = type(child)
            if kind is str:  # most values
                continue
            if kind is dict:
                pending.append((child.values(), depth + 1))
            elif kind is list:
                pending.append((child, depth + 1))
            elif kind is float and abs(child) >= _PAST_64_BITS:
                return False
        if not pending:
            return True
        children, depth = pending.pop()
        if depth > MAX_DEPTH:
            return False


def jsonl_rows(lines: Iterable[str], source: str) -> Iterator[Row]:
    """JSONL rows from any stream of text lines (a file, or an uploaded file's bytes)."""
    index = 0
    try:
        for line_no, text in enumerate(lines, 1):
            if not text or text.isspace():
                continue
            yield _parse_json_line(text, source, line_no, index)
            index += 1
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not UTF-8 text ({exc.reason})", hint="save the file as UTF-8") from None


def _parse_json_line(text: str, source: str, line_no: int, index: int) -> Row:
    plain = jsonfast.plain_object(text, MAX_DEPTH)
    if plain is not None:
        item, sample = unwrap(plain)
        return Row(index, line_no, item, sample)
    value, problem = parse_json(text)
    if problem is not None:
        return Row(index, line_no, issue=DataIssue(source, line_no, problem))
    if not isinstance(value, dict):
        kind = "array" if isinstance(value, list) else type(value).__name__
        return Row(index, line_no, issue=DataIssue(source, line_no, f"expected a JSON object, got {kind}"))
    item, sample = unwrap(value)
    return Row(index, line_no, item, sample)


def read_csv(path: Path, *, name: str | None = None) -> Iterator[Row]:
    with path.open("r", encoding="utf-8-sig", newline="") as handle:
        yield from _utf8_checked(csv_rows(handle, name or path.name), path, name or path.name)


def csv_rows(lines: Iterable[str], source: str) -> Iterator[Row]:
    """CSV rows (header first) from any stream of text lines."""
    reader = csv.reader(lines)
    try:
        yield from _csv_rows(reader, source)
    except csv.Error as exc:
        hint = f"cells hold up to {MAX_CSV_FIELD // (1024 * 1024)} MB; quote cells that hold commas or newlines"
        raise ConfigError(f"{source}:{reader.line_num}: not readable as CSV ({exc})", hint=hint) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not UTF-8 text ({exc.reason})", hint="save the file as UTF-8") from None


def _csv_rows(reader: Any, source: str) -> Iterator[Row]:
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CSV_FIELD))
    header = next(reader, None)
    if not header or not any(column.strip() for column in header):
        raise ConfigError(
            f"{source}:1: a CSV dataset needs a header row", hint="add a first line such as query,response"
        )
    columns = [column.strip() for column in header]
    duplicated = sorted({c for c in columns if columns.count(c) > 1})
    if duplicated:
        raise ConfigError(f"{source}:1: column {duplicated[0]!r} appears twice in the header")
    index = 0
    for cells in reader:
        line_no = reader.line_num
        if not cells or not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(columns):
            message = f"has {len(cells)} cells but the header has {len(columns)} columns"
            yield Row(index, line_no, issue=DataIssue(source, line_no, message))
        else:
            yield Row(index, line_no, dict(zip(columns, cells, strict=True)))
        index += 1


def read_inline(content: Iterable[Any], *, name: str = "file_content") -> Iterator[Row]:
    """Inline ``file_content``: a list of ``{item, sample?}`` objects (or flat rows)."""
    for index, value in enumerate(content):
        if not isinstance(value, dict):
            issue = DataIssue(name, index + 1, f"expected an object, got {type(value).__name__}")
            yield Row(index, index + 1, issue=issue)
            continue
        item, sample = unwrap(value)
        yield Row(index, index + 1, item, sample)


def read_path(path: Path) -> Iterator[Row]:
    """Pick the reader by suffix: ``.csv`` is CSV, anything else is JSONL; a folder (as azd writes
    ``local_uri: datasets/<name>``) is its JSONL and CSV files in name order."""
    if path.is_dir():
        return read_folder(path)
    if not path.is_file():
        raise ConfigError(
            f"dataset not found: {path} (looked for {path.resolve()})",
            hint="check the path; in eval.yaml relative paths start at its folder, in Python at the current folder",
        )
    if path.suffix.lower() == ".csv":
        return read_csv(path)
    return read_jsonl(path)


def read_folder(path: Path) -> Iterator[Row]:
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in (".jsonl", ".csv"))
    if not files:
        raise ConfigError(
            f"dataset not found: {path} holds no .jsonl or .csv file",
            hint="put the dataset's JSONL in that folder, or point local_uri at the file",
        )
    offset = 0
    for file in files:
        count = 0
        for row in read_path(file):
            count += 1
            yield dataclasses.replace(row, index=offset + row.index, source=file.name)
        offset += count
