"""A run's summary counts, kept as its output items are written (``RunTally``).

A run's summary is counts per item status and per criterion verdict, each criterion's score sum and
sum of squares, its scores in steps of 0.001 (the charts), and every model call by role. The rows a
run's items are written as (``ITEM_COLUMNS``, ``RESULT_COLUMNS``, ``ROLE_USAGE_COLUMNS``) are what
the tally reads, whether they come from the writer as it writes them or from the store afterwards
(``RunsStore.tally_of``): a finished run's summary costs no pass over its rows, and a resumed one's is
the same numbers read back.

Scores are summed exactly (``ExactSum``): the processes of a spread run take items in whatever
order they reach them, and a plain running sum would give two runs of the same rows means that
differ in the last digit.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import Any

from assay.results import CriterionSummary, ModelUsage, ResultCounts, RunSummary
from assay.results.records import RoleUsage
from assay.stats.core import t_interval_from_moments, wilson

USAGE_COLUMNS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "cached_tokens")
TARGET_COLUMNS = (
    "target_model",
    "target_calls",
    "target_cache_hits",
    "target_prompt_tokens",
    "target_completion_tokens",
)
ITEM_COLUMNS = (
    "run_id",
    "datasource_item_id",
    "status",
    "datasource_item",
    "sample",
    "results",
    "created_at",
    *TARGET_COLUMNS,
)
RESULT_COLUMNS = (
    "run_id",
    "datasource_item_id",
    "criterion",
    "metric",
    "status",
    "passed",
    "score",
    "model",
    *USAGE_COLUMNS,
)
ROLE_COUNTS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens")
ROLE_USAGE_COLUMNS = ("run_id", "datasource_item_id", "role", "model", *ROLE_COUNTS)

ROLES = ("target", "simulated_user", "attacker", "judge")
"""The roles a run's model calls are reported under, in the order they are listed."""

STEPS_PER_UNIT = 1000
"""Scores are counted for the charts in steps of 1/1000 (a floor): no chart's bin edge falls inside one."""

_item_status = itemgetter(ITEM_COLUMNS.index("status"))
_item_target = itemgetter(*(ITEM_COLUMNS.index(name) for name in TARGET_COLUMNS))
_verdict = itemgetter(*(RESULT_COLUMNS.index(name) for name in ("criterion", "status", "passed")))
_judged = itemgetter(*(RESULT_COLUMNS.index(name) for name in ("criterion", "status", "score")))
_judge_usage = itemgetter(*(RESULT_COLUMNS.index(name) for name in ("model", *USAGE_COLUMNS)))
_role_usage = itemgetter(*(ROLE_USAGE_COLUMNS.index(name) for name in ("role", "model", *ROLE_COUNTS)))
_TARGET_MODEL = ITEM_COLUMNS.index("target_model")
_JUDGE_MODEL = RESULT_COLUMNS.index("model")


class ExactSum:
    """A sum of floats that does not depend on the order they came in, nor on how they were split
    between processes: the exact sum is kept as a few floats that do not overlap (each ``math.fsum``
    of what is left), and ``value`` rounds it once. Values wait in a list and are folded in a few
    thousand at a time, so adding one costs an append."""

    __slots__ = ("parts", "pending")

    FOLD_AT = 4096

    def __init__(self) -> None:
        self.parts: list[float] = []
        self.pending: list[float] = []

    def extend(self, values: Iterable[float]) -> None:
        self.pending.extend(values)
        if len(self.pending) >= self.FOLD_AT:
            self._fold()

    def merge(self, other: ExactSum) -> None:
        self.extend(itertools.chain(other.parts, other.pending))

    def value(self) -> float:
        self._fold()
        return math.fsum(self.parts)

    def _fold(self) -> None:
        values = [*self.parts, *self.pending]
        self.pending = []
        try:
            parts = [math.fsum(values)]
            while math.isfinite(parts[-1]):
                rest = math.fsum(itertools.chain(values, (-part for part in parts)))
                if rest == 0.0:
                    break
                parts.append(rest)
        except (OverflowError, ValueError):  # an infinity (or two of opposite signs): no exact sum to keep
            parts = [sum(values)]
        self.parts = parts if math.isfinite(parts[-1]) else [parts[-1]]

    def __getstate__(self) -> list[float]:
        self._fold()
        return self.parts

    def __setstate__(self, parts: list[float]) -> None:
        self.parts, self.pending = parts, []


class ScoreSums:
    """One criterion's completed scores: how many, their sum and the sum of their squares."""

    __slots__ = ("count", "total", "squares")

    def __init__(self) -> None:
        self.count = 0
        self.total = ExactSum()
        self.squares = ExactSum()

    def extend(self, scores: list[float]) -> None:
        self.count += len(scores)
        self.total.extend(scores)
        self.squares.extend([score * score for score in scores])

    def merge(self, other: ScoreSums) -> None:
        self.count += other.count
        self.total.merge(other.total)
        self.squares.merge(other.squares)

    def __getstate__(self) -> tuple[int, ExactSum, ExactSum]:
        return self.count, self.total, self.squares

    def __setstate__(self, state: tuple[int, ExactSum, ExactSum]) -> None:
        self.count, self.total, self.squares = state


class RunTally:
    """What a run's summary counts, from the rows its items were written as (see the module's
    docstring). ``written`` counts the items; ``complete`` is False once a write stored fewer rows
    than it was given (some were already there), and the store's rows must then be read instead."""

    def __init__(self) -> None:
        self.written = 0
        self.complete = True
        self.statuses: Counter[str] = Counter()
        self.verdicts: Counter[tuple[str, str, bool | None]] = Counter()
        self.scores: dict[str, ScoreSums] = {}
        self.steps: dict[str, Counter[int]] = {}
        self.usage: dict[tuple[str, str], list[int]] = {}
        """Per role and model: calls, cache hits, prompt, completion and cached tokens."""

    def add(
        self,
        items: Sequence[Sequence[Any]] = (),
        results: Sequence[Sequence[Any]] = (),
        role_usage: Sequence[Sequence[Any]] = (),
    ) -> None:
        """Rows as they are written (``ITEM_COLUMNS``, ``RESULT_COLUMNS``, ``ROLE_USAGE_COLUMNS``)."""
        self.written += len(items)
        self.statuses.update(map(_item_status, items))
        self.verdicts.update(map(_verdict, results))
        self._add_scores(results)
        for row in items:
            if row[_TARGET_MODEL] is not None:  # an item with no target has no calls to count
                model, *counts = _item_target(row)
                self._add_usage("target", model, [*counts, 0])
        for row in results:
            if row[_JUDGE_MODEL] is not None:
                model, *counts = _judge_usage(row)
                self._add_usage("judge", model, counts)
        for role, model, *counts in map(_role_usage, role_usage):
            self._add_usage(role, model, [*counts, 0])

    def _add_scores(self, results: Sequence[Sequence[Any]]) -> None:
        completed: dict[str, list[float]] = {}
        steps: dict[str, list[int]] = {}
        for criterion, status, score in map(_judged, results):
            if score is None or score != score:  # a NaN is no score (SQLite stores it as NULL)
                continue
            if status == "completed":
                completed.setdefault(criterion, []).append(score)
            if math.isfinite(score):
                steps.setdefault(criterion, []).append(math.floor(score * STEPS_PER_UNIT))
        for criterion, scores in completed.items():
            sums = self.scores.get(criterion)
            if sums is None:
                sums = self.scores[criterion] = ScoreSums()
            sums.extend(scores)
        for criterion, counted in steps.items():
            self.steps.setdefault(criterion, Counter()).update(counted)

    def _add_usage(self, role: str, model: str, counts: list[int]) -> None:
        current = self.usage.get((role, model))
        if current is None:
            self.usage[(role, model)] = [int(count or 0) for count in counts]
        else:
            for index, count in enumerate(counts):
                current[index] += int(count or 0)

    def merge(self, other: RunTally) -> None:
        """Add another process's tally of the same run (a share of a spread run)."""
        self.written += other.written
        self.complete = self.complete and other.complete
        self.statuses.update(other.statuses)
        self.verdicts.update(other.verdicts)
        for criterion, sums in other.scores.items():
            self.scores.setdefault(criterion, ScoreSums()).merge(sums)
        for criterion, counted in other.steps.items():
            self.steps.setdefault(criterion, Counter()).update(counted)
        for (role, model), counts in other.usage.items():
            self._add_usage(role, model, counts)

    def score_steps(self) -> dict[str, list[tuple[float, int]]]:
        """Each criterion's scores counted in steps (``STEPS_PER_UNIT``), in order."""
        return {
            criterion: [(step / STEPS_PER_UNIT, count) for step, count in sorted(counted.items())]
            for criterion, counted in sorted(self.steps.items())
        }

    def summary(self, criteria: Sequence[tuple[str, str]]) -> RunSummary:
        """The run's summary; ``criteria`` names each criterion and its metric, in the order they are
        listed (a criterion the rows name that is not among them is listed after, by name)."""
        statuses = self.statuses
        counts = ResultCounts(
            total=sum(statuses.values()),
            passed=statuses["pass"],
            failed=statuses["fail"],
            errored=statuses["error"],
            skipped=statuses["skipped"],
            undetermined=statuses["undetermined"],
            filtered=statuses["filtered"],
        )
        summaries = {name: CriterionSummary(testing_criteria=name, metric=metric) for name, metric in criteria}
        for (name, status, passed), count in sorted(self.verdicts.items(), key=_by_name):
            summary = summaries.setdefault(name, CriterionSummary(testing_criteria=name, metric=""))
            if status == "error":
                summary.errored += count
            elif status == "skipped":
                summary.skipped += count
            elif status == "filtered":
                summary.filtered += count
            elif status == "undetermined":
                summary.undetermined += count
            elif passed:
                summary.passed += count
            elif passed is False:
                summary.failed += count
            # else: scored with no pass mark (no threshold): in the mean score, in no pass rate
        for name, summary in summaries.items():
            decided = summary.passed + summary.failed
            summary.n = decided
            summary.pass_rate = summary.passed / decided if decided else None
            interval = wilson(summary.passed, decided)
            summary.pass_rate_ci = list(interval) if interval else None
            sums = self.scores.get(name)
            if sums is not None and sums.count:
                total = sums.total.value()
                summary.mean_score = total / sums.count
                spread = t_interval_from_moments(sums.count, total, sums.squares.value())
                summary.mean_score_ci = list(spread) if spread else None
        per_model, per_role = self._model_usage()
        return RunSummary(
            result_counts=counts,
            per_testing_criteria_results=list(summaries.values()),
            per_model_usage=per_model,
            per_role_usage=per_role,
            score_steps=self.score_steps(),
        )

    def _model_usage(self) -> tuple[list[ModelUsage], list[RoleUsage]]:
        by_model: dict[str, list[int]] = {}
        for (_, model), counts in self.usage.items():
            current = by_model.setdefault(model, [0] * len(USAGE_COLUMNS))
            by_model[model] = [a + b for a, b in zip(current, counts, strict=True)]
        per_model = [
            ModelUsage(model_name=model, **_usage_fields(counts)) for model, counts in sorted(by_model.items())
        ]
        per_role = [
            RoleUsage(role=role, model_name=model, **_usage_fields(counts))
            for (role, model), counts in sorted(self.usage.items(), key=_by_role)
        ]
        return per_model, per_role


def _by_name(entry: tuple[tuple[str, str, bool | None], int]) -> str:
    return entry[0][0]


def _by_role(entry: tuple[tuple[str, str], list[int]]) -> tuple[int, str, str]:
    role, model = entry[0]
    return (ROLES.index(role) if role in ROLES else len(ROLES)), role, model


def _usage_fields(counts: list[int]) -> dict[str, int]:
    calls, hits, prompt, completion, cached = counts
    return {
        "invocation_count": calls,
        "cache_hits": hits,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cached_tokens": cached,
    }
