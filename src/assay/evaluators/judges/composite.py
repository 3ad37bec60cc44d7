"""Composite judges: several qualities scored in one judge call, each reported as Foundry does.

``builtin.output_quality`` (fluency, coherence, intent resolution, task adherence, groundedness,
task completion), ``builtin.tool_use_quality`` (tool call accuracy, success, input accuracy,
output utilisation, selection) and ``builtin.quality_grader`` (relevance, abstention, answer
completeness; groundedness and context coverage when there is context). Each component is a
judge definition of its own (the same words as the standalone judge); the call asks for all of
them at once. Per component the result carries ``<c>_score``, ``<c>_result`` (pass/fail),
``<c>_reason`` and ``<c>_status`` (``completed``, or ``not_applicable`` when the data cannot
support it). The primary score is the share of applicable components that pass; the item passes
only when every applicable component passes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assay.errors import ItemError
from assay.evaluators.base import EvaluationLevel, Evaluator, EvaluatorSpec, Metric, Score
from assay.evaluators.judges.agents import (
    INTENT_RESOLUTION,
    TASK_ADHERENCE,
    TASK_COMPLETION,
    TOOL_CALL_ACCURACY,
    TOOL_CALL_SUCCESS,
    TOOL_INPUT_ACCURACY,
    TOOL_OUTPUT_UTILIZATION,
    TOOL_SELECTION,
    binary_judge,
)
from assay.evaluators.judges.judge import LABELS, SYSTEM, CallLog, JudgeDefinition, ask_json, shown_inputs
from assay.evaluators.judges.parse import JudgeAnswerError, answer_object, number_in_range
from assay.evaluators.judges.quality import COHERENCE, FLUENCY, GROUNDEDNESS, RELEVANCE
from assay.llm import Model

NOT_APPLICABLE = "not_applicable"

ABSTENTION = binary_judge(
    name="abstention",
    description="Whether the response declines exactly when it should.",
    instructions=(
        "Decide whether the QUERY should be declined (it asks for something harmful, impossible, outside what the "
        "CONTEXT supports, or that the assistant cannot know) and whether the RESPONSE declines. Score 1 when it "
        "declines a query it should decline, or answers one it should answer; 0 when it refuses an answerable "
        "query or answers one it should have declined."
    ),
    rubric={0: "declined when it should have answered, or answered when it should have declined", 1: "right call"},
    required=("query", "response"),
    optional=("context",),
)
ANSWER_COMPLETENESS = JudgeDefinition(
    name="answer_completeness",
    description="Whether the response covers every part of what the query asks.",
    instructions=(
        "List the distinct things the QUERY asks for, then check which the RESPONSE addresses. Judge coverage only, "
        "not correctness or style."
    ),
    rubric={
        1: "addresses none of the query's parts",
        2: "addresses a minority of the parts",
        3: "addresses the main part but misses others",
        4: "addresses nearly everything, a minor part missing",
        5: "addresses every part of the query",
    },
    required=("query", "response"),
)
CONTEXT_COVERAGE = JudgeDefinition(
    name="context_coverage",
    description="How much of the context relevant to the query the response uses.",
    instructions=(
        "Find the facts in the CONTEXT that matter for answering the QUERY, then judge how many of them the RESPONSE "
        "uses (correctly). Facts in the context that do not bear on the query do not count."
    ),
    rubric={
        1: "uses none of the relevant context",
        2: "uses little of it",
        3: "uses about half of it",
        4: "uses most of it",
        5: "uses all of the relevant context",
    },
    required=("query", "response", "context"),
)


@dataclass(frozen=True)
class CompositeDefinition:
    name: str
    description: str
    components: tuple[JudgeDefinition, ...]
    required: tuple[str, ...]
    optional: tuple[str, ...]
    applies: Callable[[JudgeDefinition, dict[str, str]], bool] = lambda component, shown: True
    """Whether a component can be judged from the data shown (groundedness needs a context)."""
    needs_tool_calls: bool = False

    @property
    def as_judge(self) -> JudgeDefinition:
        """The inputs as one judge would take them (for the shared input handling)."""
        return JudgeDefinition(
            name=self.name,
            description=self.description,
            instructions="",
            rubric={},
            required=self.required,
            optional=self.optional,
            needs_tool_definitions=self.needs_tool_calls,
            levels=("turn", "conversation"),
        )


def _has_context(component: JudgeDefinition, shown: dict[str, str]) -> bool:
    if component.name in ("groundedness", "context_coverage"):
        return bool(shown.get("context")) or "[TOOL_RESULT]" in shown.get("response", "")
    return True


OUTPUT_QUALITY = CompositeDefinition(
    name="output_quality",
    description="Fluency, coherence, intent resolution, task adherence, groundedness and task completion, "
    "in one judge call.",
    components=(FLUENCY, COHERENCE, INTENT_RESOLUTION, TASK_ADHERENCE, GROUNDEDNESS, TASK_COMPLETION),
    required=("query", "response"),
    optional=("context", "tool_definitions"),
    applies=_has_context,
)
TOOL_USE_QUALITY = CompositeDefinition(
    name="tool_use_quality",
    description="Tool call accuracy, success, input accuracy, output utilization and selection, in one judge call.",
    components=(TOOL_CALL_ACCURACY, TOOL_CALL_SUCCESS, TOOL_INPUT_ACCURACY, TOOL_OUTPUT_UTILIZATION, TOOL_SELECTION),
    required=("query", "response", "tool_definitions"),
    optional=("tool_calls",),
    needs_tool_calls=True,
)
QUALITY_GRADER = CompositeDefinition(
    name="quality_grader",
    description="Relevance, abstention and answer completeness; groundedness and context coverage when there "
    "is context. One judge call.",
    components=(RELEVANCE, ABSTENTION, ANSWER_COMPLETENESS, GROUNDEDNESS, CONTEXT_COVERAGE),
    required=("query", "response"),
    optional=("context",),
    applies=_has_context,
)
COMPOSITES = (OUTPUT_QUALITY, TOOL_USE_QUALITY, QUALITY_GRADER)


def _scale(component: JudgeDefinition) -> str:
    return "\n".join(f"    - {key}: {meaning}" for key, meaning in component.rubric.items())


def _prompt(components: list[JudgeDefinition], shown: dict[str, str]) -> list[dict[str, str]]:
    listing = "\n\n".join(
        f"## {c.name}\n{c.instructions}\n  Scale ({c.low}-{c.high}):\n{_scale(c)}" for c in components
    )
    data = "\n\n".join(f"{LABELS.get(name, name.upper())}:\n{text}" for name, text in shown.items())
    user = (
        f"# Properties\nJudge each property below on its own scale, each independently of the others.\n\n"
        f"{listing}\n\n# Data\n{data}\n\n# Answer\nReply with only this JSON object: {_answer_format(components)}\n"
        f'For a property the data cannot support, give {{"status": "{NOT_APPLICABLE}", "reason": "<why>"}} instead.'
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _answer_format(components: list[JudgeDefinition]) -> str:
    fields = ", ".join(f'"{c.name}": {{"reason": "<why>", "score": <{c.low}-{c.high}>}}' for c in components)
    return f"{{{fields}}}"


def composite_factory(definition: CompositeDefinition) -> Callable[..., Evaluator]:
    def factory(model: Model, evaluation_level: EvaluationLevel = "turn", temperature: float = 0.0) -> Evaluator:
        async def evaluate(inputs: dict[str, Any]) -> Score:
            shown = shown_inputs(definition.as_judge, inputs, evaluation_level)
            if isinstance(shown, Score):
                return shown
            asked = [c for c in definition.components if definition.applies(c, shown)]
            answer, spent = await _ask(model, _prompt(asked, shown), asked, temperature)
            return _score(definition, asked, answer, spent)

        return evaluate

    return factory


async def _ask(
    model: Model, prompt: list[dict[str, str]], components: list[JudgeDefinition], temperature: float
) -> tuple[dict[str, Any], CallLog]:
    def read(text: str, spent: CallLog) -> tuple[dict[str, Any], CallLog]:
        answer = answer_object(text)
        missing = [c.name for c in components if not isinstance(answer.get(c.name), dict)]
        if missing:
            raise JudgeAnswerError(f"no verdict for {missing[0]!r}")
        return answer, spent

    hint = _answer_format(components)
    return await ask_json(model, prompt, read, hint, temperature=temperature, max_tokens=300 + 150 * len(components))


def _score(
    definition: CompositeDefinition, asked: list[JudgeDefinition], answer: dict[str, Any], spent: CallLog
) -> Score:
    properties: dict[str, Any] = {"usage": spent.usage(), "raw_answer": spent.raw[-1] if spent.raw else None}
    failing: list[str] = []
    verdicts: list[bool] = []
    for component in definition.components:
        name = component.name
        entry = answer.get(name) if component in asked else None
        if entry is None or str(entry.get("status", "")).lower() in (NOT_APPLICABLE, "skipped"):
            why = "no context to judge against" if entry is None else str(entry.get("reason") or "")
            properties.update(
                {f"{name}_score": None, f"{name}_result": None, f"{name}_reason": why, f"{name}_status": NOT_APPLICABLE}
            )
            continue
        try:
            value = number_in_range(entry.get("score"), component.low, component.high, field=f"{name}.score")
        except JudgeAnswerError as exc:
            raise ItemError(str(exc), details={"usage": spent.usage(), "raw_answers": spent.raw}) from None
        passed = value <= component.threshold if component.direction == "decrease" else value >= component.threshold
        verdicts.append(passed)
        if not passed:
            failing.append(name)
        properties.update(
            {
                f"{name}_score": value,
                f"{name}_result": "pass" if passed else "fail",
                f"{name}_reason": str(entry.get("reason") or ""),
                f"{name}_status": "completed",
                f"{name}_threshold": component.threshold,
            }
        )
    if not verdicts:
        return Score(None, skipped=True, reason="Not applicable: no component applies", properties=properties)
    reason = f"failed: {', '.join(failing)}" if failing else "every applicable component passed"
    return Score(sum(verdicts) / len(verdicts), passed=not failing, reason=reason, properties=properties)


def composite_spec(definition: CompositeDefinition) -> EvaluatorSpec:
    return EvaluatorSpec(
        name=f"builtin.{definition.name}",
        description=definition.description,
        category="tools" if definition.needs_tool_calls else "quality",
        required_inputs=list(definition.required),
        optional_inputs=[*definition.optional, "messages"],
        supported_evaluation_levels=["turn", "conversation"],
        metrics=[Metric(name=definition.name, type="continuous", min_value=0, max_value=1, threshold=1.0)],
        init_parameters={
            "model": {"type": "string"},
            "deployment_name": {"type": "string"},
            "threshold": {"type": "number"},
            "temperature": {"type": "number", "default": 0},
        },
        factory=composite_factory(definition),
    )
