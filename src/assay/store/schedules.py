"""Schedules and their firings (``assay.api.schedules`` decides when; this stores).

``claim_firing`` moves a due schedule's ``next_fire`` on only if it is still the value the caller
read: of several servers on one database reading the same due schedule, exactly one changes the row
and fires; the others change nothing.
"""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa

from assay.errors import NotFoundError
from assay.store import tables as t
from assay.store.base import StoreBase, now


class SchedulesStore(StoreBase):
    def put_schedule(
        self, project: str, schedule_id: str, body: dict[str, Any], next_fire: float | None
    ) -> tuple[dict[str, Any], bool]:
        """Create or replace a schedule; (its row, whether it is new)."""
        table = t.schedules
        values = {
            "body": body,
            "enabled": bool(body.get("enabled", True)),
            "task_type": str((body.get("task") or {}).get("type") or ""),
            "next_fire": next_fire,
            "updated_at": now(),
        }
        mine = sa.and_(table.c.project == project, table.c.id == schedule_id)
        with self.engine.begin() as conn:
            changed = conn.execute(table.update().where(mine).values(**values)).rowcount
            if not changed:
                conn.execute(
                    table.insert().values(project=project, id=schedule_id, created_at=values["updated_at"], **values)
                )
        return self.get_schedule(project, schedule_id), not changed

    def get_schedule(self, project: str, schedule_id: str) -> dict[str, Any]:
        table = t.schedules
        query = sa.select(table).where(table.c.project == project, table.c.id == schedule_id)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            raise NotFoundError(f"no schedule {schedule_id!r}")
        return dict(row)

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

    # alerts ----------------------------------------------------------------------------------

    def claim_alert(self, project: str, run_key: str, source: str, source_id: str) -> bool:
        """Take a finished run for checking; False when some server already did (one row per run)."""
        row = {
            "project": project,
            "run_key": run_key,
            "source": source,
            "source_id": source_id,
            "kind": "pending",
            "payload": None,
            "delivered": False,
            "attempts": 0,
            "status": None,
            "created_at": now(),
        }
        with self.engine.begin() as conn:
            return bool(conn.execute(self._insert(t.alerts).on_conflict_do_nothing(), [row]).rowcount)

    def record_alert(self, project: str, run_key: str, **values: Any) -> None:
        """What the check found (``kind``: an alert's, or ``none``) and how its delivery went."""
        alerts = t.alerts.c
        with self.engine.begin() as conn:
            conn.execute(t.alerts.update().where(alerts.project == project, alerts.run_key == run_key).values(**values))

    def alerts_of(self, project: str, source_id: str) -> list[dict[str, Any]]:
        alerts = t.alerts.c
        query = sa.select(t.alerts).where(alerts.project == project, alerts.source_id == source_id)
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query.order_by(alerts.created_at)).mappings()]

    def checked_runs(self, project: str) -> set[str]:
        query = sa.select(t.alerts.c.run_key).where(t.alerts.c.project == project)
        with self.engine.connect() as conn:
            return {str(row[0]) for row in conn.execute(query)}

    # insights --------------------------------------------------------------------------------

    def put_insight(self, project: str, insight_id: str, body: dict[str, Any]) -> None:
        with self.engine.begin() as conn:
            conn.execute(t.insights.insert().values(project=project, id=insight_id, body=body, created_at=now()))

    def get_insight(self, project: str, insight_id: str) -> dict[str, Any]:
        query = sa.select(t.insights.c.body).where(t.insights.c.project == project, t.insights.c.id == insight_id)
        with self.engine.connect() as conn:
            found = conn.execute(query).scalar()
        if found is None:
            raise NotFoundError(f"no insight {insight_id!r}")
        return dict(found)

    def list_insights(self, project: str) -> list[dict[str, Any]]:
        query = sa.select(t.insights.c.body).where(t.insights.c.project == project).order_by(t.insights.c.created_at)
        with self.engine.connect() as conn:
            return [dict(row[0]) for row in conn.execute(query)]
