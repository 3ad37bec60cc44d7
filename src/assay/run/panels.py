"""Judge panels: a criterion with ``models: [a, b, c]`` asks each model as its own judge and
passes on a strict majority of the members that answered. A member whose answer cannot be used
(unparseable, or the call failed) abstains; abstentions are counted in the result, and a panel
where everyone abstained is an error."""

from __future__ import annotations

import asyncio
from typing import Any

from assay.errors import ConfigError, ItemError
from assay.evaluators.base import Direction, Evaluator, Score


def check_panel(value: Any, where: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) < 2 or not all(isinstance(m, str) and m for m in value):
        raise ConfigError(f"{where}: a judge panel is a list of two or more model names, e.g. [judge-a, judge-b]")
    return list(value)


def panel(members: dict[str, Evaluator], threshold: float | None, direction: Direction) -> Evaluator:
    def passes(score: Score) -> bool:
        if score.passed is not None:
            return score.passed
        if threshold is None or score.value is None:
            return True
        return score.value <= threshold if direction == "decrease" else score.value >= threshold

    async def evaluate(inputs: dict[str, Any]) -> Score:
        outcomes = await asyncio.gather(*(member(inputs) for member in members.values()), return_exceptions=True)
        votes: list[dict[str, Any]] = []
        for model, outcome in zip(members, outcomes, strict=True):
            if isinstance(outcome, ItemError):
                votes.append({"model": model, "abstained": True, "reason": str(outcome)})
            elif isinstance(outcome, BaseException):
                raise outcome
            elif outcome.value is None:
                votes.append({"model": model, "abstained": True, "reason": outcome.reason or "not applicable"})
            else:
                votes.append(
                    {"model": model, "score": outcome.value, "passed": passes(outcome), "reason": outcome.reason}
                )
        voted = [v for v in votes if not v.get("abstained")]
        abstained = len(votes) - len(voted)
        if not voted:
            raise ItemError(f"every member of the judge panel abstained: {votes[0]['reason']}")
        in_favour = sum(bool(v["passed"]) for v in voted)
        value = sum(float(v["score"]) for v in voted) / len(voted)
        reason = f"{in_favour} of {len(voted)} judges passed it" + (f" ({abstained} abstained)" if abstained else "")
        return Score(
            value, passed=in_favour * 2 > len(voted), reason=reason, properties={"panel": votes, "abstained": abstained}
        )

    return evaluate
