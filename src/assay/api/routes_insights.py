"""Foundry's ``/insights`` (``project_client.beta.insights``): generate (POST, 201), get, list
(``type``, ``evalId``, ``runId``). What an insight holds is ``assay.api.insights``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from assay.api.context import JsonBody, Owner, context
from assay.api.insights import accept
from assay.api.ratelimit import limited

router = APIRouter()


@router.post("/insights", dependencies=[limited("runs")])
def generate_insight(request: Request, body: JsonBody, owner: Owner) -> JSONResponse:
    """201 with the insight ``Running``; a worker makes it (callers poll ``get``)."""
    return JSONResponse(accept(context(request), owner, body), status_code=201)


@router.get("/insights/{insight_id}")
def get_insight(request: Request, insight_id: str, owner: Owner) -> dict[str, Any]:
    return context(request).store.get_insight(owner, insight_id)


@router.get("/insights")
def list_insights(
    request: Request,
    owner: Owner,
    type: str | None = None,  # noqa: A002 - Foundry's query parameter names
    evalId: str | None = None,  # noqa: N803
    runId: str | None = None,  # noqa: N803
) -> dict[str, Any]:
    found = [
        i
        for i in context(request).store.list_insights(owner)
        if (type is None or i["request"].get("type") == type)
        and (evalId is None or i["request"].get("evalId") == evalId)
        and (runId is None or runId in (i["request"].get("runIds") or []))
    ]
    return {"value": found, "nextLink": None}
