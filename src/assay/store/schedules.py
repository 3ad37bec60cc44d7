"""Schedules and their firings (``assay.api.schedules`` decides when; this stores).

``claim_firing`` moves a due schedule's ``next_fire`` on only if it is still the value the caller
read: of several servers on one database reading the same due schedule, exactly one changes the row
and fires; the others change nothing.
"""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa

from assay.store import tables as t
from assay.store.base import StoreBase, now


class SchedulesStore(StoreBase):
    def put_schedule(
        self, project: str, schedule_id: str, body: dict[str, Any], next_fire: float | None
    ) -> tuple[dict[str, Any], bool]:
        """Create or replace a schedule; (its row, whether it is new)."""
        values = {
            "body": body,
            "enabled": bool(body.get("enabled", True)),
            "task_type": str((body.get("task") or {}).get("type") or ""),
            "next_fire": next_fire,
            "updated_at": now(),
        }
        created = self._put_row(t.schedules, project, schedule_id, values)
        return self.get_schedule(project, schedule_id), created

    def get_schedule(self, project: str, schedule_id: str) -> dict[str, Any]:
        return self._get_row(t.schedules, project, schedule_id, "schedule")

    def list_schedules(
        self, project: str | None, *, task_type: str | None = None, enabled: bool | None = None
    ) -> list[dict[str, Any]]:
        table = t.schedules
        query = sa.select(table).order_by(table.c.created_at, table.c.id)
        if project is not None:
            query = query.where(table.c.project == project)
        if task_type is not None:
            query = query.where(sa.func.lower(table.c.task_type) == task_type.lower())
        if enabled is not None:
            query = query.where(table.c.enabled.is_(enabled))
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def delete_schedule(self, project: str, schedule_id: str) -> None:
        self.get_schedule(project, schedule_id)
        with self.engine.begin() as conn:
            runs = t.schedule_runs.c
            conn.execute(t.schedule_runs.delete().where(runs.project == project, runs.schedule_id == schedule_id))
            conn.execute(t.schedules.delete().where(t.schedules.c.project == project, t.schedules.c.id == schedule_id))

    def due_schedules(self, clock: float) -> list[dict[str, Any]]:
        """Enabled schedules of every project whose next firing has come."""
        table = t.schedules
        query = sa.select(table).where(
            table.c.enabled.is_(True), table.c.next_fire.is_not(None), table.c.next_fire <= clock
        )
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def claim_firing(self, project: str, schedule_id: str, seen: float, following: float | None) -> bool:
        """Move ``next_fire`` from ``seen`` to ``following``; whether this call did (and so fires)."""
        table = t.schedules
        mine = sa.and_(table.c.project == project, table.c.id == schedule_id, table.c.next_fire == seen)
        with self.engine.begin() as conn:
            return bool(conn.execute(table.update().where(mine).values(next_fire=following)).rowcount)

    def add_schedule_run(
        self,
        project: str,
        schedule_id: str,
        trigger_time: float,
        *,
        eval_id: str | None,
        eval_run_id: str | None,
        error: str | None,
        insight_id: str | None = None,
        fired_at: float | None = None,
    ) -> dict[str, Any]:
        row = {
            "project": project,
            "schedule_id": schedule_id,
            "id": f"schedrun_{uuid.uuid4().hex[:24]}",
            "trigger_time": trigger_time,
            "success": error is None,
            "error": error,
            "eval_id": eval_id,
            "eval_run_id": eval_run_id,
            "insight_id": insight_id,
            "fired_at": fired_at,
        }
        with self.engine.begin() as conn:
            conn.execute(t.schedule_runs.insert().values(**row))
        return row

    def schedule_runs(self, project: str, schedule_id: str) -> list[dict[str, Any]]:
        """A schedule's firings, the newest first."""
        runs = t.schedule_runs.c
        query = (
            sa.select(t.schedule_runs)
            .where(runs.project == project, runs.schedule_id == schedule_id)
            .order_by(runs.trigger_time.desc())
        )
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]
