"""``assay``: the root group and how user errors are shown (a message and a hint, no traceback)."""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.console import Console

from assay.errors import StoreError, UserError

console = Console(stderr=True, highlight=False)


class AssayGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (UserError, StoreError) as exc:
            console.print("[bold red]error:[/] ", end="", markup=True)
            console.print(exc.message, markup=False, soft_wrap=True)
            if exc.hint:
                console.print("[dim]hint:[/] ", end="", markup=True)
                console.print(exc.hint, markup=False, soft_wrap=True)
            sys.exit(2 if isinstance(exc, UserError) else 1)


@click.group(cls=AssayGroup)
@click.version_option(package_name="assay")
def cli() -> None:
    """Evaluate LLM models and agents: datasets, evaluators, runs and results."""


def main() -> None:
    from assay.cli import dataset, evaluators, generate, run, runs, serve, simulate, traces  # noqa: F401 - registers the commands

    cli()
