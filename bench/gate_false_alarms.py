"""How often `assay runs compare --fail-on regression` calls judge noise a regression.

    python bench/gate_false_alarms.py [--comparisons 200] [--criteria 10] [--items 200]

Each simulated comparison pairs two runs of the same system: every criterion's verdict on every
item is judge noise around the same pass rate (each item has its own true pass probability, so
verdicts are paired as real runs' are). A gate that controls the error across criteria raises a
false alarm in at most about 5% of comparisons, however many criteria there are; printed beside it
is the rate of the uncorrected rule (any criterion's interval below 0) on the same comparisons.
Then the planted cases: one criterion 14 down / 4 up (passes the gate) and 40 down / 2 up (fails it).
"""

from __future__ import annotations

import argparse
import random

from assay.compare import Verdicts, compare_verdicts


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


if __name__ == "__main__":
    main()
