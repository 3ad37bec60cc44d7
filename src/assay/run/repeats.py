"""Repeats: a judge asked K times per item (each time with a seed of its own, so the model-call
cache keeps every answer and a rerun is free), the answers reduced to the item's result.

Reducers (a criterion's ``reducer``): ``mean`` (the default: the mean score, judged against the
threshold), ``median``, ``majority`` (passes when most repeats pass), ``pass@k`` (when any does)
and ``pass^k`` (when all do, τ-bench's consistency). Each result keeps its repeats, their spread
and whether the verdict flipped (``flaky``), so a noisy judge or a borderline item shows.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Callable
from typing import Any

from assay.errors import ConfigError
from assay.evaluators.base import Direction, Evaluator, Score
from assay.evaluators.judges.safety import add_usage

REDUCERS = ("mean", "median", "majority", "pass@k", "pass^k")
MAX_REPEATS = 50


def check_repeats(value: Any, where: str) -> int:
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPEATS:
        raise ConfigError(f"{where}: a whole number from 1 to {MAX_REPEATS}, got {value!r}")
    return value


def check_reducer(value: Any, where: str) -> str:
    if value is None:
        return "mean"
    if not isinstance(value, str) or value not in REDUCERS:
        raise ConfigError(f"{where}: unknown reducer {value!r} (known: {', '.join(REDUCERS)})")
    return str(value)


def repeated(
    build: Callable[[int], Evaluator], repeats: int, reducer: str, threshold: float | None, direction: Direction
) -> Evaluator:
    """One evaluator that asks ``repeats`` evaluators (``build(seed)``) and reduces their scores."""
    evaluators = [build(seed) for seed in range(repeats)]

    def passes(score: Score) -> bool | None:
        if score.value is None:
            return None
        if score.passed is not None:
            return score.passed
        if threshold is None:
            return True
        return score.value <= threshold if direction == "decrease" else score.value >= threshold

    async def evaluate(inputs: dict[str, Any]) -> Score:
        scores = await asyncio.gather(*(e(inputs) for e in evaluators))
        decided = [s for s in scores if s.value is not None]
        if not decided:
            return scores[0]  # skipped (or not applicable) every time: as one run says
        values = [float(s.value) for s in decided if s.value is not None]
        verdicts = [passes(s) for s in decided]
        value = statistics.median(values) if reducer == "median" else sum(values) / len(values)
        passed: bool | None = None
        if reducer == "majority":
            passed = sum(bool(v) for v in verdicts) * 2 > len(verdicts)
        elif reducer == "pass@k":
            passed = any(verdicts)
        elif reducer == "pass^k":
            passed = all(verdicts)
        properties = {
            "repeats": [{"score": s.value, "passed": passes(s), "reason": s.reason} for s in scores],
            "reducer": reducer,
            "spread": max(values) - min(values),
            "flaky": len(set(verdicts)) > 1,
            "usage": _usage(scores),
        }
        return Score(value, passed=passed, reason=decided[0].reason, label=decided[0].label, properties=properties)

    return evaluate


def _usage(scores: list[Score]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for score in scores:
        add_usage(total, score.properties.get("usage") or {})
    return total
