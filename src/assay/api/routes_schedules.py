"""Foundry's ``/schedules`` (``project_client.beta.schedules``): create or update (PUT), get, list
(``type``, ``enabled``), delete, and a schedule's firings (``/schedules/{id}/runs``). What a
schedule does is ``assay.api.schedules``."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from assay.api.context import JsonBody, Owner, context
from assay.api.schedules import check_schedule, first_fire, schedule_object, schedule_run_object
from assay.errors import NotFoundError

router = APIRouter()


@router.put("/schedules/{schedule_id}")
def create_or_update_schedule(request: Request, schedule_id: str, body: JsonBody, owner: Owner) -> JSONResponse:
    store = context(request).store
    checked = check_schedule(body, store, owner)
    row, created = store.put_schedule(owner, schedule_id, checked, first_fire(checked, time.time()))
    return JSONResponse(schedule_object(row), status_code=201 if created else 200)


@router.get("/schedules/{schedule_id}")
def get_schedule(request: Request, schedule_id: str, owner: Owner) -> dict[str, Any]:
    return schedule_object(context(request).store.get_schedule(owner, schedule_id))


@router.get("/schedules")
def list_schedules(
    request: Request, owner: Owner, type: str | None = None, enabled: bool | None = None
) -> dict[str, Any]:  # noqa: A002
    rows = context(request).store.list_schedules(owner, task_type=type, enabled=enabled)
    return {"value": [schedule_object(row) for row in rows], "nextLink": None}


@router.delete("/schedules/{schedule_id}", status_code=204)
def delete_schedule(request: Request, schedule_id: str, owner: Owner) -> Response:
    context(request).store.delete_schedule(owner, schedule_id)
    return Response(status_code=204)


@router.get("/schedules/{schedule_id}/runs")
def list_schedule_runs(request: Request, schedule_id: str, owner: Owner) -> dict[str, Any]:
    store = context(request).store
    store.get_schedule(owner, schedule_id)
    return {"value": [schedule_run_object(r) for r in store.schedule_runs(owner, schedule_id)], "nextLink": None}


@router.get("/schedules/{schedule_id}/runs/{run_id}")
def get_schedule_run(request: Request, schedule_id: str, run_id: str, owner: Owner) -> dict[str, Any]:
    for row in context(request).store.schedule_runs(owner, schedule_id):
        if row["id"] == run_id:
            return schedule_run_object(row)
    raise NotFoundError(f"schedule {schedule_id} has no run {run_id!r}")
