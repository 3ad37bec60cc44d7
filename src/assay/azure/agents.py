"""The peer's model-free agent class: task navigation efficiency (did the agent call the expected
tools, in the expected way), importable where the peer keeps it
(``azure.ai.evaluation._evaluators._task_navigation_efficiency``)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from assay.azure.evaluators import EvaluatorBase
from assay.azure.exceptions import ErrorTarget, user_error
from assay.results import Result


class _TaskNavigationEfficiencyMatchingMode(str, Enum):  # noqa: N801, UP042 - the peer's (private) name and kind
    EXACT_MATCH = "exact_match"
    """The agent's tool calls are exactly the expected ones, in order, nothing more."""
    IN_ORDER_MATCH = "in_order_match"
    """The expected calls appear in order; extra calls are allowed."""
    ANY_ORDER_MATCH = "any_order_match"
    """The expected calls appear, as often as expected, in any order; extra calls are allowed."""


class _TaskNavigationEfficiencyEvaluator(EvaluatorBase):  # noqa: N801 - the peer's (private) name
    """``_TaskNavigationEfficiencyEvaluator(matching_mode=...)(response=messages, ground_truth=names)``:
    passed (score 1) or not by the matching mode; precision, recall and F1 of the tool steps in
    ``task_navigation_efficiency_properties``. ``ground_truth`` may be ``(names, {tool: {param: value}})``
    to match parameters too; either input may arrive as a JSON string (the catalog's evaluator reads it)."""

    builtin, key = "builtin.task_navigation_efficiency", "task_navigation_efficiency"
    target = ErrorTarget.TASK_NAVIGATION_EFFICIENCY_EVALUATOR

    def __init__(
        self,
        *,
        matching_mode: str | _TaskNavigationEfficiencyMatchingMode = _TaskNavigationEfficiencyMatchingMode.EXACT_MATCH,
    ) -> None:
        modes = [mode.value for mode in _TaskNavigationEfficiencyMatchingMode]
        if not isinstance(matching_mode, str):
            raise user_error(
                f"matching_mode must be a string with one of {modes} or _TaskNavigationEfficiencyMatchingMode enum, "
                f"got {type(matching_mode)}",
                self.target,
            )
        try:
            self.matching_mode = _TaskNavigationEfficiencyMatchingMode(matching_mode)
        except ValueError:
            raise user_error(f"matching_mode must be one of {modes}, got '{matching_mode}'", self.target) from None
        super().__init__({"matching_mode": self.matching_mode.value}, threshold=1.0)

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        # Foundry's catalog names the inputs actions and expected_actions; either name is taken.
        for name, alias in (("response", "actions"), ("ground_truth", "expected_actions")):
            if kwargs.get(name) is None and kwargs.get(alias) is not None:
                kwargs[name] = kwargs.pop(alias)
            if kwargs.get(name) is None:
                raise user_error(f"{name.capitalize()} is a required input and cannot be None.", self.target)
        if isinstance(kwargs["ground_truth"], tuple):  # (names, parameters): JSON's form is a two-element list
            kwargs["ground_truth"] = list(kwargs["ground_truth"])
        return super().__call__(*args, **kwargs)

    def peer_properties(self, result: Result, inputs: dict[str, Any]) -> Any:
        found = result.properties or {}
        return {name: float(found.get(name, 0.0)) for name in ("precision_score", "recall_score", "f1_score")}
