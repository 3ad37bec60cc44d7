"""Two runs compared item by item: a CI gate on evidence, not on noise.

For each criterion both runs judged, the items both decided are paired by their dataset position.
The pass rates' difference (B − A) gets a paired-bootstrap 95% interval (the same resampled items
for both runs), McNemar's exact test on the items whose verdict flipped, Holm's correction across
criteria, and the minimum difference this many paired items could detect. A criterion regressed
only when its interval lies wholly below 0 (or below ``-margin``) and its Holm-adjusted McNemar p
is under ``ALPHA``: across all criteria compared, the chance of calling pure noise a regression
stays at 5%, however many criteria there are. The flipped items are listed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from assay.errors import ConfigError
from assay.stats import holm, mcnemar, minimum_detectable_difference, paired_bootstrap
from assay.store import Store

ALPHA = 0.05
"""The family-wise error rate of the verdicts across a comparison's criteria (Holm)."""


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
    verdict: str = "no change"
    """``regression``, ``improvement`` or ``no change`` (the interval includes 0, or ±margin)."""
    flips: list[Flip] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "testing_criteria": self.name,
            "n": self.n,
            "pass_rate_a": self.passed_a / self.n if self.n else None,
            "pass_rate_b": self.passed_b / self.n if self.n else None,
            "delta": self.delta,
            "delta_ci": list(self.interval) if self.interval else None,
            "mcnemar_p": self.p_value,
            "p_holm": self.p_holm,
            "minimum_detectable_difference": self.minimum_detectable,
            "verdict": self.verdict,
            "flipped": [
                {"datasource_item_id": f.item, "passed_a": f.before, "passed_b": f.after, "reason_b": f.reason}
                for f in self.flips
            ],
        }


@dataclass
class Comparison:
    run_a: str
    run_b: str
    criteria: list[CriterionComparison]
    unpaired: int = 0
    """Items only one of the runs has."""

    @property
    def regressed(self) -> list[CriterionComparison]:
        return [c for c in self.criteria if c.verdict == "regression"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "object": "eval.run.comparison",
            "run_a": self.run_a,
            "run_b": self.run_b,
            "unpaired_items": self.unpaired,
            "regression": bool(self.regressed),
            "criteria": [c.as_dict() for c in self.criteria],
        }


def verdicts(store: Store, run_id: str) -> Verdicts:
    """item → criterion → (passed, reason), for the results that decided something."""
    found: dict[int, dict[str, tuple[bool, str | None]]] = {}
    for row in store.iter_output_items(run_id):
        decided = {
            r["name"]: (bool(r["passed"]), r.get("reason"))
            for r in row["results"]
            if r.get("status") == "completed" and r.get("passed") is not None
        }
        found[row["datasource_item_id"]] = decided
    return found


def compare_runs(store: Store, run_a: str, run_b: str, *, margin: float = 0.0, seed: int = 0) -> Comparison:
    a, b = verdicts(store, run_a), verdicts(store, run_b)
    if not a or not b:
        raise ConfigError(f"run {run_a if not a else run_b} has no output items to compare")
    clusters = clusters_of(store, run_a)
    return compare_verdicts(a, b, run_a, run_b, margin=margin, seed=seed, clusters=clusters)


def clusters_of(store: Store, run_id: str) -> dict[int, Any] | None:
    """item → its cluster, when the run named a ``cluster_by`` field (or ran its target in trials:
    an item's trials are one cluster); None when items are independent."""
    options = store.get_run(run_id).get("options") or {}
    field, trials = options.get("cluster_by"), int(options.get("trials") or 1)
    if not field and trials == 1:
        return None
    found: dict[int, Any] = {}
    for row in store.iter_output_items(run_id):
        item = int(row["datasource_item_id"])
        value = (row.get("datasource_item") or {}).get(field) if field else None
        found[item] = json.dumps(value, sort_keys=True) if value is not None else f"\0item {item // trials}"
    return found


Verdicts = dict[int, dict[str, tuple[bool, str | None]]]
"""item → criterion → (passed, reason)."""


def compare_verdicts(
    a: Verdicts,
    b: Verdicts,
    run_a: str,
    run_b: str,
    *,
    margin: float = 0.0,
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
    results = []
    for name in names:
        pairs = [(item, a[item][name], b[item][name]) for item in shared if name in a[item] and name in b[item]]
        deltas = [float(after[0]) - float(before[0]) for _, before, after in pairs]
        only_a = sum(1 for _, before, after in pairs if before[0] and not after[0])
        only_b = sum(1 for _, before, after in pairs if after[0] and not before[0])
        n = len(pairs)
        results.append(
            CriterionComparison(
                name=name,
                n=n,
                passed_a=sum(before[0] for _, before, _ in pairs),
                passed_b=sum(after[0] for _, _, after in pairs),
                only_a=only_a,
                only_b=only_b,
                delta=sum(deltas) / n if n else 0.0,
                interval=paired_bootstrap(
                    deltas,
                    seed=seed,
                    resamples=resamples,
                    clusters=[clusters.get(item, item) for item, _, _ in pairs] if clusters else None,
                ),
                p_value=mcnemar(only_a, only_b),
                minimum_detectable=minimum_detectable_difference(n, (only_a + only_b) / n if n else 0.0),
                flips=[
                    Flip(item, before[0], after[0], after[1]) for item, before, after in pairs if before[0] != after[0]
                ],
            )
        )
    for comparison, adjusted in zip(results, holm([c.p_value for c in results]), strict=True):
        comparison.p_holm = adjusted
        decided = comparison.interval is not None and adjusted < ALPHA  # family-wise, not per criterion
        if decided and comparison.interval is not None and comparison.interval[1] < -margin:
            comparison.verdict = "regression"
        elif decided and comparison.interval is not None and comparison.interval[0] > margin:
            comparison.verdict = "improvement"
    return Comparison(run_a, run_b, results, unpaired=len(set(a) ^ set(b)))
