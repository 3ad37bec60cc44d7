"""Foundry's project deployments: ``GET /deployments`` and ``GET /deployments/{name}``, as
``project_client.deployments.list()`` and ``.get(name)`` read them.

A project's deployments here are the models of the server's ``--models`` file: what its judges,
targets and graders may name. Nothing secret is shown (no endpoint, no key)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from assay.api.context import Owner, context
from assay.errors import NotFoundError
from assay.llm import ModelConfig

router = APIRouter()


def _deployment(config: ModelConfig) -> dict[str, Any]:
    capability = "embeddings" if config.api == "embeddings" else "chat_completion"
    return {
        "type": "ModelDeployment",
        "name": config.name,
        "modelName": config.model,
        "modelVersion": "",
        "modelPublisher": "OpenAI",
        "capabilities": {capability: "true"},
        "sku": {"capacity": config.rpm or 0, "family": "", "name": "GlobalStandard", "size": "", "tier": ""},
        "connectionName": None,
    }


def _deployments(request: Request) -> list[dict[str, Any]]:
    return [_deployment(config) for config in context(request).models().configs.values()]


@router.get("/deployments")
async def list_deployments(
    request: Request,
    owner: Owner,
    modelPublisher: str | None = None,
    modelName: str | None = None,
    deploymentType: str | None = None,
) -> dict[str, Any]:
    shown = _deployments(request)
    if modelPublisher is not None:
        shown = [d for d in shown if d["modelPublisher"].lower() == modelPublisher.lower()]
    if modelName is not None:
        shown = [d for d in shown if d["modelName"] == modelName]
    if deploymentType is not None:
        shown = [d for d in shown if d["type"] == deploymentType]
    return {"value": shown}


@router.get("/deployments/{name}")
async def get_deployment(request: Request, name: str, owner: Owner) -> dict[str, Any]:
    found = next((d for d in _deployments(request) if d["name"] == name), None)
    if found is None:
        known = ", ".join(d["name"] for d in _deployments(request)) or "none: start the server with --models"
        raise NotFoundError(f"No deployment named '{name[:100]}' (deployments: {known}).")
    return found
