"""Foundry's agents API for prompt agents: ``POST /agents/{name}/versions`` (``agents.create_version``),
get and list an agent and its versions, delete a version or the agent. A version is immutable; each
create makes the next one (1, 2, ...). A run names one as ``{type: azure_ai_agent, name, version?}``
and runs it as its model with its instructions (``assay.targets.prompt_agents``). An external agent
(``kind: external`` with its ``otel_agent_id``) is registered, not run: a trace data source naming
it reads the spans of that id. Agents Foundry hosts (workflow, hosted) are refused with how to
serve one here instead."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request

from assay.api import fields
from assay.api.context import JsonBody, Owner, context
from assay.api.wire import Paging
from assay.errors import ConfigError, NotFoundError
from assay.targets.prompt_agents import PromptAgent

router = APIRouter()
EXTERNAL = "external"
"""An agent registered by its OpenTelemetry id: metadata and traces here, hosted elsewhere."""
NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
"""Foundry's rule: alphanumerics, hyphens inside, at most 63 characters."""


def version_object(row: dict[str, Any]) -> dict[str, Any]:
    """Foundry's ``AgentVersionDetails``."""
    body = row["body"]
    return {
        "object": "agent.version",
        "id": f"{row['name']}:{row['version']}",
        "name": row["name"],
        "version": str(row["version"]),
        "description": body.get("description"),
        "metadata": body.get("metadata") or {},
        "created_at": row["created_at"],
        "definition": body["definition"],
        "status": "active",
    }


def agent_object(row: dict[str, Any]) -> dict[str, Any]:
    """Foundry's ``AgentDetails``: the agent with its latest version."""
    return {
        "object": "agent",
        "id": row["name"],
        "name": row["name"],
        "versions": {"latest": version_object(row)},
        "state": "enabled",
        "configuration_state": "enabled",
    }


def _checked_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise ConfigError(
            f"agent name {name!r}: use letters, digits and hyphens (not first or last), at most 63 characters"
        )
    return name


@router.post("/agents/{agent_name}/versions")
def create_version(request: Request, agent_name: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    ctx = context(request)
    definition = body.get("definition")
    if isinstance(definition, dict) and definition.get("kind") == EXTERNAL:
        # Registered, not hosted: the agent runs elsewhere; its spans (by otel_agent_id) are its traces.
        otel_id = definition.get("otel_agent_id")
        if not isinstance(otel_id, str) or not otel_id.strip() or len(otel_id) > 256:
            raise ConfigError("definition.otel_agent_id: name the agent as its spans do (gen_ai.agent.name or .id)")
    else:
        agent = PromptAgent.parse(definition)
        ctx.models().get(agent.model).check_credentials()  # a model this server can call, before it is stored
    description, metadata = fields.name(body.get("description"), "description"), fields.metadata(body.get("metadata"))
    stored = {"definition": body["definition"], "description": description, "metadata": metadata or {}}
    return version_object(ctx.store.save_prompt_agent(owner, _checked_name(agent_name), stored))


@router.get("/agents/{agent_name}/versions/{agent_version}")
def get_version(request: Request, agent_name: str, agent_version: str, owner: Owner) -> dict[str, Any]:
    return version_object(context(request).store.get_prompt_agent(owner, agent_name, agent_version))


@router.get("/agents/{agent_name}/versions")
def list_versions(
    request: Request,
    agent_name: str,
    owner: Owner,
    paging: Paging,
) -> dict[str, Any]:
    versions = context(request).store.prompt_agent_versions(owner, agent_name)
    if not versions:
        raise NotFoundError(f"no agent {agent_name}")
    return paging.page([version_object(row) for row in versions])


@router.get("/agents/{agent_name}")
def get_agent(request: Request, agent_name: str, owner: Owner) -> dict[str, Any]:
    return agent_object(context(request).store.get_prompt_agent(owner, agent_name))


@router.get("/agents")
def list_agents(
    request: Request,
    owner: Owner,
    paging: Paging,
    kind: str | None = None,
) -> dict[str, Any]:
    """Every agent of the project with its latest version, or those of one ``kind`` (``prompt``,
    ``external``; the kinds Foundry hosts are never here)."""
    rows = context(request).store.list_prompt_agents(owner)
    if kind is not None:
        rows = [row for row in rows if (row["body"]["definition"] or {}).get("kind", "prompt") == kind]
    return paging.page([agent_object(row) for row in rows])


@router.delete("/agents/{agent_name}/versions/{agent_version}")
def delete_version(request: Request, agent_name: str, agent_version: str, owner: Owner) -> dict[str, Any]:
    context(request).store.delete_prompt_agent(owner, agent_name, agent_version)
    return {"object": "agent.version.deleted", "name": agent_name, "version": agent_version, "deleted": True}


@router.delete("/agents/{agent_name}")
def delete_agent(request: Request, agent_name: str, owner: Owner) -> dict[str, Any]:
    context(request).store.delete_prompt_agent(owner, agent_name)
    return {"object": "agent.deleted", "name": agent_name, "deleted": True}
