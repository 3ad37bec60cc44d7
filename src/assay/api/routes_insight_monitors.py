"""Foundry's ``/agent_insight_monitors`` (``project_client.beta.agent_insight_monitors``): monitors
(create, get, list, update, delete, ``:reset``), their runs (``begin_create_run``: 201 with
``Operation-Location``, run once the answer is sent; list, get, ``:cancel``) and the insights they
found (list, get, update). What a run does is ``assay.api.agent_insights``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, BackgroundTasks, Request, Response
from fastapi.responses import JSONResponse

from assay.api import agent_insights as monitors
from assay.api.context import JsonBody, OptionalJsonBody, Owner, context
from assay.api.jobs import answer, cancel, reap
from assay.api.ratelimit import limited
from assay.api.wire import Paging
from assay.errors import NotFoundError

router = APIRouter()
ROUTE = "/agent_insight_monitors"


@router.post(ROUTE, status_code=201)
def create_monitor(request: Request, body: JsonBody, owner: Owner) -> dict[str, Any]:
    return monitors.create_monitor(context(request), owner, body)


@router.get(ROUTE)
def list_monitors(request: Request, owner: Owner, paging: Paging, agent_name: str | None = None) -> dict[str, Any]:
    found = context(request).store.list_monitors(owner)
    chosen = [monitors.monitor_object(m, overview=False) for m in found if agent_name in (None, m["agent_name"])]
    return paging.page(chosen)


@router.get(ROUTE + "/{monitor_id}")
def get_monitor(request: Request, monitor_id: str, owner: Owner) -> dict[str, Any]:
    return monitors.monitor_object(context(request).store.get_monitor(owner, monitor_id))


@router.patch(ROUTE + "/{monitor_id}")
def update_monitor(request: Request, monitor_id: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    return monitors.update_monitor(context(request), owner, monitor_id, body)


@router.delete(ROUTE + "/{monitor_id}", status_code=204)
def delete_monitor(request: Request, monitor_id: str, owner: Owner) -> Response:
    monitors.delete_monitor(context(request), owner, monitor_id)
    return Response(status_code=204)


@router.post(ROUTE + "/{monitor_id}:reset", status_code=204)
def reset_monitor(request: Request, monitor_id: str, owner: Owner) -> Response:
    monitors.reset_monitor(context(request), owner, monitor_id)
    return Response(status_code=204)


@router.post(ROUTE + "/{monitor_id}/runs", status_code=201, dependencies=[limited("runs")])
def create_run(
    request: Request, monitor_id: str, body: OptionalJsonBody, owner: Owner, background: BackgroundTasks
) -> JSONResponse:
    ctx = context(request)
    return answer(request, ctx, owner, "insight_run", monitors.create_run(ctx, owner, monitor_id, body), background)


@router.get(ROUTE + "/{monitor_id}/runs")
def list_runs(
    request: Request,
    monitor_id: str,
    owner: Owner,
    paging: Paging,
    status: str | None = None,
    trigger: str | None = None,
) -> dict[str, Any]:
    ctx = context(request)
    ctx.store.get_monitor(owner, monitor_id)  # a NotFoundError (404) names it
    reap(ctx, owner, "insight_run")
    runs = [
        run
        for run in ctx.store.list_jobs(owner, "insight_run")
        if run["monitor_id"] == monitor_id and status in (None, run["status"]) and trigger in (None, run["trigger"])
    ]
    return paging.page(runs)


@router.get(ROUTE + "/{monitor_id}/runs/{run_id}")
def get_run(request: Request, monitor_id: str, run_id: str, owner: Owner) -> dict[str, Any]:
    ctx = context(request)
    reap(ctx, owner, "insight_run")
    return _run_of(ctx.store.get_job(owner, "insight_run", run_id), monitor_id)


@router.post(ROUTE + "/{monitor_id}/runs/{run_id}:cancel")
def cancel_run(request: Request, monitor_id: str, run_id: str, owner: Owner) -> dict[str, Any]:
    ctx = context(request)
    _run_of(ctx.store.get_job(owner, "insight_run", run_id), monitor_id)
    return cancel(ctx, owner, "insight_run", run_id)


@router.get(ROUTE + "/{monitor_id}/insights")
def list_insights(
    request: Request,
    monitor_id: str,
    owner: Owner,
    paging: Paging,
    category: str | None = None,
    severity: str | None = None,
    include_details: bool = False,
) -> dict[str, Any]:
    monitor = context(request).store.get_monitor(owner, monitor_id)
    found = [
        monitors.insight_object(insight, details=include_details)
        for insight in monitor["insights"]
        if category in (None, insight["category"]) and severity in (None, insight["severity"])
    ]
    return paging.page(found)


@router.get(ROUTE + "/{monitor_id}/insights/{insight_id}")
def get_insight(
    request: Request, monitor_id: str, insight_id: str, owner: Owner, include_details: bool = False
) -> dict[str, Any]:
    monitor = context(request).store.get_monitor(owner, monitor_id)
    return monitors.insight_object(monitors.find_insight(monitor, insight_id), details=include_details)


@router.patch(ROUTE + "/{monitor_id}/insights/{insight_id}")
def update_insight(request: Request, monitor_id: str, insight_id: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    return monitors.update_insight(context(request), owner, monitor_id, insight_id, body)


def _run_of(run: dict[str, Any], monitor_id: str) -> dict[str, Any]:
    if run["monitor_id"] != monitor_id:
        raise NotFoundError(f"monitor {monitor_id} has no run {run['id']!r}")
    return run
