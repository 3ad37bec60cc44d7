"""``assay evaluators``: the catalog, as a list or one entry in full."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from assay.cli.common import catalog, dumps, open_store, out
from assay.evaluators.custom import Kind, kind_for, spec_from_file


@click.group("evaluators")
def evaluators_group() -> None:
    """Browse the evaluator catalog."""


@evaluators_group.command("list")
@click.option("--category", help="Only this category (nlp, agents, rag, graders, ...).")
def list_evaluators(category: str | None) -> None:
    """Every evaluator with its inputs and primary metric."""
    table = Table("name", "version", "category", "inputs", "metric", "threshold", "levels")
    for spec in catalog().specs():
        if category and spec.category != category:
            continue
        metric = spec.primary
        threshold = (
            "–"
            if metric.threshold is None
            else f"{'≥' if metric.desirable_direction != 'decrease' else '≤'} {metric.threshold:g}"
        )
        table.add_row(
            spec.name, spec.version, spec.category, ", ".join(spec.required_inputs), metric.name, threshold,
            ", ".join(spec.supported_evaluation_levels),
        )  # fmt: skip
    out.print(table)


@evaluators_group.command("add")
@click.argument("name")
@click.argument("file", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--kind", type=click.Choice(["rubric", "prompt", "code"]), help="Default: from the file's suffix.")
def add(name: str, file: Path, kind: Kind | None) -> None:
    """Register FILE as custom evaluator NAME; a changed definition becomes a new version."""
    spec = spec_from_file(file, name, "new", kind)  # checked before anything is stored
    store = open_store()
    record, created = store.add_evaluator(
        name=name, kind=kind or kind_for(file), content=file.read_text(encoding="utf-8")
    )
    verb = "registered" if created else "unchanged:"
    out.print(f"{verb} {record['name']}@{record['version']} ({record['kind']}; inputs: {', '.join(spec.inputs)})")


@evaluators_group.command("show")
@click.argument("name")
def show(name: str) -> None:
    """One evaluator's full catalog entry (Foundry's EvaluatorVersion shape) as JSON."""
    out.print_json(dumps(catalog().get(name).describe()))
