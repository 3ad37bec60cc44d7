"""Helpers the command files share: the store and the catalog, opened once per command."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

from assay.evaluators.catalog import Catalog, load_catalog
from assay.store import DEFAULT_PROJECT, Store

out = Console(highlight=False)


def open_store() -> Store:
    return Store()


def catalog(store: Store | None = None, project: str = DEFAULT_PROJECT) -> Catalog:
    """Built-ins, plugins and the evaluators ``project`` registered in the store."""
    return load_catalog(store or open_store(), project)


def counted(count: int, one: str, many: str | None = None) -> str:
    """``1 item``, ``2 items``; ``1 criterion``, ``3 criteria``."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
