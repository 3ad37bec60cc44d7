"""How often `assay runs compare --fail-on regression` calls judge noise a regression.

    python bench/gate_false_alarms.py [--comparisons 200] [--criteria 10] [--items 200]

Each simulated comparison pairs two runs of the same system: every criterion's verdict on every
item is judge noise around the same pass rate (each item has its own true pass probability, so
verdicts are paired as real runs' are). A gate that controls the error across criteria raises a
false alarm in at most about 5% of comparisons, however many criteria there are; printed beside it
is the rate of the uncorrected rule (any criterion's interval below 0) on the same comparisons.
Then the planted cases: one criterion 14 down / 4 up (passes the gate) and 40 down / 2 up (fails it).

Then clustered noise (``--clustered``, on by default): items come in documents, and each document's
pass probability drifts as a whole between the two runs (a random effect of spread tau on the
logit, per document, criterion and run), so items of one document are not independent. At each
tau the bench prints the intra-cluster correlation of the paired differences it produced, the
gate's false alarms with ``cluster_by`` (the cluster-robust test) and without it (McNemar, as if
items were independent), and the power to find a real drop of a few points either way.
"""

from __future__ import annotations

import argparse
import math
import random
from typing import Any

from assay.stats.compare import Verdicts, compare_verdicts


def noisy_runs(rng: random.Random, criteria: int, items: int, flip: float) -> tuple[Verdicts, Verdicts]:
    a: Verdicts = {}
    b: Verdicts = {}
    for item in range(items):
        a[item], b[item] = {}, {}
        for c in range(criteria):
            p = rng.choice((0.1, 0.5, 0.9))  # the item's own difficulty for this criterion
            truth = rng.random() < p
            a[item][f"c{c}"] = (truth if rng.random() > flip else not truth, None)
            b[item][f"c{c}"] = (truth if rng.random() > flip else not truth, None)
    return a, b


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def clustered_runs(
    rng: random.Random, criteria: int, documents: int, size: int, tau: float, drop: float = 0.0
) -> tuple[Verdicts, Verdicts, dict[int, Any]]:
    """Two runs whose documents drift as a whole (a N(0, tau) logit shift per document, criterion
    and run; the second run ``drop`` lower on the logit everywhere): verdicts and item → document."""
    a: Verdicts = {}
    b: Verdicts = {}
    cluster = {item: item // size for item in range(documents * size)}
    for c in range(criteria):
        shifts = [(rng.gauss(0, tau), rng.gauss(0, tau)) for _ in range(documents)]
        for item, document in cluster.items():
            base = rng.gauss(0.8, 1.5)  # the item's own difficulty, shared by both runs
            shift_a, shift_b = shifts[document]
            a.setdefault(item, {})[f"c{c}"] = (rng.random() < sigmoid(base + shift_a), None)
            b.setdefault(item, {})[f"c{c}"] = (rng.random() < sigmoid(base + shift_b - drop), None)
    return a, b, cluster


def intra_cluster_correlation(a: Verdicts, b: Verdicts, cluster: dict[int, Any], name: str = "c0") -> float:
    """The ANOVA estimate of the paired differences' intra-cluster correlation (equal cluster sizes)."""
    groups: dict[Any, list[float]] = {}
    for item, document in cluster.items():
        groups.setdefault(document, []).append(float(b[item][name][0]) - float(a[item][name][0]))
    size = len(next(iter(groups.values())))
    values = [d for ds in groups.values() for d in ds]
    mean = sum(values) / len(values)
    between = size * sum((sum(ds) / size - mean) ** 2 for ds in groups.values()) / (len(groups) - 1)
    within = sum((d - sum(ds) / size) ** 2 for ds in groups.values() for d in ds) / (len(values) - len(groups))
    return (between - within) / (between + (size - 1) * within) if between + (size - 1) * within else 0.0


def clustered(args: argparse.Namespace, rng: random.Random) -> None:
    documents, size = args.items // args.cluster_size, args.cluster_size
    shape = f"{documents} documents of {size} items, {args.criteria} criteria"
    print(f"clustered noise: {shape}, {args.comparisons} comparisons")
    print("  tau  ICC    false alarms: cluster_by  independent    power (drop): cluster_by  independent")
    for tau in (0.0, 0.5, 1.0, 1.5):
        alarms = [0, 0]
        found = [0, 0]
        iccs = []
        for n in range(args.comparisons):
            a, b, cluster = clustered_runs(rng, args.criteria, documents, size, tau)
            iccs.append(intra_cluster_correlation(a, b, cluster))
            alarms[0] += bool(compare_verdicts(a, b, "a", "b", seed=n, resamples=1000, clusters=cluster).regressed)
            alarms[1] += bool(compare_verdicts(a, b, "a", "b", seed=n, resamples=1000).regressed)
            a, b, cluster = clustered_runs(rng, 1, documents, size, tau, drop=args.drop)
            found[0] += bool(compare_verdicts(a, b, "a", "b", seed=n, resamples=1000, clusters=cluster).regressed)
            found[1] += bool(compare_verdicts(a, b, "a", "b", seed=n, resamples=1000).regressed)
        rate = [count / args.comparisons for count in (*alarms, *found)]
        icc = sum(iccs) / len(iccs)
        print(f"  {tau:3.1f}  {icc:5.3f}  {rate[0]:21.1%}  {rate[1]:11.1%}  {rate[2]:24.1%}  {rate[3]:11.1%}")


def planted(items: int, down: int, up: int, criteria: int = 10) -> tuple[Verdicts, Verdicts]:
    a: Verdicts = {i: {f"c{c}": (i % 2 == 0, None) for c in range(criteria)} for i in range(items)}
    b: Verdicts = {i: dict(row) for i, row in a.items()}
    passing = [i for i in range(items) if a[i]["c3"][0]]
    failing = [i for i in range(items) if not a[i]["c3"][0]]
    for i in passing[:down]:
        b[i]["c3"] = (False, None)
    for i in failing[:up]:
        b[i]["c3"] = (True, None)
    return a, b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparisons", type=int, default=200)
    parser.add_argument("--criteria", type=int, default=10)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--flip", type=float, default=0.1, help="the judge's chance of flipping a verdict")
    parser.add_argument("--cluster-size", type=int, default=10, help="items per document in the clustered noise")
    parser.add_argument("--drop", type=float, default=0.6, help="the real drop on the logit, for the power")
    parser.add_argument("--no-clustered", dest="clustered", action="store_false", help="skip the clustered noise")
    args = parser.parse_args()
    rng = random.Random(20261202)
    gated = uncorrected = 0
    for n in range(args.comparisons):
        a, b = noisy_runs(rng, args.criteria, args.items, args.flip)
        found = compare_verdicts(a, b, "a", "b", seed=n, resamples=2000)
        gated += bool(found.regressed)
        uncorrected += any(c.interval is not None and c.interval[1] < 0 for c in found.criteria)
    print(f"{args.comparisons} noise-only comparisons of {args.criteria} criteria × {args.items} items:")
    print(f"  false alarms, the gate (Holm):              {gated / args.comparisons:6.1%}  (target <= 6%)")
    print(f"  false alarms, any interval below 0 (before): {uncorrected / args.comparisons:6.1%}")
    marginal = compare_verdicts(*planted(args.items, 14, 4), run_a="a", run_b="b")
    real = compare_verdicts(*planted(args.items, 40, 2), run_a="a", run_b="b")
    print(f"  14 down / 4 up on one criterion:  {'fails' if marginal.regressed else 'passes'} the gate (should pass)")
    print(f"  40 down / 2 up on one criterion:  {'fails' if real.regressed else 'passes'} the gate (should fail)")
    if args.clustered:
        clustered(args, rng)


if __name__ == "__main__":
    main()
