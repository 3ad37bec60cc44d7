"""What an evaluator is: an async callable from inputs to a ``Score``, described by a spec.

An evaluator is made by a factory from its initialization parameters (STYLE.md habit 2):

    def f1_score() -> Evaluator:
        async def score(inputs: dict[str, Any]) -> Score:
            ...
        return score

The ``EvaluatorSpec`` is the catalog entry: name, version, inputs, levels and metrics. The run
engine turns a ``Score`` into a ``Result`` using the metric's threshold and direction.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.results.stored import EvaluationLevel as EvaluationLevel

Direction = Literal["increase", "decrease", "neutral"]


@dataclass(slots=True)
class Score:
    """An evaluator's verdict on one item, before thresholds are applied."""

    value: float | None
    """The primary metric on the evaluator's native scale; ``None`` when not applicable."""
    passed: bool | None = None
    """Set by evaluators that decide pass/fail themselves (graders, binary checks)."""
    reason: str | None = None
    label: str | None = None
    """A descriptive label (a severity such as "Low"); pass/fail is the result's ``label``."""
    properties: dict[str, Any] = field(default_factory=dict)
    skipped: bool = False
    """True when the evaluator does not apply to this item (an intermediate agent step)."""


Evaluator = Callable[[dict[str, Any]], Awaitable[Score]]
EvaluatorFactory = Callable[..., Evaluator]


Computation = Callable[[dict[str, Any]], Score]
"""An evaluator that only computes, as the plain function it is (``computes_only``)."""


def computes_only(evaluate: Computation | Evaluator) -> Evaluator:
    """Mark a built-in evaluator as pure computation: it awaits nothing, holds nothing a fork could
    break (a connection, a GPU) and keeps no state between items. A run whose criteria all are
    spreads over this machine's cores by itself (``assay.run.processes``).

    Given as a plain function (the built-in ones are), it is wrapped in a coroutine function for every
    caller but a run that only computes, which calls the function itself (``computation_of``): once
    per item and criterion, driving a coroutine cost about as much as building the item's inputs."""
    if inspect.iscoroutinefunction(evaluate):
        evaluate.computes_only = True  # type: ignore[attr-defined]
        return evaluate
    compute = typing.cast(Computation, evaluate)

    async def computed(inputs: dict[str, Any]) -> Score:
        return compute(inputs)

    computed.computes_only = True  # type: ignore[attr-defined]
    computed.computation = compute  # type: ignore[attr-defined]
    return computed


def is_computes_only(evaluate: Evaluator) -> bool:
    return getattr(evaluate, "computes_only", False) is True


def computation_of(evaluate: Evaluator) -> Computation | None:
    """The plain function of an evaluator made by ``computes_only``; None for any other."""
    return getattr(evaluate, "computation", None) if is_computes_only(evaluate) else None


def judges_filtered(evaluate: Evaluator) -> Evaluator:
    """Mark an evaluator that judges what a provider's content filter did (promptfoo's
    ``guardrails``): a sample the filter stopped reaches it, where other criteria fail the item."""
    evaluate.judges_filtered = True  # type: ignore[attr-defined]
    return evaluate


def is_judging_filtered(evaluate: Evaluator) -> bool:
    return getattr(evaluate, "judges_filtered", False) is True


class Metric(BaseModel):
    """One number an evaluator reports, with what counts as good."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: Literal["ordinal", "continuous", "boolean"] = "continuous"
    desirable_direction: Direction = "increase"
    min_value: float = 0.0
    max_value: float = 1.0
    threshold: float | None = None
    """Default pass mark: ``score >= threshold`` when higher is better, ``<=`` when lower is."""


class EvaluatorSpec(BaseModel):
    """A catalog entry: everything needed to describe, check and build an evaluator."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    """Catalog name such as ``builtin.f1_score``."""
    version: str = "1"
    display_name: str = ""
    description: str = ""
    category: str = "quality"
    evaluator_type: Literal["builtin", "custom"] = "builtin"
    required_inputs: list[str] = Field(default_factory=list)
    optional_inputs: list[str] = Field(default_factory=list)
    one_of_inputs: list[list[str]] = Field(default_factory=list)
    """Alternative input sets, one of which must be present (e.g. query+response or messages)."""
    supported_evaluation_levels: list[EvaluationLevel] = Field(default_factory=lambda: list[EvaluationLevel](["turn"]))
    takes_whole_item: bool = False
    """It reads the whole ``item`` and ``sample`` (a python grader's ``grade(sample, item)``), not named inputs."""
    metrics: list[Metric]
    """The primary metric first."""
    init_parameters: dict[str, Any] = Field(default_factory=dict)
    """Initialization parameters as a JSON Schema ``properties`` map."""
    factory: EvaluatorFactory = Field(exclude=True)
    given_definition: dict[str, Any] = Field(default_factory=dict)
    """A custom evaluator's definition as it was given (``type`` and its rubric dimensions, prompt or
    code), shown in its ``definition`` beside the schema and metrics."""
    details: dict[str, Any] = Field(default_factory=dict)
    """What the catalog API was told of a custom evaluator beside its definition (``display_name``,
    ``description``, ``tags``, ``metadata``, ``categories``): shown, never used to evaluate."""

    @property
    def primary(self) -> Metric:
        return self.metrics[0]

    @property
    def short_name(self) -> str:
        return self.name.split(".", 1)[1] if self.name.startswith("builtin.") else self.name

    @property
    def inputs(self) -> list[str]:
        return [*self.required_inputs, *self.optional_inputs]

    @property
    def uses_model(self) -> bool:
        """Whether it calls a model (its factory takes one): waits on the network rather than the CPU."""
        return "model" in inspect.signature(self.factory).parameters

    def describe(self) -> dict[str, Any]:
        """The Foundry ``EvaluatorVersion`` shape, for the CLI and the catalog API."""
        given = self.details
        return {
            "name": self.name,
            "version": self.version,
            "display_name": given.get("display_name") or self.display_name or self.short_name,
            "description": given.get("description") or self.description,
            "evaluator_type": self.evaluator_type,
            "categories": given.get("categories") or [self.category],
            "tags": given.get("tags") or {},
            "metadata": given.get("metadata") or {},
            "supported_evaluation_levels": list(self.supported_evaluation_levels),
            "definition": {
                **self.given_definition,
                "init_parameters": {"type": "object", "properties": self.init_parameters},
                "data_schema": {
                    "type": "object",
                    "properties": {name: {} for name in self.inputs},
                    "required": list(self.required_inputs),
                },
                "metrics": {
                    m.name: {
                        "type": m.type,
                        "desirable_direction": m.desirable_direction,
                        "min_value": m.min_value,
                        "max_value": m.max_value,
                        "threshold": m.threshold,
                        "is_primary": index == 0,
                    }
                    for index, m in enumerate(self.metrics)
                },
            },
        }
