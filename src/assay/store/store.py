"""The store: one object over every table, on SQLite (default) or PostgreSQL."""

from __future__ import annotations

from assay.store.assets import AssetsStore
from assay.store.captured import CapturedStore
from assay.store.serving import ServingStore
from assay.store.traces import TracesStore


class Store(ServingStore, AssetsStore, CapturedStore, TracesStore):
    """Evals, runs, output items, files, datasets, custom evaluators, the model-call cache,
    captured responses and trace spans."""
