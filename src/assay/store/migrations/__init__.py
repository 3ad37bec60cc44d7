"""Alembic migrations, applied in-process when a store opens (append-only: never edit a landed one)."""
