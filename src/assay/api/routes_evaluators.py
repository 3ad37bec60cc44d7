"""Foundry's evaluator catalog REST: ``GET /evaluators``, ``GET/POST /evaluators/{name}/versions``,
``GET/PATCH/DELETE /evaluators/{name}/versions/{version}``. A custom evaluator's definition is
immutable (a new one is a new version); its display name, description, tags, metadata and
categories are changed in place. Built-in evaluators are read-only."""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi import APIRouter, Request

from assay.api.context import JsonBody, Owner, context
from assay.errors import ConfigError, NotFoundError, UnknownEvaluatorError
from assay.evaluators.base import EvaluatorSpec
from assay.evaluators.custom import Kind, custom_spec
from assay.outbound import check_url
from assay.sandbox import Sandbox
from assay.store import Store

router = APIRouter()


CATEGORIES = ("quality", "safety", "agents")


def version_object(spec: EvaluatorSpec) -> dict[str, Any]:
    return {**spec.describe(), "id": f"{spec.name}/versions/{spec.version}"}


def details_of(body: dict[str, Any]) -> dict[str, Any]:
    """The fields of an ``EvaluatorVersion`` a create or an update may set beside the definition."""
    details: dict[str, Any] = {}
    for key in ("display_name", "description"):
        if body.get(key) is not None:
            if not isinstance(body[key], str):
                raise ConfigError(f"{key}: expected a string")
            details[key] = body[key]
    for key in ("tags", "metadata"):
        if body.get(key) is not None:
            value = body[key]
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                raise ConfigError(f"{key}: expected an object of strings")
            details[key] = value
    if body.get("categories") is not None:
        categories = body["categories"]
        if not isinstance(categories, list) or not categories or any(c not in CATEGORIES for c in categories):
            raise ConfigError(f"categories: expected a non-empty list of {', '.join(CATEGORIES)}")
        details["categories"] = categories
    return details


def _check_custom(request: Request, owner: str, name: str, version: str) -> None:
    """Refuse a change to a built-in evaluator or to a version the project did not store."""
    try:
        spec = context(request).catalog(owner).get(name, version)
    except UnknownEvaluatorError as exc:
        raise NotFoundError(exc.message) from None
    if spec.evaluator_type == "builtin":
        raise ConfigError(f"{name} is a built-in evaluator: it cannot be changed or deleted")
    if not version.isdigit():  # a file's evaluator of a local run, never stored
        raise NotFoundError(f"no stored version {version!r} of evaluator {name}")


@router.get("/evaluators")
def list_evaluators(
    request: Request, owner: Owner, type: Literal["builtin", "custom", "all"] = "all"
) -> dict[str, Any]:  # noqa: A002
    specs = context(request).catalog(owner).specs()
    chosen = [s for s in specs if type == "all" or s.evaluator_type == type]
    return {"value": [version_object(s) for s in chosen], "nextLink": None}


@router.get("/evaluators/{name}/versions")
def list_versions(request: Request, name: str, owner: Owner) -> dict[str, Any]:
    versions = context(request).catalog(owner).versions(name)
    if not versions:
        raise NotFoundError(f"No evaluator named '{name}'.")
    return {"value": [version_object(s) for s in versions], "nextLink": None}


@router.get("/evaluators/{name}/versions/{version}")
def get_version(request: Request, name: str, version: str, owner: Owner) -> dict[str, Any]:
    try:
        return version_object(context(request).catalog(owner).get(name, version))
    except UnknownEvaluatorError as exc:
        raise NotFoundError(exc.message) from None


@router.post("/evaluators/{name}/versions", status_code=201)
def create_version(request: Request, name: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    """A custom evaluator from its definition: rubric ``dimensions``, ``prompt_text``, ``code_text``, or an
    endpoint's ``url`` and ``headers``."""
    definition = body.get("definition") or {}
    kind = definition.get("type")
    if kind == "rubric":
        content = json.dumps(definition.get("dimensions"))
    elif kind == "prompt":
        content = str(definition.get("prompt_text") or "")
    elif kind == "code":
        content = str(definition.get("code_text") or "")
        Sandbox.configured().check(f"code evaluator {name!r}")  # refused here, not at each item of a run
    elif kind == "endpoint":
        fields = ("url", "headers", "timeout", "max_retries", "threshold")
        content = json.dumps({key: definition[key] for key in fields if key in definition})
        check_url(str(definition.get("url") or ""), f"evaluator {name}")  # only hosts the operator allows
    else:
        raise ConfigError(
            "definition.type must be rubric (with dimensions), prompt (prompt_text), code (code_text) "
            "or endpoint (url, headers)"
        )
    return save_custom(context(request).store, owner, name, kind, content, details_of(body))


def save_custom(
    store: Store, project: str, name: str, kind: Kind, content: str, details: dict[str, Any]
) -> dict[str, Any]:
    """Store the next version of custom evaluator ``name``; its ``EvaluatorVersion``. A broken
    definition is refused before anything is stored."""
    custom_spec(kind, name, "new", content, f"evaluator {name}")
    record, _ = store.add_evaluator(name=name, kind=kind, content=content, project=project, details=details or None)
    made = custom_spec(kind, name, str(record["version"]), content, name)
    return version_object(made.model_copy(update={"details": record.get("details") or {}}))


@router.patch("/evaluators/{name}/versions/{version}")
def update_version(request: Request, name: str, version: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    """Change a version's display name, description, tags, metadata or categories. Its definition
    and type are set when it is created, as in Foundry's model: given here (the SDK sends the whole
    ``EvaluatorVersion``), they are left as they are; a new definition is a new version."""
    _check_custom(request, owner, name, version)
    context(request).store.update_evaluator(owner, name, int(version), details_of(body))
    return get_version(request, name, version, owner)


@router.delete("/evaluators/{name}/versions/{version}", status_code=204)
def delete_version(request: Request, name: str, version: str, owner: Owner) -> None:
    _check_custom(request, owner, name, version)
    context(request).store.delete_evaluator(owner, name, int(version))
