"""A dataset the engine can read more than once: a file path or inline rows."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.dataset.readers import Row, csv_rows, jsonl_rows, jsonl_rows_at_once, not_utf8, read_inline, read_path
from assay.dataset.schema import ItemSchema
from assay.errors import ConfigError, DataError, DataIssue

MAX_ISSUES_KEPT = 1000
PARSED_ONCE_BYTES = 8 * 1024 * 1024
"""A dataset file at most this large is parsed once and its rows kept: a run reads its dataset at
least twice (the check before anything is stored, then the run), and most datasets are small."""


@dataclass(frozen=True)
class Dataset:
    """Rows that can be streamed again and again (a validation pass, then the run, then a resume)."""

    name: str
    open_rows: Callable[[], Iterator[Row]]
    path: Path | None = None

    @classmethod
    def from_path(cls, path: str | Path) -> Dataset:
        path = Path(path)
        return cls(name=str(path), open_rows=_parsed_once(path), path=path)

    @classmethod
    def from_bytes(cls, data: bytes, name: str) -> Dataset:
        """An uploaded file: CSV when its name ends in .csv, else JSONL. A small JSONL file read at
        once is kept, as ``from_path`` keeps one (the check before a run and the run share it)."""
        kept: list[Row] | None = None

        def rows() -> Iterator[Row]:
            nonlocal kept
            if kept is not None:
                return iter(kept)
            at_once = None if name.lower().endswith(".csv") else jsonl_rows_at_once(data, name)
            if at_once is not None:
                if len(data) <= PARSED_ONCE_BYTES:
                    kept = at_once
                return iter(at_once)
            try:
                text = io.StringIO(data.decode("utf-8-sig"), newline="")
            except UnicodeDecodeError:
                raise not_utf8(data.splitlines(), name) or ConfigError(f"{name}: not UTF-8 text") from None
            return csv_rows(text, name) if name.lower().endswith(".csv") else jsonl_rows(text, name)

        return cls(name=name, open_rows=rows)

    @classmethod
    def from_content(cls, content: list[Any], name: str = "file_content") -> Dataset:
        return cls(name=name, open_rows=lambda: read_inline(content, name=name))

    def rows(self) -> Iterator[Row]:
        return self.open_rows()

    def head(self, count: int) -> Dataset:
        """The first ``count`` rows only (``assay run --limit``: a quick look before the whole run)."""
        return Dataset(name=self.name, open_rows=lambda: itertools.islice(self.open_rows(), count), path=self.path)

    def items(self) -> Iterator[dict[str, Any]]:
        """Just the items; raises ``DataError`` at the first bad line."""
        for row in self.rows():
            if row.issue is not None:
                raise DataError([row.issue])
            assert row.item is not None
            yield row.item


@dataclass
class ScanReport:
    """What one validation pass over a dataset found."""

    rows: int = 0
    issues: list[DataIssue] = field(default_factory=list)
    issue_count: int = 0
    fields_in_every_item: set[str] | None = None
    fields_in_some_item: set[str] = field(default_factory=set)
    rows_with_sample: int = 0
    """Rows that carried their sample (OpenAI's ``{"item": ..., "sample": ...}`` lines)."""
    schema_issue_count: int = 0
    """Of ``issue_count``, the items that break the schema (the rest are rows that cannot be read)."""
    list_fields: frozenset[str] = frozenset()
    """Fields that hold a list (an agent's messages), as the first item of each set of fields has them."""

    @property
    def ok(self) -> bool:
        return self.issue_count == 0

    def add(self, issue: DataIssue) -> None:
        self.issue_count += 1
        if len(self.issues) < MAX_ISSUES_KEPT:
            self.issues.append(issue)

    def raise_if_invalid(self) -> None:
        if not self.ok:
            raise DataError(self.issues, total_issues=self.issue_count)


def _parsed_once(path: Path) -> Callable[[], Iterator[Row]]:
    """Read ``path``'s rows; a small file's are kept once a reading has gone through all of them."""
    kept: list[Row] | None = None

    def keeping(rows: Iterator[Row]) -> Iterator[Row]:
        nonlocal kept
        seen = []
        for row in rows:
            seen.append(row)
            yield row
        kept = seen

    def open_rows() -> Iterator[Row]:
        nonlocal kept
        if kept is not None:
            return iter(kept)
        rows = read_path(path)  # raises at once when the file is not there
        try:
            small = path.is_file() and path.stat().st_size <= PARSED_ONCE_BYTES
        except OSError:
            small = False
        if small and path.suffix.lower() != ".csv":
            kept = jsonl_rows_at_once(path.read_bytes(), path.name)
            if kept is not None:
                return iter(kept)
        return keeping(rows) if small else rows

    return open_rows


def scan(dataset: Dataset, schema: ItemSchema | None = None) -> ScanReport:
    """Read every row once: count them, check each against the schema, note the fields seen."""
    report = ScanReport()
    rows = with_sample = 0
    fields: tuple[str, ...] | None = None  # the last item's, to skip the set arithmetic for rows alike
    problems = schema.problems if schema is not None and schema.checks_items else None
    for row in dataset.rows():
        rows += 1
        if row.issue is not None:
            report.add(row.issue)
            continue
        item = row.item
        assert item is not None
        with_sample += row.sample is not None
        if fields is None or len(item) != len(fields) or tuple(item) != fields:
            fields = tuple(item)
            keys = set(fields)
            report.fields_in_some_item |= keys
            report.list_fields |= {key for key, value in item.items() if isinstance(value, list)}
            report.fields_in_every_item = (
                keys if report.fields_in_every_item is None else report.fields_in_every_item & keys
            )
        if problems is not None:
            for field_name, message in problems(item):
                report.add(DataIssue(source_name(dataset, row), row.line, message, field_name))
                report.schema_issue_count += 1
    report.rows, report.rows_with_sample = rows, with_sample
    return report


def source_name(dataset: Dataset, row: Row) -> str:
    """What an error about ``row`` names: its own file (in a folder dataset), else the dataset's."""
    return row.source or (dataset.path.name if dataset.path is not None else dataset.name)
