"""Storage for evals, runs, output items and datasets (SQLite by default, PostgreSQL by URL)."""

from assay.store.base import DEFAULT_PROJECT, default_url, new_id
from assay.store.store import Store

__all__ = ["DEFAULT_PROJECT", "Store", "default_url", "new_id"]
