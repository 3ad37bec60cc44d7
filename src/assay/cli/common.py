"""Helpers the command files share: the store and the catalog, opened once per command.

Command modules import only click and rich at the top; everything heavier (the store, the SDKs,
the engine) is imported inside the command that needs it, so ``assay X --help`` starts fast.
``tests/cli/test_startup.py`` holds every command to that.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

if TYPE_CHECKING:
    from rich.table import Table

    from assay.evaluators.catalog import Catalog
    from assay.run.engine import Executor
    from assay.store import Store

DEFAULT_PROJECT = "default"
"""``assay.store.DEFAULT_PROJECT``, repeated so commands can name it without importing the store."""

out = Console(highlight=False)

CACHE_OPTION = click.option(
    "--cache",
    "cache_mode",
    type=click.Choice(["use", "replay", "off", "refresh"]),
    default="use",
    show_default=True,
    help="Model-call cache for runs (a run's metadata 'assay.cache' chooses its own).",
)


def calibration_options(command: Any) -> Any:
    """``--require-calibrated`` and ``--min-kappa``: a gate that decides only on calibrated judges."""
    options = [
        click.option(
            "--require-calibrated",
            is_flag=True,
            help="Gate only on judges calibrated against human labels (assay judges agreement --save).",
        ),
        click.option(
            "--min-kappa",
            type=click.FloatRange(-1, 1),
            default=0.6,
            show_default=True,
            help="With --require-calibrated.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def executor_options(command: Any) -> Any:
    """``--executor local|ray``, ``--ray-address``, ``--actors``: where a run's items are evaluated."""
    options = [
        click.option(
            "--executor",
            type=click.Choice(["local", "ray"]),
            default="local",
            show_default=True,
            help="ray: spread the items over Ray actors (pip install 'assay[ray]').",
        ),
        click.option(
            "--ray-address", metavar="ADDR", help="The Ray cluster to join (default RAY_ADDRESS, else a local one)."
        ),
        click.option("--actors", type=click.IntRange(1), help="Ray actors (default: one per CPU of the cluster)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def make_executor(
    executor: str, ray_address: str | None, actors: int | None, concurrency: int | None = None
) -> Executor | None:
    """The run option ``executor`` for these flags: None runs the items in this process.
    ``concurrency``: items in flight across all actors (default 64 per actor)."""
    if executor != "ray":
        return None
    from assay.ray import require_ray
    from assay.ray.executor import RayExecutor

    require_ray()  # fail before anything is stored, with the install command
    return RayExecutor(address=ray_address, actors=actors, concurrency=concurrency)


def open_store() -> Store:
    from assay.store import Store

    return Store()


def catalog(store: Store | None = None, project: str = DEFAULT_PROJECT) -> Catalog:
    """Built-ins, plugins and the evaluators ``project`` registered in the store."""
    from assay.evaluators.catalog import load_catalog

    return load_catalog(store or open_store(), project)


def percent(value: float | None) -> str:
    """``83%``, or ``–`` when there is no value."""
    return "–" if value is None else f"{value:.0%}"


def counted(count: int, one: str, many: str | None = None) -> str:
    """``1 item``, ``2 items``; ``1 criterion``, ``3 criteria``."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def print_table(table: Table) -> None:
    """``table`` as a table when its rows fit the terminal whole; narrower (80 columns, a pipe, CI),
    each row as a block of ``column: value`` lines instead, so no cell is cut or folded a letter a line."""
    from rich.measure import Measurement

    if Measurement.get(out, out.options.update_width(100_000), table).maximum <= out.width:
        out.print(table)
        return
    titles = [str(column.header) for column in table.columns]
    rows = list(zip(*(list(column.cells) for column in table.columns), strict=True))
    if table.title:
        out.print(table.title, soft_wrap=True)
    for row in rows:
        out.print(row[0], soft_wrap=True, style="bold")
        for title, cell in zip(titles[1:], row[1:], strict=True):
            out.print(f"  {title}:" if title else " ", cell, soft_wrap=True)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def invoked_as() -> str:
    """``assay`` as the user can type it again: the path they ran (``.venv/bin/assay``) when their
    PATH would not find that same program, else ``assay``. Hints printed for the next step use it."""
    import os
    import shutil
    import sys
    from pathlib import Path

    ran = Path(sys.argv[0])
    if ran.name != "assay":
        return "assay"  # python -m assay, or a test calling the commands in its own process
    on_path = shutil.which("assay")
    if on_path is not None and Path(on_path).resolve() == ran.resolve():
        return "assay"
    shown = os.path.relpath(ran) if not ran.is_absolute() or ran.is_relative_to(Path.cwd()) else str(ran)
    return shown if "/" in shown else f"./{shown}"
