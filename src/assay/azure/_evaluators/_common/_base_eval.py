"""The peer's ``EvaluatorBase``, for evaluators its users wrote by subclassing it.

A subclass implements ``async def _do_eval(self, eval_input: dict) -> dict``; a call
``evaluator(query=..., response=...)`` evaluates those inputs, ``evaluator(conversation=...)`` each
user → assistant turn, the numbers averaged (or the subclass's aggregator applied) with
``evaluation_per_turn`` beside them. Each ``<name>_score`` the result gives without a verdict gets
``<name>_result`` (pass or fail at the threshold, in the direction ``_higher_is_better`` says) and
``<name>_threshold``, as the peer adds them. ``evaluate()`` runs such an instance as a custom
evaluator: its named ``__call__`` parameters are its inputs, or, with ``**kwargs``, every column.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from assay.azure.evaluators import conversation_turns, hoist_messages_to_conversation
from assay.azure.exceptions import ErrorTarget, user_error
from assay.sync import run_sync


class EvaluatorBase(ABC):
    _RESULT_KEY = "_result"
    _PASS_RESULT = "pass"
    _FAIL_RESULT = "fail"

    def __init__(
        self,
        *,
        threshold: float | dict[str, float] = 3.0,
        not_singleton_inputs: list[str] | None = None,
        eval_last_turn: bool = False,
        conversation_aggregation_type: Any = None,
        conversation_aggregator_override: Callable[[list[float]], float] | None = None,
        _higher_is_better: bool | None = True,
    ) -> None:
        self._threshold = threshold
        self._not_singleton_inputs = not_singleton_inputs or ["conversation", "kwargs"]
        self._eval_last_turn = eval_last_turn
        self._aggregate: Callable[[list[float]], float] = conversation_aggregator_override or _mean
        self._higher_is_better = _higher_is_better

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return run_sync(self._real_call(**kwargs))

    @abstractmethod
    async def _do_eval(self, eval_input: Any) -> dict[str, Any]:
        """One evaluation of ``eval_input`` (the call's inputs, or one turn of a conversation)."""

    async def _real_call(self, **kwargs: Any) -> dict[str, Any]:
        hoist_messages_to_conversation(kwargs)  # messages=[...] is a conversation, as in the peer's base
        conversation = kwargs.pop("conversation", None)
        inputs = {key: value for key, value in kwargs.items() if value is not None}
        if conversation is not None and inputs:
            raise user_error(
                f"{type(self).__name__}: Cannot provide both 'conversation' and individual inputs at the same time.",
                ErrorTarget.CONVERSATION,
            )
        if conversation is None:
            if not inputs:
                raise user_error(
                    f"{type(self).__name__}: Either 'conversation' or individual inputs must be provided.",
                    ErrorTarget.CONVERSATION,
                )
            return self._with_verdicts(await self._do_eval(inputs))
        messages = conversation.get("messages") if isinstance(conversation, dict) else None
        turns = conversation_turns(messages, conversation.get("context")) if isinstance(messages, list) else []
        if not turns:
            raise user_error(
                "Conversation must contain at least one user message followed by an assistant reply.",
                ErrorTarget.CONVERSATION,
            )
        if self._eval_last_turn:
            turns = turns[-1:]
        per_turn = [self._with_verdicts(await self._do_eval(turn)) for turn in turns]
        return self._aggregated(per_turn) if len(per_turn) > 1 else per_turn[0]

    def _with_verdicts(self, result: dict[str, Any]) -> dict[str, Any]:
        result = dict(result)
        for key, value in list(result.items()):
            if not key.endswith("_score") or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            base = key.removesuffix("_score")
            threshold = self._threshold.get(base) if isinstance(self._threshold, dict) else self._threshold
            if not isinstance(threshold, (int, float)):
                raise user_error("Threshold value must be a number.", ErrorTarget.EVALUATE)
            if f"{base}_result" not in result:
                met = value >= threshold if self._higher_is_better is not False else value <= threshold
                result[f"{base}_result"] = self._PASS_RESULT if met else self._FAIL_RESULT
            result.setdefault(f"{base}_threshold", threshold)
        return result

    def _aggregated(self, per_turn: list[dict[str, Any]]) -> dict[str, Any]:
        aggregated: dict[str, Any] = {}
        for name in per_turn[0]:
            values = [turn.get(name) for turn in per_turn]
            numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            aggregated[name] = self._aggregate(numbers) if len(numbers) == len(values) else values[-1]
        aggregated["evaluation_per_turn"] = {name: [turn.get(name) for turn in per_turn] for name in per_turn[0]}
        return aggregated


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)
