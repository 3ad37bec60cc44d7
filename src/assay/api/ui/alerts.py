"""The web UI's alerts: each alert the project's rules and schedules raised, its state, and every
attempt at delivering it (when, how long, what the webhook answered)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from assay.api.alerts import alert_object
from assay.api.context import context
from assay.api.ui.access import Viewer
from assay.report.run_view import TEMPLATES
from assay.store import DEFAULT_PROJECT

router = APIRouter()


@router.get("/ui/alerts", response_class=HTMLResponse, include_in_schema=False)
def alerts_page(request: Request, viewer: Viewer) -> str:
    rows = context(request).store.alerts_of(viewer or DEFAULT_PROJECT)
    shown = [alert_object(row) for row in rows[:500]]
    return TEMPLATES.get_template("alerts.html").render(title="Alerts", alerts=shown, viewer=viewer)
