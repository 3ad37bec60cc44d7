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
    from assay.evaluators.catalog import Catalog
    from assay.store import Store

DEFAULT_PROJECT = "default"
"""``assay.store.DEFAULT_PROJECT``, repeated so commands can name it without importing the store."""

out = Console(highlight=False)

CACHE_OPTION = click.option(
    "--cache", "cache_mode", type=click.Choice(["use", "replay", "off", "refresh"]), default="use", show_default=True,
    help="Model-call cache for runs (a run's metadata 'assay.cache' chooses its own).",
)


def open_store() -> Store:
    from assay.store import Store

    return Store()


def catalog(store: Store | None = None, project: str = DEFAULT_PROJECT) -> Catalog:
    """Built-ins, plugins and the evaluators ``project`` registered in the store."""
    from assay.evaluators.catalog import load_catalog

    return load_catalog(store or open_store(), project)


def counted(count: int, one: str, many: str | None = None) -> str:
    """``1 item``, ``2 items``; ``1 criterion``, ``3 criteria``."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
