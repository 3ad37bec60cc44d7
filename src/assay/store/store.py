"""The store: one object over every table, on SQLite (default) or PostgreSQL."""

from __future__ import annotations

from assay.store.assets import AssetsStore
from assay.store.captured import CapturedStore
from assay.store.serving import ServingStore


class Store(ServingStore, AssetsStore, CapturedStore):
    """Evals, runs, output items, files, datasets, custom evaluators, the model-call cache and
    captured responses."""
