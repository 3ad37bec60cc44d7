"""The store: one object over every table, on SQLite (default) or PostgreSQL."""

from __future__ import annotations

from assay.store.assets import AssetsStore
from assay.store.blobs import BlobStore
from assay.store.captured import CapturedStore
from assay.store.traces import TracesStore


class Store(BlobStore, AssetsStore, CapturedStore, TracesStore):
    """Evals, runs, output items, files (and the blob containers uploads arrive through), datasets,
    custom evaluators, the model-call cache, captured responses and trace spans."""
