"""Insights as the API returns them (``assay.api.insights`` makes them; this stores)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from assay.errors import NotFoundError
from assay.store import tables as t
from assay.store.base import StoreBase, now


class InsightsStore(StoreBase):
    def put_insight(self, project: str, insight_id: str, body: dict[str, Any]) -> None:
        with self.engine.begin() as conn:
            conn.execute(t.insights.insert().values(project=project, id=insight_id, body=body, created_at=now()))

    def update_insight(self, project: str, insight_id: str, body: dict[str, Any]) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                t.insights.update()
                .where(t.insights.c.project == project, t.insights.c.id == insight_id)
                .values(body=body)
            )

    def get_insight(self, project: str | None, insight_id: str) -> dict[str, Any]:
        """The insight (of any project when ``project`` is None: the UI of a server without keys)."""
        query = sa.select(t.insights.c.body).where(t.insights.c.id == insight_id)
        if project is not None:
            query = query.where(t.insights.c.project == project)
        with self.engine.connect() as conn:
            found = conn.execute(query).scalar()
        if found is None:
            raise NotFoundError(f"no insight {insight_id!r}")
        return dict(found)

    def list_insights(self, project: str | None) -> list[dict[str, Any]]:
        query = sa.select(t.insights.c.body).order_by(t.insights.c.created_at)
        if project is not None:
            query = query.where(t.insights.c.project == project)
        with self.engine.connect() as conn:
            return [dict(row[0]) for row in conn.execute(query)]
