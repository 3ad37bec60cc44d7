"""``assay runs list|show`` and ``assay results RUN --format jsonl|csv``."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from typing import IO, Any

import click
from rich.table import Table

from assay.cli.common import dumps, open_store, out
from assay.cli.summary import print_summary
from assay.results import RunSummary


@click.group("runs")
def runs_group() -> None:
    """Look at stored runs."""


@runs_group.command("list")
@click.option("--limit", default=20, show_default=True)
@click.option("--status", type=click.Choice(["queued", "in_progress", "completed", "failed", "canceled"]))
def list_runs(limit: int, status: str | None) -> None:
    """The most recent runs."""
    table = Table("run id", "name", "status", "items", "passed", "failed", "errored")
    for run in open_store().list_runs(limit=limit, status=status):
        counts = (run["summary"] or {}).get("result_counts", {})
        table.add_row(
            run["id"], run["name"] or "", run["status"], str(counts.get("total", "")),
            str(counts.get("passed", "")), str(counts.get("failed", "")), str(counts.get("errored", "")),
        )  # fmt: skip
    out.print(table)


@runs_group.command("show")
@click.argument("run_id")
def show_run(run_id: str) -> None:
    """A run's summary table and where its results are."""
    store = open_store()
    run = store.get_run(run_id)
    summary = RunSummary.model_validate(run["summary"] or {})
    print_summary(run, summary, store.url)
    if run["error"]:
        out.print(f"[red]error[/]: {run['error'].get('message')}")


@click.command("results")
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl", show_default=True)
@click.option("--status", type=click.Choice(["pass", "fail", "error", "skipped"]), help="Only items with this status.")
@click.option(
    "--output", "-o", type=click.File("w", encoding="utf-8"), default="-", help="File to write (default stdout)."
)
def results(run_id: str, fmt: str, status: str | None, output: IO[str]) -> None:
    """Write a run's output items as JSONL (full) or CSV (one column per criterion field)."""
    store = open_store()
    store.get_run(run_id)
    items = store.iter_output_items(run_id, status=status)
    if fmt == "jsonl":
        for row in items:
            output.write(dumps(_public(row)) + "\n")
        return
    _write_csv(items, output)


def _public(row: dict[str, Any]) -> dict[str, Any]:
    return {key: row[key] for key in ("datasource_item_id", "status", "datasource_item", "sample", "results")}


def _write_csv(items: Iterator[dict[str, Any]], output: IO[str]) -> None:
    writer: Any = None
    for row in items:
        flat: dict[str, Any] = {"datasource_item_id": row["datasource_item_id"], "status": row["status"]}
        for key, value in row["datasource_item"].items():
            flat[f"item.{key}"] = value if isinstance(value, str) else dumps(value)
        for result in row["results"]:
            for key in ("score", "passed", "label", "status", "reason"):
                flat[f"{result['name']}.{key}"] = result.get(key)
        if writer is None:
            writer = csv.DictWriter(output, fieldnames=list(flat), extrasaction="ignore")
            writer.writeheader()
        writer.writerow(flat)
    if writer is None and output is sys.stdout:
        out.print("[dim]no output items[/]")
