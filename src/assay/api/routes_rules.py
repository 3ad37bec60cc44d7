"""Foundry's ``/evaluationrules`` (``project_client.evaluation_rules``): create or update (PUT), get,
list (``actionType``, ``agentName``, ``enabled``), delete. What a rule does is ``assay.api.rules``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from assay.api.context import JsonBody, Owner, context
from assay.api.rules import check_rule, rule_object

router = APIRouter()


@router.put("/evaluationrules/{rule_id}")
def create_or_update_rule(request: Request, rule_id: str, body: JsonBody, owner: Owner) -> JSONResponse:
    store = context(request).store
    row, created = store.put_rule(owner, rule_id, check_rule(rule_id, body, store, owner))
    return JSONResponse(rule_object(row), status_code=201 if created else 200)


@router.get("/evaluationrules/{rule_id}")
def get_rule(request: Request, rule_id: str, owner: Owner) -> dict[str, Any]:
    return rule_object(context(request).store.get_rule(owner, rule_id))


@router.get("/evaluationrules")
def list_rules(
    request: Request,
    owner: Owner,
    actionType: str | None = None,  # noqa: N803 - Foundry's query parameter names
    agentName: str | None = None,  # noqa: N803
    enabled: bool | None = None,
) -> dict[str, Any]:
    rows = context(request).store.list_rules(owner, action_type=actionType, agent_name=agentName, enabled=enabled)
    return {"value": [rule_object(row) for row in rows], "nextLink": None}


@router.delete("/evaluationrules/{rule_id}", status_code=204)
def delete_rule(request: Request, rule_id: str, owner: Owner) -> Response:
    context(request).store.delete_rule(owner, rule_id)
    return Response(status_code=204)
