"""``assay dataset``: validate a file (every bad line, not only the first), register, list."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from assay.cli.common import dumps, invoked_as, open_store, out
from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.dataset import ItemSchema


@click.group("dataset")
def dataset_group() -> None:
    """Check and register datasets."""


def _load_schema(path: Path | None) -> ItemSchema | None:
    from assay.dataset import ItemSchema

    if path is None:
        return None
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the schema ({exc})", hint="pass a JSON Schema file") from None
    return ItemSchema(schema, where=str(path))


@dataset_group.command("validate")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--schema", type=click.Path(path_type=Path), help="A JSON Schema every item must match.")
def validate(file: Path, schema: Path | None) -> None:
    """List every bad line of FILE; exit 1 if there is any."""
    from assay.dataset import Dataset, scan

    report = scan(Dataset.from_path(file), _load_schema(schema))
    for issue in report.issues:
        out.print(str(issue), markup=False, soft_wrap=True)
    if report.issue_count > len(report.issues):
        out.print(f"... and {report.issue_count - len(report.issues)} more")
    if not report.ok:
        out.print(f"[red]{file}: {report.issue_count} problem(s) in {report.rows} rows[/]")
        sys.exit(1)
    fields = ", ".join(sorted(report.fields_in_some_item)) or "none"
    out.print(f"[green]{file}: {report.rows} rows OK[/] (fields: {fields})")


@dataset_group.command("add")
@click.argument("name")
@click.argument("file", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--version", "version", default="1", show_default=True)
def add(name: str, file: Path, version: str) -> None:
    """Register FILE as dataset NAME at a version, after validating it."""
    from assay.dataset import Dataset, scan

    report = scan(Dataset.from_path(file))
    report.raise_if_invalid()
    record = open_store().register_dataset(name=name, version=version, uri=str(file.resolve()))
    out.print(f"registered {record['name']}@{record['version']} ({report.rows} rows) → {record['uri']}")


@dataset_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the datasets as JSON.")
def list_datasets(as_json: bool) -> None:
    """Registered datasets, by name and version."""
    store = open_store()
    records = store.list_datasets()
    if as_json:
        out.print_json(dumps(records))
        return
    for record in records:
        out.print(f"{record['name']}@{record['version']}  {record['uri']}")
    if not records:
        out.print(f"no datasets registered in {store.url}: {invoked_as()} dataset add NAME FILE")
