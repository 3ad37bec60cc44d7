"""Red-team evaluation taxonomies: saved by name, a new version on every save; read by version or
the latest; deleted with all their versions."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from assay.errors import NotFoundError
from assay.store import tables as t
from assay.store.base import StoreBase, now

TAXONOMIES = t.evaluation_taxonomies


class TaxonomyStore(StoreBase):
    def save_taxonomy(self, project: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        """Store ``body`` as the next version of taxonomy ``name`` (1, 2, ...)."""
        mine = sa.and_(TAXONOMIES.c.project == project, TAXONOMIES.c.name == name)
        with self.engine.begin() as conn:
            latest = conn.execute(sa.select(sa.func.max(TAXONOMIES.c.version)).where(mine)).scalar()
            row = {"project": project, "name": name, "version": (latest or 0) + 1, "body": body, "created_at": now()}
            conn.execute(TAXONOMIES.insert().values(**row))
        return row

    def get_taxonomy(self, project: str, name: str, version: str | int | None = None) -> dict[str, Any]:
        query = sa.select(TAXONOMIES).where(TAXONOMIES.c.project == project, TAXONOMIES.c.name == name)
        if version is not None:
            if not str(version).isdigit():
                raise NotFoundError(f"taxonomy {name} has no version {version!r}")
            query = query.where(TAXONOMIES.c.version == int(version))
        with self.engine.connect() as conn:
            row = conn.execute(query.order_by(TAXONOMIES.c.version.desc()).limit(1)).mappings().first()
        if row is None:
            which = name if version is None else f"{name} version {version}"
            hint = "create it with PUT /evaluationtaxonomies/{name}"
            raise NotFoundError(f"no evaluation taxonomy {which}", hint=hint)
        return dict(row)

    def list_taxonomies(self, project: str) -> list[dict[str, Any]]:
        """The latest version of each taxonomy, by name."""
        latest = (
            sa.select(TAXONOMIES.c.name, sa.func.max(TAXONOMIES.c.version).label("version"))
            .where(TAXONOMIES.c.project == project)
            .group_by(TAXONOMIES.c.name)
            .subquery()
        )
        query = (
            sa.select(TAXONOMIES)
            .join(latest, sa.and_(TAXONOMIES.c.name == latest.c.name, TAXONOMIES.c.version == latest.c.version))
            .where(TAXONOMIES.c.project == project)
            .order_by(TAXONOMIES.c.name)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def delete_taxonomy(self, project: str, name: str) -> None:
        self.get_taxonomy(project, name)
        with self.engine.begin() as conn:
            conn.execute(TAXONOMIES.delete().where(TAXONOMIES.c.project == project, TAXONOMIES.c.name == name))
