"""string_check: compare a rendered ``input`` with a ``reference`` (eq, ne, like, ilike)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.errors import ConfigError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score, computes_only
from assay.evaluators.inputs import text_input

OPERATIONS: dict[str, Callable[[str, str], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "neq": lambda a, b: a != b,
    "like": lambda a, b: b in a,
    "ilike": lambda a, b: b.casefold() in a.casefold(),
}


def string_check(operation: str = "eq") -> Evaluator:
    check = OPERATIONS.get(operation)
    if check is None:
        raise ConfigError(f"string_check operation {operation!r} is not one of eq, ne, like, ilike")

    def compute(inputs: dict[str, Any]) -> Score:
        matched = check(text_input(inputs, "input"), text_input(inputs, "reference"))
        return Score(1.0 if matched else 0.0, passed=matched)

    return computes_only(compute)


SPEC = EvaluatorSpec(
    name="string_check",
    description="OpenAI grader: 1 when input equals (eq), differs from (ne), or contains (like, ilike) reference.",
    category="graders",
    required_inputs=["input", "reference"],
    metrics=[Metric(name="string_check", type="boolean", min_value=0, max_value=1, threshold=1.0)],
    init_parameters={"operation": {"type": "string", "enum": sorted(OPERATIONS)}},
    factory=string_check,
)
