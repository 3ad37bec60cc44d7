"""Storage for evals, runs, output items and datasets (SQLite by default, PostgreSQL by URL)."""

from assay.store.store import DEFAULT_PROJECT, Store, default_url, new_id

__all__ = ["DEFAULT_PROJECT", "Store", "default_url", "new_id"]
