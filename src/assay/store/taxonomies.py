"""Red-team evaluation taxonomies: saved by name, a new version on every save; read by version or
the latest; deleted with all their versions."""

from __future__ import annotations

from typing import Any

from assay.store import tables as t
from assay.store.base import StoreBase, now
from assay.store.versioned import Versions

TAXONOMIES = Versions(t.evaluation_taxonomies, "evaluation taxonomy", "create it with PUT /evaluationtaxonomies/{name}")


class TaxonomyStore(StoreBase):
    def save_taxonomy(self, project: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        """Store ``body`` as the next version of taxonomy ``name`` (1, 2, ...)."""
        return TAXONOMIES.save(self.engine, project, name, body, now())

    def get_taxonomy(self, project: str, name: str, version: str | int | None = None) -> dict[str, Any]:
        with self.engine.connect() as conn:
            row = TAXONOMIES.find(conn, project, name, version)
        if row is None:
            raise TAXONOMIES.missing(name, version)
        return row

    def list_taxonomies(self, project: str) -> list[dict[str, Any]]:
        """The latest version of each taxonomy, by name."""
        with self.engine.connect() as conn:
            return TAXONOMIES.latest(conn, project)

    def delete_taxonomy(self, project: str, name: str) -> None:
        self.get_taxonomy(project, name)
        with self.engine.begin() as conn:
            TAXONOMIES.delete(conn, project, name)
