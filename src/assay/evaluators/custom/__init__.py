"""Custom evaluators from files: rubrics (``.json``), prompts (``.md``, ``.txt``, ``.prompty``), code
(``.py``), and endpoints (``--kind endpoint``: a JSON file with the URL an HTTP service scores at)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from assay.errors import ConfigError
from assay.evaluators.base import EvaluatorSpec
from assay.evaluators.custom.code import code_spec
from assay.evaluators.custom.endpoint import endpoint_spec
from assay.evaluators.custom.prompt import prompt_spec
from assay.evaluators.custom.rubric import parse_dimensions, rubric_spec

Kind = Literal["rubric", "prompt", "code", "endpoint"]
SUFFIXES: dict[str, Kind] = {".json": "rubric", ".py": "code", ".md": "prompt", ".txt": "prompt", ".prompty": "prompt"}


def kind_for(path: Path) -> Kind:
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ConfigError(
            f"{path}: cannot tell the evaluator kind from the suffix",
            hint="use .json (rubric), .md/.txt (prompt) or .py (code), or pass --kind",
        )
    return kind


def custom_spec(kind: Kind, name: str, version: str, content: str, where: str) -> EvaluatorSpec:
    # ``given``: the definition as Foundry's EvaluatorVersion gives it back, its type and what it was made from.
    given: dict[str, Any] = {"type": kind}
    if kind == "rubric":
        dimensions = parse_dimensions(content, where)
        spec = rubric_spec(name, version, dimensions)
        given["dimensions"] = [d.model_dump(exclude_none=True) for d in dimensions]
    elif kind == "prompt":
        spec = prompt_spec(name, version, content, where)
        given["prompt_text"] = content
    elif kind == "endpoint":
        spec = endpoint_spec(name, version, content, where)
        given |= {k: v for k, v in json.loads(content).items() if k != "headers"}  # headers may carry its key
    else:
        spec = code_spec(name, version, content, where)
        given["code_text"] = content
    return spec.model_copy(update={"given_definition": given})


def spec_from_file(path: Path, name: str, version: str = "local", kind: Kind | None = None) -> EvaluatorSpec:
    if not path.is_file():
        raise ConfigError(f"evaluator file not found: {path}")
    return custom_spec(kind or kind_for(path), name, version, path.read_text(encoding="utf-8"), str(path))


__all__ = ["Kind", "custom_spec", "kind_for", "spec_from_file"]
