"""OpenAI's ``multi`` grader: several graders on the same item, combined by ``calculate_output``,
a formula over their scores (``graders`` maps each name used in the formula to a grader).

    {type: multi, name, graders: {similar: {type: text_similarity, ...}, exact: {type: string_check, ...}},
     calculate_output: "0.7 * similar + 0.3 * exact", pass_threshold?: 0.5}

The sub-graders are bound like any criterion (``assay.run.criteria``); one that errors or is
skipped on an item makes the multi grader's result for that item an error that names it. Without
``pass_threshold`` there is no pass mark: the value is a score with no verdict, as with the python
grader (its criterion's pass rate says "no pass mark"). A sub-grader needs no ``pass_threshold``
(OpenAI's grader types inside ``multi`` have none).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from assay.errors import ItemError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score
from assay.evaluators.graders.formula import Formula
from assay.results import Result

SubGrader = Callable[[dict[str, Any], dict[str, Any] | None], Awaitable[Result]]


def multi_grader(graders: dict[str, SubGrader], formula: Formula, pass_threshold: float | None = None) -> Evaluator:
    async def evaluate(inputs: dict[str, Any]) -> Score:
        item, sample = inputs.get("item") or {}, inputs.get("sample")
        scores: dict[str, float] = {}
        for key, grader in graders.items():
            result = await grader(item, sample)
            if result.status != "completed" or result.score is None:
                raise ItemError(f"grader {key!r} gave no score: {result.reason or result.status}")
            scores[key] = result.score
        value = formula.evaluate(scores)
        passed = None if pass_threshold is None else value >= pass_threshold
        return Score(value, passed=passed, properties={"graders": scores, "calculate_output": formula.text})

    return evaluate


SPEC = EvaluatorSpec(
    name="multi",
    description="OpenAI grader: graders combined by an arithmetic calculate_output formula.",
    category="graders",
    required_inputs=["item"],
    optional_inputs=["sample"],
    metrics=[Metric(name="multi", type="continuous", threshold=None)],
    init_parameters={
        "graders": {"type": "object"},
        "calculate_output": {"type": "string"},
        "pass_threshold": {"type": "number"},
    },
    factory=multi_grader,
)
