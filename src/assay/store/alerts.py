"""Alerts on the runs rules and schedules made: one row per run, so no run is alerted on twice, and
an outbox for the alerts found (``assay.api.alerts`` decides what is wrong and delivers; this
stores). An alert is ``pending`` until an attempt delivers it (``delivered``) or the last one fails
(``failed``); a server leases it for the length of one attempt, so of several servers one tries it
at a time, and each attempt is kept."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from assay.store import tables as t
from assay.store.base import StoreBase, now


class AlertsStore(StoreBase):
    def claim_alert(self, project: str, run_key: str, source: str, source_id: str) -> bool:
        """Take a finished run for checking; False when some server already did (one row per run)."""
        row: dict[str, Any] = {
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
            "attempt_log": [],
        }
        with self.engine.begin() as conn:
            return bool(conn.execute(self._insert(t.alerts).on_conflict_do_nothing(), [row]).rowcount)

    def record_alert(self, project: str, run_key: str, **values: Any) -> None:
        """What the check found (``kind``: an alert's, or ``none``); an alert to send is put in the
        outbox with ``state="pending"``, its ``target`` and ``next_attempt_at``."""
        alerts = t.alerts.c
        with self.engine.begin() as conn:
            conn.execute(t.alerts.update().where(alerts.project == project, alerts.run_key == run_key).values(**values))

    def due_alerts(self, clock: float, limit: int, offset: int = 0) -> list[dict[str, Any]]:
        """Pending alerts of every project whose next attempt has come and no server holds, the
        longest waiting first."""
        alerts = t.alerts.c
        query = (
            sa.select(t.alerts)
            .where(
                alerts.state == "pending",
                alerts.next_attempt_at <= clock,
                sa.or_(alerts.leased_until.is_(None), alerts.leased_until < clock),
            )
            .order_by(alerts.next_attempt_at, alerts.project, alerts.run_key)
            .limit(limit)
            .offset(offset)
        )
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def lease_alert(self, row: dict[str, Any], holder: str, clock: float, until: float) -> bool:
        """Hold a due alert for one attempt; False when another server took it first."""
        alerts = t.alerts.c
        mine = sa.and_(
            alerts.project == row["project"],
            alerts.run_key == row["run_key"],
            alerts.state == "pending",
            alerts.attempts == row["attempts"],
            sa.or_(alerts.leased_until.is_(None), alerts.leased_until < clock),
        )
        with self.engine.begin() as conn:
            changed = conn.execute(t.alerts.update().where(mine).values(leased_until=until, leased_by=holder))
            return bool(changed.rowcount)

    def record_attempt(
        self,
        row: dict[str, Any],
        holder: str,
        attempt: dict[str, Any],
        *,
        state: str,
        next_attempt_at: float | None,
    ) -> bool:
        """Keep an attempt's outcome and what comes next, if ``holder`` still holds the alert (its
        lease may have run out and another server taken it: then this attempt is not counted twice)."""
        alerts = t.alerts.c
        mine = sa.and_(
            alerts.project == row["project"],
            alerts.run_key == row["run_key"],
            alerts.leased_by == holder,
            alerts.attempts == row["attempts"],
        )
        values = {
            "attempts": row["attempts"] + 1,
            "attempt_log": [*(row["attempt_log"] or []), attempt],
            "status": attempt.get("status"),
            "delivered": state == "delivered",
            "state": state,
            "next_attempt_at": next_attempt_at,
            "leased_until": None,
            "leased_by": None,
        }
        with self.engine.begin() as conn:
            return bool(conn.execute(t.alerts.update().where(mine).values(**values)).rowcount)

    def alerts_of(self, project: str, source_id: str | None = None) -> list[dict[str, Any]]:
        """The project's alerts (of one rule or schedule when named), the newest first; runs found
        to need none are left out."""
        alerts = t.alerts.c
        query = sa.select(t.alerts).where(alerts.project == project, alerts.kind.not_in(("none", "pending")))
        if source_id is not None:
            query = query.where(alerts.source_id == source_id)
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query.order_by(alerts.created_at.desc())).mappings()]

    def checked_runs(self, project: str) -> set[str]:
        query = sa.select(t.alerts.c.run_key).where(t.alerts.c.project == project)
        with self.engine.connect() as conn:
            return {str(row[0]) for row in conn.execute(query)}
