"""How many items a comparison needs: ``assay plan --baseline RUN --mde 0.05``.

A pass-rate drop of ``mde`` is detected by McNemar's test on paired items (the comparison
``assay runs compare`` makes) with the sample size of Connor (1987):

    n = (z_{1-α'/2} √π + z_{power} √(π − mde²))² / mde²

where π is the share of items expected to flip between the runs: the drop itself, plus the
noise, read from the baseline's judge repeats (an item whose repeats disagree flips between two
runs half the time) or its target repeats (the run-to-run flip rate, ``assay.stats.compare.flip_rates``)
when it has them, else ``--discordance`` (default: only the drop,
the least a plan can assume; say more when the judges are noisy). α' = α / criteria: the first
step of Holm's correction, which the gate applies across criteria. A baseline with ``cluster_by``
multiplies n by its design effect (the clustered variance of the pass rate over the independent
one), since items of one cluster move together.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from assay.results import RunSummary
from assay.stats.compare import clusters_of, flip_rates, read_run
from assay.stats.core import _clustered
from assay.store import Store


@dataclass
class CriterionPlan:
    name: str
    pass_rate: float
    items: int
    discordance: float
    design_effect: float
    needed: int | None
    """None when the drop cannot happen (the pass rate is below it)."""

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "enough": self.needed is not None and self.items >= self.needed}


def items_needed(mde: float, discordance: float, alpha: float, power: float) -> int:
    """Connor's paired sample size for McNemar's test, two-sided."""
    z_alpha, z_power = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    spread = max(discordance - mde * mde, 0.0)
    return math.ceil((z_alpha * math.sqrt(discordance) + z_power * math.sqrt(spread)) ** 2 / (mde * mde))


def plan(
    store: Store,
    run_id: str,
    *,
    mde: float,
    alpha: float = 0.05,
    power: float = 0.8,
    discordance: float | None = None,
) -> list[CriterionPlan]:
    verdicts, _ = read_run(store, run_id)
    run = store.get_run(run_id)
    summary = run.summary or RunSummary()
    # Target repeats show how often identical runs disagree on an item: flips a comparison will see
    # whatever the change, so they add to the discordance the drop alone would give.
    run_to_run = flip_rates(verdicts, run.options.trials)
    flaky = {c.testing_criteria: c.flaky for c in summary.per_testing_criteria_results}
    clusters = clusters_of(store, run_id)
    names = sorted({name for found in verdicts.values() for name in found})
    plans = []
    for name in names:
        decided = {item: found[name][0] for item, found in verdicts.items() if name in found}
        n = len(decided)
        rate = sum(decided.values()) / n if n else 0.0
        noise = 0.5 * (flaky.get(name) or 0) / n if n and flaky.get(name) is not None else 0.0
        noise = max(noise, run_to_run.get(name, 0.0))
        pi = discordance if discordance is not None else min(1.0, mde + noise)
        effect = _design_effect(decided, clusters) if clusters else 1.0
        needed = None
        if rate >= mde:
            needed = math.ceil(items_needed(mde, max(pi, mde), alpha / max(len(names), 1), power) * effect)
        plans.append(CriterionPlan(name, rate, n, pi, effect, needed))
    return plans


def _design_effect(decided: dict[int, bool], clusters: dict[int, Any]) -> float:
    """The clustered variance of the pass rate over the independent one (at least 1)."""
    groups: dict[Any, list[float]] = {}
    for item, passed in decided.items():
        entry = groups.setdefault(clusters.get(item, item), [0.0, 0])
        entry[0] += passed
        entry[1] += 1
    found = _clustered([(total, int(count)) for total, count in groups.values()])
    n = len(decided)
    if found is None or n == 0:
        return 1.0
    rate, variance, _ = found
    independent = rate * (1 - rate) / n
    return max(1.0, variance / independent) if independent > 0 else 1.0
