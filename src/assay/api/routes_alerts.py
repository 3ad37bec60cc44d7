"""The alerts of a project's evaluation rules and schedules (assay's extension; ``assay.api.alerts``
finds and delivers them): each with its state (``pending``, ``delivered``, ``failed``) and every
delivery attempt, newest alert first."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from assay.api.alerts import alert_object
from assay.api.context import Owner, context
from assay.errors import NotFoundError

router = APIRouter()


@router.get("/alerts")
def list_alerts(request: Request, owner: Owner, sourceId: str | None = None) -> dict[str, Any]:  # noqa: N803
    """The alerts, of one rule or schedule when ``sourceId`` names it."""
    rows = context(request).store.alerts_of(owner, sourceId)
    return {"value": [alert_object(row) for row in rows], "nextLink": None}


@router.get("/alerts/{alert_id}")
def get_alert(request: Request, alert_id: str, owner: Owner) -> dict[str, Any]:
    for row in context(request).store.alerts_of(owner):
        if row["run_key"] == alert_id:
            return alert_object(row)
    raise NotFoundError(f"no alert {alert_id!r}")
