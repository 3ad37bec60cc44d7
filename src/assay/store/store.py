"""The store: one object over every table, on SQLite (default) or PostgreSQL."""

from __future__ import annotations

from assay.store.assets import AssetsStore
from assay.store.runs import RunsStore


class Store(RunsStore, AssetsStore):
    """Evals, runs, output items, files, datasets, custom evaluators and the model-call cache."""
