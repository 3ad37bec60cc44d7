"""Foundry's evaluator catalog REST: ``GET /evaluators``, ``GET/POST /evaluators/{name}/versions``."""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi import APIRouter, Request

from assay.api.context import JsonBody, Owner, context
from assay.errors import ConfigError, NotFoundError, UnknownEvaluatorError
from assay.evaluators.base import EvaluatorSpec
from assay.evaluators.custom import custom_spec
from assay.outbound import check_url

router = APIRouter()


def version_object(spec: EvaluatorSpec) -> dict[str, Any]:
    described = spec.describe()
    return {**described, "id": f"{spec.name}/versions/{spec.version}", "tags": {}, "metadata": {}}


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


@router.post("/evaluators/{name}/versions")
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
    elif kind == "endpoint":
        fields = ("url", "headers", "timeout", "max_retries", "threshold")
        content = json.dumps({key: definition[key] for key in fields if key in definition})
        check_url(str(definition.get("url") or ""), f"evaluator {name}")  # only hosts the operator allows
    else:
        raise ConfigError(
            "definition.type must be rubric (with dimensions), prompt (prompt_text), code (code_text) "
            "or endpoint (url, headers)"
        )
    custom_spec(kind, name, "new", content, f"evaluator {name}")  # refuse a broken definition before storing
    record, _ = context(request).store.add_evaluator(name=name, kind=kind, content=content, project=owner)
    return version_object(custom_spec(kind, name, str(record["version"]), content, name))
