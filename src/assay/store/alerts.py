"""Alerts on the runs rules and schedules made: one row per run, so no run is alerted on twice
(``assay.api.alerts`` decides what is wrong and delivers; this stores)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from assay.store import tables as t
from assay.store.base import StoreBase, now


class AlertsStore(StoreBase):
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
