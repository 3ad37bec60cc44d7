"""The OpenAPI document ``assay serve`` publishes at ``/openapi.json``.

FastAPI describes the routes; two things it cannot know are added here. Request bodies are read
by one bounded JSON parser (``context.json_body``), so the Evals and Files operations take their
request and response bodies from OpenAI's own published spec (``openai-evals.openapi.json``: the Files and
Evals part of github.com/openai/openai-openapi, MIT), matched by path under every prefix, except
the run request: it is generated from the types the server checks it against
(``assay.run.data_sources.RunBody``: OpenAI's data sources, Foundry's and assay's). And the
``{project}`` of ``/api/projects/{project}/...``, read by the auth dependency, is declared as the
path parameter it is.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from assay.run.data_sources import RunBody

SPEC = Path(__file__).with_name("openai-evals.openapi.json")
PREFIXES = ("/api/projects/{project}/openai/v1", "/openai/v1", "/v1", "/openai")
PROJECT = {
    "name": "project",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
    "description": "The project (a key's project when the server has API keys).",
}


@cache
def _openai() -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(SPEC.read_text(encoding="utf-8"))
    return spec


def _shape(path: str) -> str:
    """A path with its parameter names blanked, so ``{item_id}`` matches the spec's ``{output_item_id}``."""
    return re.sub(r"\{[^}]+\}", "{}", path)


def _spec_operation(path: str, method: str) -> dict[str, Any] | None:
    for prefix in PREFIXES:
        if path.startswith(prefix + "/"):
            wanted = _shape(path[len(prefix) :])
            for spec_path, operations in _openai()["paths"].items():
                if _shape(spec_path) == wanted and method in operations:
                    operation: dict[str, Any] = operations[method]
                    return operation
            return None
    return None


def document(app: FastAPI) -> dict[str, Any]:
    doc = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    for path, operations in doc.get("paths", {}).items():
        for method, operation in operations.items():
            if "{project}" in path and not any(p.get("name") == "project" for p in operation.get("parameters", [])):
                operation.setdefault("parameters", []).insert(0, PROJECT)
            spec = _spec_operation(path, method)
            if spec is None:
                continue
            if "requestBody" in spec and "requestBody" not in operation:
                operation["requestBody"] = spec["requestBody"]
            if "200" in spec.get("responses", {}):  # the shape the SDKs parse (conformance: see #12)
                operation.setdefault("responses", {})["200"] = spec["responses"]["200"]
            if method == "post" and _shape(path).endswith("/evals/{}/runs"):
                operation["requestBody"] = _run_body()
        for ending, body in GRADER_BODIES.items():
            if path.endswith(ending) and "post" in operations:
                operations["post"]["requestBody"] = {
                    "required": True,
                    "content": {"application/json": {"schema": body}},
                }
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(_openai()["components"]["schemas"])
    schemas.update(_run_schemas())
    return doc


RUN_BODY = "AssayCreateEvalRunRequest"

_ONE_GRADER = [
    {"$ref": f"#/components/schemas/{name}"}
    for name in ("GraderStringCheck", "GraderTextSimilarity", "GraderPython", "GraderScoreModel", "GraderLabelModel")
]
_MULTI_GRADER = {
    "type": "object",
    "required": ["type", "name", "graders", "calculate_output"],
    "properties": {
        "type": {"type": "string", "enum": ["multi"]},
        "name": {"type": "string"},
        "graders": {"type": "object", "additionalProperties": {"oneOf": _ONE_GRADER}},
        "calculate_output": {"type": "string"},
    },
}
_GRADER = {"oneOf": [*_ONE_GRADER, _MULTI_GRADER]}
GRADER_BODIES = {
    "/fine_tuning/alpha/graders/run": {
        "type": "object",
        "required": ["grader", "model_sample"],
        "properties": {"grader": _GRADER, "model_sample": {"type": "string"}, "item": {"type": "object"}},
    },
    "/fine_tuning/alpha/graders/validate": {
        "type": "object",
        "required": ["grader"],
        "properties": {"grader": _GRADER},
    },
}
"""The grader test's request bodies (``routes_graders``), which OpenAI's Evals and Files spec leaves out:
its grader types (a multi grader's sub-graders among them) and the sample and item."""


@cache
def _run_schemas() -> dict[str, Any]:
    """``RunBody`` and the types it is made of, as components (each named ``Assay...`` beside OpenAI's)."""
    schema = RunBody.model_json_schema(ref_template="#/components/schemas/Assay{model}")
    found: dict[str, Any] = {f"Assay{name}": part for name, part in schema.pop("$defs", {}).items()}
    found[RUN_BODY] = schema
    return found


def _run_body() -> dict[str, Any]:
    schema = {"$ref": f"#/components/schemas/{RUN_BODY}"}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def install(app: FastAPI) -> None:
    """Serve ``document(app)`` at ``/openapi.json`` (built once, on first request)."""
    built: dict[str, Any] = {}

    def openapi() -> dict[str, Any]:
        if not built:
            built.update(document(app))
        return built

    app.openapi = openapi  # type: ignore[method-assign]
