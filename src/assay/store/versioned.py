"""Named bodies a project keeps in versions (1, 2, ...): red-team taxonomies and prompt agents.
Every save is a new version, so whatever named one (a run, an eval) keeps the body it named. The
tables hold ``project, name, version, body, created_at``."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from assay.errors import NotFoundError

SAVE_ATTEMPTS = 32
"""Saves of one name racing each other (SQLite; PostgreSQL queues them): each lost race costs one
more attempt."""


class Versions:
    """One such table of a store."""

    def __init__(self, table: sa.Table, noun: str, hint: str) -> None:
        self.table = table
        self.noun = noun
        self.hint = hint
        """How to make one, for the error when none is found."""

    def save(self, engine: sa.Engine, project: str, name: str, body: dict[str, Any], stamp: int) -> dict[str, Any]:
        """``body`` as the next version of ``name``. Two saves of one name at once would both take
        the same next number: on PostgreSQL they wait for each other (a transaction lock on the
        name), elsewhere the one that loses the race takes the number after."""
        table = self.table
        mine = sa.and_(table.c.project == project, table.c.name == name)
        for attempt in range(SAVE_ATTEMPTS):
            try:
                with engine.begin() as conn:
                    if conn.dialect.name == "postgresql":  # saves of one name queue rather than race
                        key = json.dumps([table.name, project, name])
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"), {"key": key})
                    latest = conn.execute(sa.select(sa.func.max(table.c.version)).where(mine)).scalar()
                    version = (latest or 0) + 1
                    row = {"project": project, "name": name, "version": version, "body": body, "created_at": stamp}
                    conn.execute(table.insert().values(**row))
                return row
            except sa.exc.IntegrityError:
                if attempt == SAVE_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def find(self, conn: sa.Connection, project: str, name: str, version: str | int | None) -> dict[str, Any] | None:
        """A version of ``name``, or its latest; None when there is none."""
        table = self.table
        query = sa.select(table).where(table.c.project == project, table.c.name == name)
        if version is not None:
            if not str(version).isdigit():
                return None
            query = query.where(table.c.version == int(version))
        row = conn.execute(query.order_by(table.c.version.desc()).limit(1)).mappings().first()
        return None if row is None else dict(row)

    def missing(self, name: str, version: str | int | None) -> NotFoundError:
        which = name if version is None else f"{name} version {version}"
        return NotFoundError(f"no {self.noun} {which}", hint=self.hint)

    def all_of(self, conn: sa.Connection, project: str, name: str) -> list[dict[str, Any]]:
        """Every version of ``name``, oldest first."""
        table = self.table
        query = sa.select(table).where(table.c.project == project, table.c.name == name).order_by(table.c.version)
        return [dict(r) for r in conn.execute(query).mappings()]

    def latest(self, conn: sa.Connection, project: str) -> list[dict[str, Any]]:
        """The latest version of each name, by name."""
        table = self.table
        newest = (
            sa.select(table.c.name, sa.func.max(table.c.version).label("version"))
            .where(table.c.project == project)
            .group_by(table.c.name)
            .subquery()
        )
        query = (
            sa.select(table)
            .join(newest, sa.and_(table.c.name == newest.c.name, table.c.version == newest.c.version))
            .where(table.c.project == project)
            .order_by(table.c.name)
        )
        return [dict(r) for r in conn.execute(query).mappings()]

    def delete(self, conn: sa.Connection, project: str, name: str, version: int | None = None) -> int:
        """Delete one version of ``name``, or all; how many were deleted."""
        table = self.table
        where = sa.and_(table.c.project == project, table.c.name == name)
        if version is not None:
            where = sa.and_(where, table.c.version == version)
        return conn.execute(table.delete().where(where)).rowcount
