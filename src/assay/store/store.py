"""The store: one object over every table, on SQLite (default) or PostgreSQL."""

from __future__ import annotations

from assay.store.assets import AssetsStore
from assay.store.serving import ServingStore


class Store(ServingStore, AssetsStore):
    """Evals, runs, output items, files, datasets, custom evaluators and the model-call cache."""
