"""The one view of a run in azure-ai-evaluation's format: a table of ``inputs.<column>``,
``outputs.<target key>`` and ``outputs.<alias>.<key>`` rows, its metrics, and the JSON file
``output_path`` gets. ``assay.evaluate()`` and ``assay.azure.evaluate()`` both build it here; they
differ only in the columns each alias's results become (``ResultColumns``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from assay.results.records import OutputItem, Result

NAN = float("nan")
SAMPLE_KEYS_LEFT_OUT = ("input", "error", "latency_ms", "usage", "output_items", "output_tools", "cached")
"""Sample fields that are how the target ran, not what it answered: not columns."""
NOT_AVERAGED = ("_threshold", "_result", "_reason", "_status", "_properties")

ResultColumns = Callable[[Result, OutputItem], tuple[str, Mapping[str, Any]]]
"""A result's alias and its columns under ``outputs.<alias>.``."""


def peer_rows(items: Iterable[OutputItem], columns: ResultColumns) -> list[dict[str, Any]]:
    """One row per output item, then filled into a table as the peer's pandas frame would be."""
    rows = []
    for item in items:
        row: dict[str, Any] = {f"inputs.{key}": value for key, value in item.datasource_item.items()}
        for key, value in (item.sample or {}).items():
            if key not in SAMPLE_KEYS_LEFT_OUT:
                row[f"outputs.{key}"] = value
        for result in item.results:
            alias, values = columns(result, item)
            for key, value in values.items():
                row[f"outputs.{alias}.{key}"] = value
        rows.append(row)
    return _filled(rows)


def generic_columns(result: Result) -> dict[str, Any]:
    """An evaluator's result in assay's own peer-style columns: ``<metric>`` and its verdict."""
    metric = result.metric
    return {
        metric: result.score,
        f"{metric}_result": result.label or ("not_applicable" if result.status == "skipped" else None),
        f"{metric}_passed": result.passed,
        f"{metric}_threshold": result.threshold,
        f"{metric}_reason": result.reason,
        f"{metric}_status": result.status,
        f"{metric}_properties": result.properties or {},
    }


def peer_metrics(rows: list[dict[str, Any]], verdict_aliases: Iterable[str]) -> dict[str, float]:
    """The NaN-skipping mean of each numeric output column and, for each alias in
    ``verdict_aliases``, ``binary_aggregate``: the share of rows it passed."""
    metrics: dict[str, float] = {}
    for column in rows[0] if rows else {}:
        if not column.startswith("outputs.") or column.endswith(NOT_AVERAGED):
            continue
        values = [row[column] for row in rows]
        numbers = [float(v) for v in values if isinstance(v, (int, float))]  # True counts 1
        yes_no = sum(isinstance(v, bool) for v in values)
        if len(numbers) != len(values) or not numbers or 0 < yes_no < len(values):
            continue  # text, or yes/no beside numbers or gaps (a column of objects to pandas): no mean
        kept = [v for v in numbers if not math.isnan(v)]
        if kept and column.count(".") >= 2:
            metrics[column.removeprefix("outputs.")] = sum(kept) / len(kept)
    for alias in verdict_aliases:
        prefix = f"outputs.{alias}."
        verdicts = [v for row in rows for k, v in row.items() if k.startswith(prefix) and k.endswith("_result")]
        if rows:
            metrics[f"{alias}.binary_aggregate"] = round(verdicts.count("pass") / len(rows), 2)
    return metrics


def write_peer_result(result: Mapping[str, Any], output_path: str | Path, *, indent: int = 4) -> Path:
    """``output_path`` as the peer writes it: a folder gets ``evaluation_results.json``."""
    path = Path(output_path)
    path = path / "evaluation_results.json" if path.is_dir() else path
    path.write_text(json.dumps(dict(result), ensure_ascii=False, indent=indent, default=str), encoding="utf-8")
    return path


def _filled(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every row with every column, NaN where a row has none: the peer's rows come from one pandas
    table, where a column with a gap in it has NaN for None too, and whole numbers become floats."""
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    filled = [{column: row.get(column, NAN) for column in columns} for row in rows]
    for column in columns:
        values = [row[column] for row in filled]
        gap = any(isinstance(v, float) and math.isnan(v) for v in values)
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) or v is None for v in values)
        floats = numeric and any(isinstance(v, float) for v in values)  # ints beside floats are floats
        if not gap and not floats:
            continue
        for row in filled:
            if row[column] is None and gap:
                row[column] = NAN
            elif numeric and row[column] is not None:
                row[column] = float(row[column])
    return filled
