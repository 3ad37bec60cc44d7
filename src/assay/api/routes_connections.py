"""Foundry's project connections: ``GET /connections``, ``GET /connections/{name}`` and
``POST /connections/{name}/getConnectionWithCredentials``.

A project here has one connection, its Application Insights, whose connection string sends an
application's Azure Monitor telemetry to this server (``POST /v2.1/track``,
``assay.api.routes_traces``): ``project_client.telemetry.get_application_insights_connection_string()``
then ``configure_azure_monitor(...)``, as Foundry's tracing and human-evaluation samples do,
lands the application's spans and ``gen_ai.evaluation.result`` events in the project.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request

from assay.api.context import Owner, context
from assay.errors import NotFoundError

router = APIRouter()
APP_INSIGHTS = "appinsights"
RESOURCE = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/assay"
    "/providers/Microsoft.CognitiveServices/accounts/assay/projects/{project}"
)
"""What Foundry's SDK reads as the project's resource id (a connection's id up to ``/connections/``)."""


def _connection(request: Request, project: str, key: str | None) -> dict[str, Any]:
    base = str(request.base_url).rstrip("/")
    credentials: dict[str, Any] = {"type": "ApiKey"}
    if key is not None:
        credentials["key"] = f"InstrumentationKey={key};IngestionEndpoint={base};LiveEndpoint={base}"
    return {
        "name": APP_INSIGHTS,
        "id": f"{RESOURCE.format(project=project)}/connections/{APP_INSIGHTS}",
        "type": "AppInsights",
        "target": base,
        "isDefault": True,
        "credentials": credentials,
        "metadata": {"ResourceId": f"{RESOURCE.format(project=project)}/applicationInsights/assay"},
    }


def _named(name: str) -> None:
    if name != APP_INSIGHTS:
        raise NotFoundError(f"No connection named '{name}': this project's only connection is '{APP_INSIGHTS}'.")


@router.get("/connections")
async def list_connections(
    request: Request, owner: Owner, connectionType: str | None = None, defaultConnection: bool | None = None
) -> dict[str, Any]:
    shown = [_connection(request, owner, None)]
    if connectionType is not None:
        shown = [c for c in shown if c["type"].lower() == connectionType.lower()]
    if defaultConnection is False:
        shown = []
    return {"value": shown}


@router.get("/connections/{name}")
async def get_connection(request: Request, name: str, owner: Owner) -> dict[str, Any]:
    _named(name)
    return _connection(request, owner, None)


@router.post("/connections/{name}/getConnectionWithCredentials")
async def get_connection_with_credentials(request: Request, name: str, owner: Owner) -> dict[str, Any]:
    _named(name)
    key = await asyncio.to_thread(context(request).store.ingestion_key, owner)
    return _connection(request, owner, key)
