"""Read dataset rows from JSONL (streamed), CSV and inline ``file_content``.

Every reader yields ``Row`` objects in order. A bad line is a ``Row`` with an ``issue`` rather
than an exception, so a caller can list every problem in one pass. Memory stays flat: nothing
holds more than one line at a time.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def unwrap(value: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """OpenAI's ``{"item": {...}, "sample": {...}}`` lines are unwrapped; flat rows are the item."""
    if "item" in value and isinstance(value["item"], dict) and set(value) <= {"item", "sample"}:
        sample = value.get("sample")
        return value["item"], sample if isinstance(sample, dict) else None
    return value, None


def read_jsonl(path: Path, *, name: str | None = None) -> Iterator[Row]:
    with path.open("r", encoding="utf-8", errors="strict", newline="") as handle:
        yield from jsonl_rows(handle, name or path.name)


def jsonl_rows(lines: Iterable[str], source: str) -> Iterator[Row]:
    """JSONL rows from any stream of text lines (a file, or an uploaded file's bytes)."""
    index = 0
    try:
        for line_no, text in enumerate(lines, 1):
            if not text.strip():
                continue
            yield _parse_json_line(text, source, line_no, index)
            index += 1
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})",
            hint="save the file as UTF-8",
        ) from None


def _parse_json_line(text: str, source: str, line_no: int, index: int) -> Row:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return Row(index, line_no, issue=DataIssue(source, line_no, f"invalid JSON ({exc.msg}, column {exc.colno})"))
    if not isinstance(value, dict):
        kind = "array" if isinstance(value, list) else type(value).__name__
        return Row(index, line_no, issue=DataIssue(source, line_no, f"expected a JSON object, got {kind}"))
    item, sample = unwrap(value)
    return Row(index, line_no, item, sample)


def read_csv(path: Path, *, name: str | None = None) -> Iterator[Row]:
    with path.open("r", encoding="utf-8-sig", newline="") as handle:
        yield from csv_rows(handle, name or path.name)


def csv_rows(lines: Iterable[str], source: str) -> Iterator[Row]:
    """CSV rows (header first) from any stream of text lines."""
    reader = csv.reader(lines)
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
    """Pick the reader by suffix: ``.csv`` is CSV, anything else is JSONL."""
    if not path.is_file():
        raise ConfigError(
            f"dataset not found: {path}", hint="check the path; relative paths start at the eval.yaml's folder"
        )
    if path.suffix.lower() == ".csv":
        return read_csv(path)
    return read_jsonl(path)
