"""Two runs compared item by item: a CI gate on evidence, not on noise.

For each criterion both runs judged, the items both decided are paired by their dataset position.
The pass rates' difference (B − A) gets a paired-bootstrap 95% interval (the same resampled items
for both runs, whole clusters with ``cluster_by``), McNemar's mid-p test on the items whose verdict
flipped (with ``cluster_by``, the cluster-robust test of the mean difference instead: items of one
cluster drift together, and McNemar would count each as independent evidence), Holm's correction
across criteria, and the minimum difference this many paired items could detect. A criterion
whose judge gives more than pass/fail (a 1–5 scale, a similarity) also gets a row for its score:
the paired t test for continuous scores, Wilcoxon's signed-rank test (Pratt) for ordinal ones (the
cluster-robust test with ``cluster_by``), Holm across those rows (``assay.stats.paired``;
microsoft/ai-agent-evals' choices).

Each row's verdict is in Foundry's words: *too few samples* (under 10 paired items),
*inconclusive*, *improved*, *degraded*, or *changed* (a score with no better direction). A pass
rate is degraded only when its Holm-adjusted p is under ``ALPHA`` and its interval lies wholly
below 0, or below ``-margin`` (a non-inferiority margin, per criterion if wanted): across all
criteria, the chance of calling pure noise a regression stays at 5%. The flipped items are listed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.errors import ConfigError
from assay.results.stored import Run
from assay.stats.core import holm, minimum_detectable_difference, paired_bootstrap, wilson_cc
from assay.stats.paired import clustered_mean_test, mcnemar_mid_p, paired_t, wilcoxon_pratt
from assay.store import Store

ALPHA = 0.05
"""The family-wise error rate of the verdicts across a comparison's criteria (Holm)."""
MIN_PAIRED = 10
"""Fewer paired items than this are *too few samples* (ai-agent-evals' threshold)."""
MAX_UNDETERMINED = 0.1
"""A criterion whose judge left more than this share of either run's judged items undetermined is
*too many undetermined*: the items it did decide may not stand for the rest, so the gate says so
and fails instead of passing on what was left."""

Verdict = Literal["too few samples", "inconclusive", "improved", "degraded", "changed", "too many undetermined"]


@dataclass
class Flip:
    item: int
    before: bool
    after: bool
    reason: str | None = None


@dataclass
class CriterionComparison:
    name: str
    n: int
    passed_a: int
    passed_b: int
    only_a: int
    """Items that passed in A only (b, for McNemar)."""
    only_b: int
    delta: float
    interval: tuple[float, float] | None
    p_value: float
    p_holm: float = 1.0
    minimum_detectable: float | None = None
    verdict: Verdict = "inconclusive"
    margin: float = 0.0
    flips: list[Flip] = field(default_factory=list)
    test: str = "mcnemar_mid_p"
    """``clustered_mean_t`` with ``cluster_by``: the cluster-robust test of the mean difference."""
    undetermined: tuple[int, int] = (0, 0)
    """Items each run's judge gave no readable verdict on (``undetermined`` results)."""
    flip_rate: float | None = None
    """With target repeats: the chance that two identical runs give an item different verdicts
    (``flip_rates``), averaged over the runs that repeated."""
    noise_floor: float | None = None
    """With target repeats: the smallest pass-rate difference this many items can tell apart from
    the flips of identical runs (α 0.05, power 0.8)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "testing_criteria": self.name,
            "metric": "pass_rate",
            "n": self.n,
            "pass_rate_a": self.passed_a / self.n if self.n else None,
            "pass_rate_b": self.passed_b / self.n if self.n else None,
            # Each run's own pass rate with Wilson's continuity-corrected interval (ai-agent-evals' choice).
            "pass_rate_a_ci": list(wilson_cc(self.passed_a, self.n) or ()) or None,
            "pass_rate_b_ci": list(wilson_cc(self.passed_b, self.n) or ()) or None,
            "delta": self.delta,
            "delta_ci": list(self.interval) if self.interval else None,
            "test": self.test,
            "mcnemar_p": self.p_value,
            "p_value": self.p_value,
            "undetermined_a": self.undetermined[0],
            "undetermined_b": self.undetermined[1],
            **({"run_to_run_flip_rate": self.flip_rate} if self.flip_rate is not None else {}),
            **({"noise_floor": self.noise_floor} if self.noise_floor is not None else {}),
            "p_holm": self.p_holm,
            "margin": self.margin,
            "minimum_detectable_difference": self.minimum_detectable,
            "verdict": self.verdict,
            "flipped": [
                {"datasource_item_id": f.item, "passed_a": f.before, "passed_b": f.after, "reason_b": f.reason}
                for f in self.flips
            ],
        }


@dataclass
class ScoreComparison:
    """A criterion's scores (not its verdicts) compared, when they are more than pass/fail."""

    name: str
    kind: Literal["continuous", "ordinal"]
    n: int
    mean_a: float
    mean_b: float
    interval: tuple[float, float] | None
    p_value: float
    direction: Literal["increase", "decrease", "neutral"]
    """Which way is better, read from run A: the way passing items' scores lie from failing ones'."""
    p_holm: float = 1.0
    verdict: Verdict = "inconclusive"

    @property
    def test(self) -> str:
        return "paired_t" if self.kind == "continuous" else "wilcoxon_pratt"

    def as_dict(self) -> dict[str, Any]:
        return {
            "testing_criteria": self.name,
            "metric": "score",
            "kind": self.kind,
            "n": self.n,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "delta": self.mean_b - self.mean_a,
            "delta_ci": list(self.interval) if self.interval else None,
            "test": self.test,
            "p_value": self.p_value,
            "p_holm": self.p_holm,
            "direction": self.direction,
            "verdict": self.verdict,
        }


@dataclass
class Comparison:
    run_a: str
    run_b: str
    criteria: list[CriterionComparison]
    unpaired: int = 0
    """Items only one of the runs has."""
    scores: list[ScoreComparison] = field(default_factory=list)

    @property
    def regressed(self) -> list[CriterionComparison]:
        return [c for c in self.criteria if c.verdict == "degraded"]

    @property
    def undecidable(self) -> list[CriterionComparison]:
        """Criteria whose judge left too many items undetermined to vouch for the change."""
        return [c for c in self.criteria if c.verdict == "too many undetermined"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "object": "eval.run.comparison",
            "run_a": self.run_a,
            "run_b": self.run_b,
            "unpaired_items": self.unpaired,
            "regression": bool(self.regressed),
            "regressed": [{"testing_criteria": c.name, "delta": c.delta} for c in self.regressed],
            "undecidable": [
                {"testing_criteria": c.name, "undetermined_a": c.undetermined[0], "undetermined_b": c.undetermined[1]}
                for c in self.undecidable
            ],
            "criteria": [c.as_dict() for c in self.criteria],
            "scores": [c.as_dict() for c in self.scores],
        }


Verdicts = dict[int, dict[str, tuple[bool, str | None]]]
"""item → criterion → (passed, reason)."""
Scores = dict[int, dict[str, float]]
"""item → criterion → score."""
Margins = float | dict[str, float]
"""One margin for every criterion, or per criterion name (others 0)."""


def verdicts(store: Store, run_id: str) -> Verdicts:
    """item → criterion → (passed, reason), for the results that decided something."""
    return read_run(store, run_id)[0]


def read_run(store: Store, run_id: str) -> tuple[Verdicts, Scores]:
    """A run's verdicts, and its completed results' scores. A multi-agent workflow's items (trace
    items with ``workflow_part``) count under their criterion and again under ``CRITERION · AGENT``,
    so a comparison shows each agent's change as well as the whole run's."""
    found: Verdicts = {}
    scores: Scores = {}
    for output in store.iter_output_items(run_id):
        completed = [r for r in output.results if r.status == "completed"]
        agent = output.datasource_item.get("agent_id") if "workflow_part" in output.datasource_item else None
        names = [(r, [r.name, *([f"{r.name} · {agent}"] if agent else [])]) for r in completed]
        found[output.datasource_item_id] = {
            n: (r.passed, r.reason) for r, ns in names for n in ns if r.passed is not None
        }
        scores[output.datasource_item_id] = {n: r.score for r, ns in names for n in ns if r.score is not None}
    return found, scores


def compare_runs(store: Store, run_a: str, run_b: str, *, margin: Margins = 0.0, seed: int = 0) -> Comparison:
    (a, scores_a), (b, scores_b) = read_run(store, run_a), read_run(store, run_b)
    if not a or not b:
        raise ConfigError(f"run {run_a if not a else run_b} has no output items to compare")
    clusters = clusters_of(store, run_a)
    found = compare_verdicts(a, b, run_a, run_b, margin=margin, seed=seed, clusters=clusters)
    found.scores = compare_scores(scores_a, scores_b, a, seed=seed, clusters=clusters)
    first, second = store.get_run(run_a), store.get_run(run_b)
    mark_undetermined(found, undetermined_counts(first), undetermined_counts(second))
    mark_repeatability(found, [(a, first.options.trials), (b, second.options.trials)])
    return found


def flip_rates(found: Verdicts, trials: int) -> dict[str, float]:
    """Per criterion, the chance that two identical runs give an item different verdicts, read from
    one run's repeats of its target (trial t of item i is output item i·trials + t): an item whose
    m decided trials passed k times gives 2k(m−k)/(m(m−1)), the unbiased estimate of 2p(1−p),
    averaged over the items with two decided trials or more. Empty without repeats."""
    if trials < 2:
        return {}
    passes: dict[tuple[str, int], list[int]] = {}
    for item, verdicts_of_item in found.items():
        for name, (passed, _) in verdicts_of_item.items():
            counted = passes.setdefault((name, item // trials), [0, 0])
            counted[0] += bool(passed)
            counted[1] += 1
    per_name: dict[str, list[float]] = {}
    for (name, _), (k, m) in passes.items():
        if m >= 2:
            per_name.setdefault(name, []).append(2 * k * (m - k) / (m * (m - 1)))
    return {name: sum(rates) / len(rates) for name, rates in per_name.items()}


def mark_repeatability(found: Comparison, runs: list[tuple[Verdicts, int]]) -> None:
    """Each criterion's run-to-run flip rate (the mean of the repeating runs' estimates) and the
    noise floor it sets: the smallest difference the comparison's items can tell from it."""
    estimates = [(flip_rates(verdicts_of_run, trials), trials) for verdicts_of_run, trials in runs if trials > 1]
    if not estimates:
        return
    for comparison in found.criteria:
        rates = [rates[comparison.name] for rates, _ in estimates if comparison.name in rates]
        if not rates:
            continue
        comparison.flip_rate = sum(rates) / len(rates)
        items = comparison.n // max(trials for _, trials in estimates)
        comparison.noise_floor = minimum_detectable_difference(items, comparison.flip_rate)


def undetermined_counts(run: Run) -> dict[str, tuple[int, int]]:
    """criterion → (undetermined results, results with a verdict or undetermined), from the run's summary."""
    summary = run.summary
    rows = summary.per_testing_criteria_results if summary is not None else []
    return {c.testing_criteria: (c.undetermined, c.passed + c.failed + c.undetermined) for c in rows}


def mark_undetermined(
    found: Comparison, a: dict[str, tuple[int, int]], b: dict[str, tuple[int, int]], most: float = MAX_UNDETERMINED
) -> None:
    """Each criterion's undetermined counts; one with more than ``most`` of either run's judged items
    undetermined is *too many undetermined*, whatever its decided items say."""
    for comparison in found.criteria:
        (left, judged_a), (right, judged_b) = a.get(comparison.name, (0, 0)), b.get(comparison.name, (0, 0))
        comparison.undetermined = (left, right)
        if (judged_a and left / judged_a > most) or (judged_b and right / judged_b > most):
            comparison.verdict = "too many undetermined"


def clusters_of(store: Store, run_id: str) -> dict[int, Any] | None:
    """item → its cluster, when the run named a ``cluster_by`` field (or ran its target in trials:
    an item's trials are one cluster); None when items are independent."""
    options = store.get_run(run_id).options
    field, trials = options.cluster_by, options.trials
    if not field and trials == 1:
        return None
    found: dict[int, Any] = {}
    for output in store.iter_output_items(run_id):
        item = output.datasource_item_id
        value = output.datasource_item.get(field) if field else None
        found[item] = json.dumps(value, sort_keys=True) if value is not None else f"\0item {item // trials}"
    return found


def compare_verdicts(
    a: Verdicts,
    b: Verdicts,
    run_a: str,
    run_b: str,
    *,
    margin: Margins = 0.0,
    seed: int = 0,
    resamples: int = 10_000,
    clusters: dict[int, Any] | None = None,
) -> Comparison:
    """The comparison of two runs' verdicts, paired by item (``bench/gate_false_alarms.py`` runs it
    on simulated verdicts)."""
    shared = sorted(set(a) & set(b))
    names = sorted({name for item in shared for name in a[item]} & {name for item in shared for name in b[item]})
    if not names:
        raise ConfigError(
            f"runs {run_a} and {run_b} share no criterion with verdicts on the same items",
            hint="compare runs of the same eval on the same dataset",
        )
    unknown = sorted(set(margin) - set(names)) if isinstance(margin, dict) else []
    if unknown:
        raise ConfigError(f"--margin names {unknown[0]!r}, which neither run has", hint=f"criteria: {', '.join(names)}")
    results = []
    for name in names:
        pairs = [(item, a[item][name], b[item][name]) for item in shared if name in a[item] and name in b[item]]
        deltas = [float(after[0]) - float(before[0]) for _, before, after in pairs]
        only_a = sum(1 for _, before, after in pairs if before[0] and not after[0])
        only_b = sum(1 for _, before, after in pairs if after[0] and not before[0])
        n = len(pairs)
        keys = [clusters.get(item, item) for item, _, _ in pairs] if clusters else None
        results.append(
            CriterionComparison(
                name=name,
                n=n,
                passed_a=sum(before[0] for _, before, _ in pairs),
                passed_b=sum(after[0] for _, _, after in pairs),
                only_a=only_a,
                only_b=only_b,
                delta=sum(deltas) / n if n else 0.0,
                interval=paired_bootstrap(deltas, seed=seed, resamples=resamples, clusters=keys),
                # Clustered items are not independent pairs: their test is the cluster-robust one.
                p_value=mcnemar_mid_p(only_a, only_b) if keys is None else clustered_mean_test(deltas, keys),
                test="mcnemar_mid_p" if keys is None else "clustered_mean_t",
                minimum_detectable=minimum_detectable_difference(n, (only_a + only_b) / n if n else 0.0),
                margin=margin.get(name, 0.0) if isinstance(margin, dict) else margin,
                flips=[
                    Flip(item, before[0], after[0], after[1]) for item, before, after in pairs if before[0] != after[0]
                ],
            )
        )
    for comparison, adjusted in zip(results, holm([c.p_value for c in results]), strict=True):
        comparison.p_holm = adjusted
        comparison.verdict = _rate_verdict(comparison)
    return Comparison(run_a, run_b, results, unpaired=len(set(a) ^ set(b)))


def _rate_verdict(c: CriterionComparison) -> Verdict:
    if c.n < MIN_PAIRED:
        return "too few samples"
    if c.interval is None or c.p_holm >= ALPHA:  # family-wise, not per criterion
        return "inconclusive"
    if c.interval[1] < -c.margin:
        return "degraded"
    if c.interval[0] > c.margin:
        return "improved"
    return "inconclusive"


def compare_scores(
    a: Scores, b: Scores, verdicts_a: Verdicts, *, seed: int = 0, clusters: dict[int, Any] | None = None
) -> list[ScoreComparison]:
    """The criteria whose scores are more than 0/1, compared by the test their kind calls for."""
    shared = sorted(set(a) & set(b))
    names = sorted({name for item in shared for name in a[item]} & {name for item in shared for name in b[item]})
    rows = []
    for name in names:
        items = [item for item in shared if name in a[item] and name in b[item]]
        first, second = [a[item][name] for item in items], [b[item][name] for item in items]
        values = {*first, *second}
        if values <= {0.0, 1.0}:
            continue  # a 0/1 score is the pass rate, compared above
        ordinal = all(v.is_integer() for v in values) and max(values) - min(values) <= 9
        deltas = [y - x for x, y in zip(first, second, strict=True)]
        keys = [clusters.get(i, i) for i in items] if clusters else None
        if keys is not None:
            p_value = clustered_mean_test(deltas, keys)
        else:
            p_value = wilcoxon_pratt(first, second) if ordinal else paired_t(first, second)
        rows.append(
            ScoreComparison(
                name=name,
                kind="ordinal" if ordinal else "continuous",
                n=len(items),
                mean_a=sum(first) / len(first),
                mean_b=sum(second) / len(second),
                interval=paired_bootstrap(deltas, seed=seed, clusters=keys),
                p_value=p_value,
                direction=_direction(name, a, verdicts_a),
            )
        )
    for row, adjusted in zip(rows, holm([r.p_value for r in rows]), strict=True):
        row.p_holm = adjusted
        row.verdict = _score_verdict(row)
    return rows


def _direction(name: str, scores: Scores, found: Verdicts) -> Literal["increase", "decrease", "neutral"]:
    """Better is the way passing items' scores lie from failing ones'; neutral with no verdicts to tell."""
    passed = [s[name] for item, s in scores.items() if name in s and found.get(item, {}).get(name, (None,))[0] is True]
    failed = [s[name] for item, s in scores.items() if name in s and found.get(item, {}).get(name, (None,))[0] is False]
    if not passed or not failed or sum(passed) / len(passed) == sum(failed) / len(failed):
        return "neutral"
    return "increase" if sum(passed) / len(passed) > sum(failed) / len(failed) else "decrease"


def _score_verdict(row: ScoreComparison) -> Verdict:
    if row.n < MIN_PAIRED:
        return "too few samples"
    if row.p_holm >= ALPHA or row.mean_a == row.mean_b:
        return "inconclusive"
    if row.direction == "neutral":
        return "changed"
    better = (row.mean_b > row.mean_a) == (row.direction == "increase")
    return "improved" if better else "degraded"
