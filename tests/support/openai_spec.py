"""Responses checked against OpenAI's published OpenAPI document (``tests/api/spec/``).

``Recorder`` is an httpx response hook: every response an SDK client receives is matched to its
operation in the document and validated against that operation's response schema. What fails is a
violation unless it is one of the documented ``EXCEPTIONS``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2 as httpx
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

SPEC = json.loads((Path(__file__).parents[1] / "api" / "spec" / "openai-openapi-evals-files.json").read_text())


@dataclass(frozen=True)
class Exception_:
    where: str
    """The failing field, as a regular expression over the instance path (``data/0/error``)."""
    value: Any
    why: str


EXCEPTIONS = (
    Exception_(
        r"^(data/\d+/)?purpose$",
        "evals",
        "`purpose: evals` is one of CreateFileRequest's purposes but missing from OpenAIFile's enum; "
        "the file keeps the purpose it was uploaded with, as OpenAI's service does",
    ),
)


def _operations() -> list[tuple[str, re.Pattern[str], dict[str, Any]]]:
    found = []
    for template, methods in SPEC["paths"].items():
        pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$")
        for method, operation in methods.items():
            found.append((method.upper(), pattern, operation))
    # Literal paths before templated ones: /evals/{id}/runs is not /evals/{id}.
    return sorted(found, key=lambda o: -len(o[1].pattern))


OPERATIONS = _operations()


def operation_for(method: str, path: str) -> dict[str, Any] | None:
    if method == "POST" and path.endswith("/cancel"):
        path = path.removesuffix("/cancel")  # where the SDK sends cancelEvalRun
    return next((op for m, pattern, op in OPERATIONS if m == method and pattern.match(path)), None)


def response_schema(operation: dict[str, Any], status: int) -> dict[str, Any] | None:
    response = operation["responses"].get(str(status))
    if response is None or "content" not in response:
        return None
    content = response["content"]
    schema = (content.get("application/json") or next(iter(content.values())))["schema"]
    # The document's components beside the schema, so its "#/components/..." references resolve.
    return {**schema, "components": SPEC["components"]}


def _path(error: ValidationError) -> str:
    return "/".join(str(p) for p in error.absolute_path)


def _excepted(error: ValidationError) -> bool:
    return any(re.match(e.where, _path(error)) and error.instance == e.value for e in EXCEPTIONS)


def _branch_errors(error: ValidationError) -> list[ValidationError]:
    """For a oneOf/anyOf no branch matched: the errors of the branch meant (its ``type`` matched)."""
    branches: dict[Any, list[ValidationError]] = {}
    for cause in error.context or []:
        branches.setdefault(cause.relative_schema_path[0], []).append(cause)
    meant = [
        errors
        for errors in branches.values()
        if not any(e.validator in ("enum", "const") and list(e.relative_path) == ["type"] for e in errors)
    ]
    return min(meant or list(branches.values()) or [[error]], key=len)


def violations(schema: dict[str, Any], body: Any) -> list[str]:
    found = []
    pending = list(Draft202012Validator(schema).iter_errors(body))
    while pending:
        error = pending.pop()
        if _excepted(error):
            continue
        if error.validator in ("oneOf", "anyOf") and error.context:
            pending.extend(e for e in _branch_errors(error) if e is not error)
            continue
        found.append(f"{_path(error) or '<body>'}: {error.message[:300]}")
    return found


@dataclass
class Recorder:
    """Every response seen: (operation id, status, violations)."""

    seen: list[tuple[str, int, list[str]]] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)

    def __call__(self, response: httpx.Response) -> None:
        response.read()
        path = re.sub(r"^.*?/v1", "", response.request.url.path)
        operation = operation_for(response.request.method, path)
        if operation is None:
            self.unmatched.append(f"{response.request.method} {path}")
            return
        schema = response_schema(operation, response.status_code)
        if schema is None:
            problems = [f"status {response.status_code} is not one the spec gives for {operation['operationId']}"]
        elif operation["operationId"] == "downloadFile":
            problems = []  # the body is the file's bytes; the spec calls it a string
        else:
            problems = violations(schema, response.json())
        self.seen.append((operation["operationId"], response.status_code, problems))

    def operations(self) -> set[str]:
        return {op for op, _, _ in self.seen}

    def problems(self) -> list[str]:
        return [f"{op} ({status}): {p}" for op, status, problems in self.seen for p in problems]
