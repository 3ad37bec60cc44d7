"""task_navigation_efficiency: did the agent call the expected tools, in the expected way?

Same semantics as azure-ai-evaluation's ``_TaskNavigationEfficiencyEvaluator``: the score is 1
or 0 by matching mode, and tool-step precision, recall and F1 are reported in properties.
``ground_truth`` is a list of tool names, or ``[names, {tool: {param: value}}]`` to also match
parameters (JSON has no tuples; the peer's Python tuple arrives as a two-element array).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Hashable
from typing import Any

from assay.errors import ConfigError, ItemError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score
from assay.evaluators.inputs import json_input
from assay.messages import MessageFormatError, normalize, tool_calls

Step = Hashable
MODES = {
    "exact_match": "exact_match",
    "exact": "exact_match",
    "in_order_match": "in_order_match",
    "in_order": "in_order_match",
    "any_order_match": "any_order_match",
    "any_order": "any_order_match",
}


def _exact(agent: list[Step], expected: list[Step]) -> bool:
    return agent == expected


def _in_order(agent: list[Step], expected: list[Step]) -> bool:
    position = 0
    for step in agent:
        if position < len(expected) and step == expected[position]:
            position += 1
    return position == len(expected)


def _any_order(agent: list[Step], expected: list[Step]) -> bool:
    have, need = Counter(agent), Counter(expected)
    return all(have[step] >= count for step, count in need.items())


MATCHERS: dict[str, Callable[[list[Step], list[Step]], bool]] = {
    "exact_match": _exact,
    "in_order_match": _in_order,
    "any_order_match": _any_order,
}


def _param_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _params_key(params: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), _param_text(v)) for k, v in params.items()))


def _expected(ground_truth: Any) -> tuple[list[str], dict[str, Any] | None]:
    if not ground_truth:
        raise ItemError("ground_truth cannot be empty: give the expected tool names")
    if (
        isinstance(ground_truth, list)
        and len(ground_truth) == 2
        and isinstance(ground_truth[0], list)
        and isinstance(ground_truth[1], dict)
    ):
        names, params = ground_truth
        if not all(isinstance(n, str) for n in names):
            raise ItemError("ground_truth[0] must be a list of tool names")
        if not all(isinstance(p, dict) for p in params.values()):
            raise ItemError("ground_truth[1] must map each tool name to an object of parameters")
        return [n.strip() for n in names], params
    if isinstance(ground_truth, list) and all(isinstance(n, str) for n in ground_truth):
        return [n.strip() for n in ground_truth], None
    raise ItemError("ground_truth must be a list of tool names, or [names, {tool: {param: value}}]")


def _precision_recall_f1(agent: list[Step], expected: list[Step]) -> dict[str, float]:
    if not agent:
        return {"precision_score": 0.0, "recall_score": 0.0, "f1_score": 0.0}
    have, need = Counter(agent), Counter(expected)
    true_pos = sum((have & need).values())
    precision = true_pos / sum(have.values())
    recall = true_pos / sum(need.values()) if need else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision_score": precision, "recall_score": recall, "f1_score": f1}


def task_navigation_efficiency(matching_mode: str = "exact_match") -> Evaluator:
    mode = MODES.get(str(matching_mode))
    if mode is None:
        raise ConfigError(f"matching_mode {matching_mode!r} is not one of exact_match, in_order_match, any_order_match")
    matcher = MATCHERS[mode]

    async def evaluate(inputs: dict[str, Any]) -> Score:
        response = json_input(inputs, _either(inputs, "response", "actions"))
        names, params = _expected(json_input(inputs, _either(inputs, "ground_truth", "expected_actions")))
        try:
            calls = tool_calls(normalize(response, default_role="assistant", where="response"))
        except MessageFormatError as exc:
            raise ItemError(str(exc)) from None
        if params is None:
            agent: list[Step] = [call.name.strip() for call in calls]
            expected: list[Step] = list(names)
        else:
            args = [call.arguments if isinstance(call.arguments, dict) else {} for call in calls]
            agent = [(call.name.strip(), _params_key(a)) for call, a in zip(calls, args, strict=True)]
            expected = [(name, _params_key(params.get(name, {}))) for name in names]
        matched = matcher(agent, expected)
        properties: dict[str, Any] = dict(_precision_recall_f1(agent, expected))
        properties["matching_mode"] = mode
        return Score(float(matched), passed=matched, properties=properties)

    return evaluate


def _either(inputs: dict[str, Any], name: str, foundry_name: str) -> str:
    """Foundry's catalog names the inputs ``actions`` and ``expected_actions``; the SDK's evaluator
    ``response`` and ``ground_truth``. Either is taken; with neither, the SDK's name is reported missing."""
    return foundry_name if inputs.get(name) is None and inputs.get(foundry_name) is not None else name


SPEC = EvaluatorSpec(
    name="builtin.task_navigation_efficiency",
    description="Whether the agent's tool calls match the expected sequence (exact, in order, or any order).",
    category="agents",
    # response and ground_truth as azure-ai-evaluation names them, or actions and expected_actions as
    # Foundry's catalog does: one of each pair is needed, so none is required on its own.
    optional_inputs=["response", "ground_truth", "actions", "expected_actions"],
    metrics=[Metric(name="task_navigation_efficiency", type="boolean", min_value=0, max_value=1, threshold=1.0)],
    init_parameters={
        "matching_mode": {"type": "string", "enum": sorted(set(MODES.values())), "default": "exact_match"}
    },
    factory=task_navigation_efficiency,
)
