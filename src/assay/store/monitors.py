"""Agent insight monitors (``assay.api.agent_insights`` runs them; this stores): one per agent of a
project, kept as one document (configuration, overview, insights), with when it runs next."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from assay.errors import ConfigError, NotFoundError
from assay.store import tables as t
from assay.store.base import StoreBase, now


class MonitorsStore(StoreBase):
    def add_monitor(self, project: str, monitor: dict[str, Any]) -> None:
        """``monitor`` (its ``next_scheduled_run_at`` is when it runs next on its own)."""
        row = {
            "project": project,
            "id": monitor["id"],
            "agent_name": monitor["agent_name"],
            "next_run_at": monitor.get("next_scheduled_run_at"),
            "body": monitor,
            "created_at": now(),
        }
        try:
            with self.engine.begin() as conn:
                conn.execute(t.insight_monitors.insert().values(**row))
        except sa.exc.IntegrityError:
            raise ConfigError(
                f"agent {monitor['agent_name']} already has a monitor", hint="update it, or delete it first"
            ) from None

    def get_monitor(self, project: str, monitor_id: str) -> dict[str, Any]:
        return self.find_monitor(project, monitor_id)[1]

    def find_monitor(self, project: str | None, monitor_id: str) -> tuple[str, dict[str, Any]]:
        """The monitor and its project (of any project when ``project`` is None: the UI of a server without keys)."""
        table = t.insight_monitors
        query = sa.select(table.c.project, table.c.body).where(table.c.id == monitor_id)
        if project is not None:
            query = query.where(table.c.project == project)
        with self.engine.connect() as conn:
            found = conn.execute(query).first()
        if found is None:
            raise NotFoundError(f"no agent insight monitor {monitor_id!r}")
        return found.project, dict(found.body)

    def list_monitors(self, project: str | None) -> list[dict[str, Any]]:
        """The project's monitors (every project's when None), oldest first."""
        table = t.insight_monitors
        query = sa.select(table.c.body)
        if project is not None:
            query = query.where(table.c.project == project)
        with self.engine.connect() as conn:
            return [dict(row[0]) for row in conn.execute(query.order_by(table.c.created_at, table.c.id))]

    def save_monitor(self, project: str, monitor: dict[str, Any]) -> None:
        table = t.insight_monitors
        mine = sa.and_(table.c.project == project, table.c.id == monitor["id"])
        following = monitor.get("next_scheduled_run_at")
        with self.engine.begin() as conn:
            conn.execute(table.update().where(mine).values(body=monitor, next_run_at=following))

    def delete_monitor(self, project: str, monitor_id: str) -> None:
        self.get_monitor(project, monitor_id)
        table = t.insight_monitors
        with self.engine.begin() as conn:
            conn.execute(table.delete().where(table.c.project == project, table.c.id == monitor_id))

    def due_monitors(self, moment: int) -> list[tuple[str, dict[str, Any], int]]:
        """Monitors due to run on their own by ``moment``: (project, monitor, when it was due)."""
        table = t.insight_monitors
        query = sa.select(table.c.project, table.c.body, table.c.next_run_at).where(table.c.next_run_at <= moment)
        with self.engine.connect() as conn:
            return [(row.project, dict(row.body), row.next_run_at) for row in conn.execute(query)]

    def claim_monitor_run(self, project: str, monitor: dict[str, Any], due: int) -> bool:
        """Store ``monitor`` (its next run moved on) if its next run is still ``due``; False when
        another server did first (of several on one database, exactly one runs it)."""
        table = t.insight_monitors
        mine = sa.and_(table.c.project == project, table.c.id == monitor["id"], table.c.next_run_at == due)
        following = monitor.get("next_scheduled_run_at")
        with self.engine.begin() as conn:
            return bool(conn.execute(table.update().where(mine).values(body=monitor, next_run_at=following)).rowcount)
