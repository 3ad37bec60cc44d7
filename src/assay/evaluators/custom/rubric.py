"""Rubric evaluators from azd's ``rubric_dimensions.json``.

    [{"id": "accuracy", "description": "...", "weight": 8, "always_applicable": true}, ...]

(azd writes the bare array; ``{"dimensions": [...]}`` and an evaluator's ``{"definition":
{"dimensions": [...]}}`` are read too, and Foundry's ``dimension_id`` for ``id``; a weight is a
number above 0, at most 10.)

The judge scores each dimension 1–5, or marks it not applicable (never for ``always_applicable``
ones). The score is the weighted mean of applicable dimensions normalised to 0–1 as (mean − 1) / 4;
it passes at ``pass_threshold`` (0.5) unless any dimension scored 1, which fails the item.
Per-dimension results go to ``properties.dimension_scores``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import AliasChoices, BaseModel, Field, ValidationError

from assay.errors import ConfigError, ItemError
from assay.evaluators.base import EvaluationLevel, Evaluator, EvaluatorSpec, Metric, Score
from assay.evaluators.judges import render
from assay.evaluators.judges.judge import SYSTEM, CallLog, ask_json
from assay.evaluators.judges.parse import JudgeAnswerError, answer_object, number_in_range
from assay.llm import Model
from assay.messages import normalize, split_turn, to_dicts

SNAKE_CASE = re.compile(r"^[a-z][a-z0-9_]*$")
SHOWN = ("query", "response", "ground_truth", "context", "tool_definitions")


class Dimension(BaseModel):
    id: str = Field(validation_alias=AliasChoices("id", "dimension_id"))
    """azd writes ``id``; Foundry's rubric evaluators ``dimension_id`` (stable across versions)."""
    description: str = Field(min_length=1)
    weight: float = Field(gt=0, le=10)
    always_applicable: bool = False


def parse_dimensions(text: str, where: str) -> list[Dimension]:
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{where}: not valid JSON ({exc})") from None
    if isinstance(raw, dict):  # the wrapped forms: an evaluator's definition, or {dimensions: [...]}
        wrapper: dict[str, Any] = raw["definition"] if isinstance(raw.get("definition"), dict) else raw
        raw = wrapper.get("dimensions")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f'{where}: expected a non-empty JSON array of dimensions (or {{"dimensions": [...]}})')
    dimensions = []
    for index, entry in enumerate(raw):
        try:
            dimension = Dimension.model_validate(entry)
        except ValidationError as exc:
            problem = exc.errors()[0]
            field = ".".join(str(p) for p in problem["loc"])
            raise ConfigError(f"{where}: dimension [{index}].{field}: {problem['msg']}") from None
        if not SNAKE_CASE.match(dimension.id):
            raise ConfigError(f"{where}: dimension [{index}].id {dimension.id!r} must be snake_case")
        dimensions.append(dimension)
    ids = [d.id for d in dimensions]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{where}: dimension ids must be unique")
    return dimensions


def _prompt(dimensions: list[Dimension], shown: dict[str, str]) -> list[dict[str, str]]:
    listing = "\n".join(
        f"- {d.id} (weight {d.weight:g}{', always applicable' if d.always_applicable else ''}): {d.description}"
        for d in dimensions
    )
    data = "\n\n".join(f"{name.replace('_', ' ').upper()}:\n{text}" for name, text in shown.items())
    user = (
        "# Rubric\nScore the RESPONSE on each dimension from 1 (fails it badly) to 5 (fully meets it). When a "
        "dimension does not apply to this item, give null, except for dimensions marked always applicable.\n"
        f"{listing}\n\n# Data\n{data}\n\n# Answer\nReply with only this JSON object: "
        '{"dimensions": [{"id": "<id>", "score": <1-5 or null>, "reason": "<why>"}], "reason": "<overall>"}'
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def rubric_factory(dimensions: list[Dimension]) -> Any:
    def rubric(model: Model, evaluation_level: EvaluationLevel = "turn", pass_threshold: float = 0.5) -> Evaluator:
        async def evaluate(inputs: dict[str, Any]) -> Score:
            values = dict(inputs)
            if values.get("messages") is not None and values.get("response") is None:
                if evaluation_level == "conversation":
                    values["response"] = values.pop("messages")
                else:
                    query, response = split_turn(normalize(values.pop("messages"), where="messages"))
                    values["query"], values["response"] = to_dicts(query), to_dicts(response)
            shown = {n: render.value_text(n, values[n]) for n in SHOWN if values.get(n) is not None}
            answer, spent = await _ask(model, _prompt(dimensions, shown), [d.id for d in dimensions])
            return _score(dimensions, answer, spent, pass_threshold)

        return evaluate

    return rubric


async def _ask(model: Model, prompt: list[dict[str, str]], ids: list[str]) -> tuple[dict[str, Any], CallLog]:
    def read(text: str, spent: CallLog) -> tuple[dict[str, Any], CallLog]:
        answer = answer_object(text)
        if not isinstance(answer.get("dimensions"), list):
            raise JudgeAnswerError("'dimensions' is missing")
        return answer, spent

    hint = '{"dimensions": [{"id": "<id>", "score": <1-5 or null>, "reason": "<why>"}], "reason": "<overall>"}'
    return await ask_json(
        model, prompt, read, hint, temperature=0, max_tokens=400 + 120 * len(ids), response_format=_shape(ids)
    )


def _shape(ids: list[str]) -> dict[str, Any]:
    """The answer as a strict JSON schema: a score (1-5, or null: not applicable) per dimension."""
    entry = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "enum": ids},
            "score": {"type": ["integer", "null"], "minimum": 1, "maximum": 5},
            "reason": {"type": "string"},
        },
        "required": ["id", "score", "reason"],
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {"dimensions": {"type": "array", "items": entry}, "reason": {"type": "string"}},
        "required": ["dimensions", "reason"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "rubric", "schema": schema, "strict": True}}


def _score(dimensions: list[Dimension], answer: dict[str, Any], spent: CallLog, pass_threshold: float) -> Score:
    given = {str(d.get("id")): d for d in answer["dimensions"] if isinstance(d, dict)}
    scores: list[dict[str, Any]] = []
    for dimension in dimensions:
        entry = given.get(dimension.id, {})
        raw = entry.get("score")
        is_applicable = raw is not None or dimension.always_applicable
        if raw is None and dimension.always_applicable:
            raise ItemError(
                f"the judge gave no score for always-applicable dimension {dimension.id!r}",
                details={"usage": spent.usage(), "raw_answers": spent.raw},
            )
        try:
            value = number_in_range(raw, 1, 5, field=dimension.id) if raw is not None else None
        except JudgeAnswerError as exc:
            raise ItemError(str(exc), details={"usage": spent.usage(), "raw_answers": spent.raw}) from None
        scores.append(
            {
                "id": dimension.id,
                "dimension_id": dimension.id,
                "score": value,
                "applicable": is_applicable,
                "weight": dimension.weight,
                "reason": str(entry.get("reason") or ""),
            }
        )
    applicable = [s for s in scores if s["applicable"]]
    properties = {"dimension_scores": scores, "usage": spent.usage()}
    if not applicable:
        return Score(None, skipped=True, reason="Not applicable: no dimension applies", properties=properties)
    mean = sum(s["score"] * s["weight"] for s in applicable) / sum(s["weight"] for s in applicable)
    value = (mean - 1) / 4
    floored = [s["id"] for s in applicable if s["score"] == 1]
    passed = value >= pass_threshold and not floored
    reason = str(answer.get("reason") or "")
    if floored:
        reason = f"{reason} (failed: {', '.join(floored)} scored 1)".strip()
    return Score(value, passed=passed, reason=reason, properties=properties)


def rubric_spec(name: str, version: str, dimensions: list[Dimension]) -> EvaluatorSpec:
    return EvaluatorSpec(
        name=name,
        version=version,
        evaluator_type="custom",
        category="rubric",
        description=f"Rubric of {len(dimensions)} dimensions: {', '.join(d.id for d in dimensions)}.",
        required_inputs=["query", "response"],
        optional_inputs=["ground_truth", "context", "tool_definitions", "messages"],
        supported_evaluation_levels=["conversation", "turn"],
        metrics=[Metric(name=name.split(".")[-1], type="continuous", min_value=0, max_value=1, threshold=0.5)],
        init_parameters={"model": {"type": "string"}, "pass_threshold": {"type": "number", "default": 0.5}},
        factory=rubric_factory(dimensions),
    )
