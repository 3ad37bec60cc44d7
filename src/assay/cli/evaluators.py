"""``assay evaluators``: the catalog, as a list or one entry in full."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from assay.cli.common import catalog, dumps, open_store, out

if TYPE_CHECKING:
    from assay.evaluators.custom import Kind


@click.group("evaluators")
def evaluators_group() -> None:
    """Browse the evaluator catalog."""


@evaluators_group.command("list")
@click.option("--category", help="Only this category (nlp, agents, rag, graders, ...).")
@click.option("--wide", is_flag=True, help="Every column (version, evaluation levels), however wide.")
@click.option("--json", "as_json", is_flag=True, help="Print the evaluators as JSON.")
def list_evaluators(category: str | None, wide: bool, as_json: bool) -> None:
    """Every evaluator with its inputs and primary metric."""
    if as_json:
        specs = [s for s in catalog().specs() if not category or s.category == category]
        out.print_json(dumps([_listed(spec) for spec in specs]))
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("name", no_wrap=True)  # names are what a user copies: never cut
    if wide:
        table.add_column("version")
    table.add_column("category", no_wrap=True)
    table.add_column("inputs", overflow="fold", ratio=1)
    table.add_column("threshold", no_wrap=True)
    if wide:
        table.add_column("metric")
        table.add_column("levels")
    shown = 0
    for spec in catalog().specs():
        if category and spec.category != category:
            continue
        metric = spec.primary
        threshold = (
            "–"
            if metric.threshold is None
            else f"{'≥' if metric.desirable_direction != 'decrease' else '≤'} {metric.threshold:g}"
        )
        inputs = ", ".join(spec.required_inputs)
        if wide:
            table.add_row(
                spec.name,
                spec.version,
                spec.category,
                inputs,
                threshold,
                metric.name,
                ", ".join(spec.supported_evaluation_levels),
            )
        else:
            table.add_row(spec.name, spec.category, inputs, threshold)
        shown += 1
    if not shown:
        out.print(f"no evaluators in category {category!r}" if category else "no evaluators")
        return
    out.print(table)
    out.print("[dim]assay evaluators show NAME: one in full; --wide: every column[/]")


def _listed(spec: Any) -> dict[str, Any]:
    metric = spec.primary
    return {
        "name": spec.name,
        "version": spec.version,
        "category": spec.category,
        "inputs": list(spec.required_inputs),
        "metric": metric.name,
        "threshold": metric.threshold,
        "desirable_direction": metric.desirable_direction,
        "evaluation_levels": list(spec.supported_evaluation_levels),
    }


@evaluators_group.command("add")
@click.argument("name")
@click.argument("file", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option(
    "--kind",
    type=click.Choice(["rubric", "prompt", "code", "endpoint"]),
    help="Default: from the file's suffix (an endpoint is a .json file: give --kind endpoint).",
)
def add(name: str, file: Path, kind: Kind | None) -> None:
    """Register FILE as custom evaluator NAME; a changed definition becomes a new version."""
    from assay.evaluators.custom import kind_for, spec_from_file

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
