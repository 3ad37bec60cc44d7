"""Foundry's ``/evaluationtaxonomies``: the policy tree a red-team run attacks from (create with
PUT, update with PATCH, get, list, delete). A PUT without ``taxonomyCategories`` has assay write
them from the target and risk categories (``assay.redteam.taxonomy``); a user reviews them,
switches sub-categories off and PATCHes them back. Every save is a new version; a version's
``id`` (``azureai://.../evaluationtaxonomies/<name>/versions/<v>``) is a red-team run's source."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from assay.api.context import ApiContext, JsonBody, Owner, context
from assay.errors import ConfigError
from assay.redteam.runs import target_tools
from assay.redteam.taxonomy import checked_categories, checked_input, generate_categories, taxonomy_id
from assay.run.sources import agents_in

router = APIRouter()
FIELDS = ("description", "tags", "properties")


def taxonomy_object(row: dict[str, Any]) -> dict[str, Any]:
    body = row["body"]
    return {
        "id": taxonomy_id(row["project"], row["name"], str(row["version"])),
        "name": row["name"],
        "version": str(row["version"]),
        "description": body.get("description") or "",
        "tags": body.get("tags") or {},
        "properties": body.get("properties") or {},
        "taxonomyInput": body["taxonomyInput"],
        "taxonomyCategories": body.get("taxonomyCategories") or [],
    }


def _checked(ctx: ApiContext, owner: str, body: dict[str, Any]) -> dict[str, Any]:
    taxonomy_input = checked_input(body.get("taxonomyInput", body.get("taxonomy_input")))
    for key in ("tags", "properties"):
        if body.get(key) is not None and not isinstance(body[key], dict):
            raise ConfigError(f"{key}: expected an object of strings")
    if body.get("description") is not None and not isinstance(body["description"], str):
        raise ConfigError("description: expected a string")
    categories = body.get("taxonomyCategories", body.get("taxonomy_categories"))
    if categories is None:
        tools = target_tools({"target": taxonomy_input["target"]}, ctx.models(), agents_in(ctx.store, owner))
        categories = generate_categories(taxonomy_input, tools)
    return {
        **{k: body[k] for k in FIELDS if body.get(k) is not None},
        "taxonomyInput": taxonomy_input,
        "taxonomyCategories": checked_categories(categories),
    }


@router.put("/evaluationtaxonomies/{name}")
def create_taxonomy(request: Request, name: str, body: JsonBody, owner: Owner) -> JSONResponse:
    ctx = context(request)
    row = ctx.store.save_taxonomy(owner, name, _checked(ctx, owner, body))
    return JSONResponse(taxonomy_object(row), status_code=201 if row["version"] == 1 else 200)


@router.patch("/evaluationtaxonomies/{name}")
def update_taxonomy(request: Request, name: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    """Fields given replace the stored ones; a new ``taxonomyInput`` without categories is written anew."""
    ctx = context(request)
    current = dict(ctx.store.get_taxonomy(owner, name)["body"])
    merged = {**current, **{k: v for k, v in body.items() if k in (*FIELDS, "taxonomyInput", "taxonomyCategories")}}
    if "taxonomyInput" in body and "taxonomyCategories" not in body:
        merged.pop("taxonomyCategories", None)
    return taxonomy_object(ctx.store.save_taxonomy(owner, name, _checked(ctx, owner, merged)))


@router.get("/evaluationtaxonomies/{name}")
def get_taxonomy(request: Request, name: str, owner: Owner) -> dict[str, Any]:
    return taxonomy_object(context(request).store.get_taxonomy(owner, name))


@router.get("/evaluationtaxonomies")
def list_taxonomies(
    request: Request,
    owner: Owner,
    inputName: str | None = None,
    inputType: str | None = None,  # noqa: N803
) -> dict[str, Any]:
    """``inputName`` matches the target's name, ``inputType`` the input's type (``agent``)."""
    found = []
    for row in context(request).store.list_taxonomies(owner):
        given = row["body"]["taxonomyInput"]
        target = given.get("target") or {}
        if inputName is not None and inputName not in (target.get("name"), target.get("model")):
            continue
        if inputType is not None and inputType != given.get("type"):
            continue
        found.append(taxonomy_object(row))
    return {"value": found, "nextLink": None}


@router.delete("/evaluationtaxonomies/{name}", status_code=204)
def delete_taxonomy(request: Request, name: str, owner: Owner) -> None:
    context(request).store.delete_taxonomy(owner, name)
