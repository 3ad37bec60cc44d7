"""``assay evaluators``: the catalog, as a list or one entry in full."""

from __future__ import annotations

import click
from rich.table import Table

from assay.cli.common import catalog, dumps, out
from assay.cli.main import cli


@cli.group("evaluators")
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


@evaluators_group.command("show")
@click.argument("name")
def show(name: str) -> None:
    """One evaluator's full catalog entry (Foundry's EvaluatorVersion shape) as JSON."""
    out.print_json(dumps(catalog().get(name).describe()))
