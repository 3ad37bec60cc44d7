"""Paired tests for two runs of one eval, one per kind of score, as microsoft/ai-agent-evals chooses
them (and scipy computes them; the tests hold the values scipy gave):

- pass/fail: McNemar's mid-p test on the items whose verdict flipped (between the exact test's
  conservatism and the asymptotic test's optimism; Fagerland et al. 2013);
- continuous scores: Student's paired t test on the differences;
- ordinal scores (a 1–5 scale): Wilcoxon's signed-rank test with Pratt's treatment of zero
  differences (ranked, then left out of the sums), exact for up to 50 differences without zeros
  or ties, the normal approximation with the tie and zero corrections otherwise;
- any of them when items come in clusters (``cluster_by``: the questions of one document, the
  turns of one conversation, the trials of one item): the cluster-robust test of the mean paired
  difference (``clustered_mean_test``), since the tests above take items to be independent and call
  a cluster that drifted as a whole a significant change.

Each returns a two-sided p-value; 1.0 when nothing differs.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from assay.stats.core import _clustered, _ranks, normal_sf, t_cdf

EXACT_WILCOXON = 50
"""Up to this many differences (no zeros, no ties) the signed-rank statistic's exact distribution is used."""


def mcnemar_mid_p(only_a: int, only_b: int) -> float:
    """``only_a``: items passed only in the first run; ``only_b``: only in the second."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    below: float = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    at_k: float = math.comb(n, k) / 2**n
    return min(1.0, 2 * below - at_k)


def paired_t(first: list[float], second: list[float]) -> float:
    """Student's paired t test of ``second`` − ``first``."""
    differences = [b - a for a, b in zip(first, second, strict=True)]
    n = len(differences)
    if n < 2 or all(d == 0 for d in differences):
        return 1.0
    mean = sum(differences) / n
    variance = sum((d - mean) ** 2 for d in differences) / (n - 1)
    if variance == 0:
        return 0.0  # every item moved by the same amount: no doubt left
    t = mean / math.sqrt(variance / n)
    return min(1.0, 2 * t_cdf(-abs(t), n - 1))


def wilcoxon_pratt(first: list[float], second: list[float]) -> float:
    """Wilcoxon's signed-rank test of ``second`` − ``first`` with Pratt's zero procedure."""
    differences = [b - a for a, b in zip(first, second, strict=True)]
    nonzero = [d for d in differences if d != 0]
    if not nonzero:
        return 1.0
    ranks = _ranks([abs(d) for d in differences])
    plus = sum(r for r, d in zip(ranks, differences, strict=True) if d > 0)
    minus = sum(r for r, d in zip(ranks, differences, strict=True) if d < 0)
    kept = [r for r, d in zip(ranks, differences, strict=True) if d != 0]
    zeros, ties = len(differences) - len(nonzero), len(set(kept)) < len(kept)
    if zeros == 0 and not ties and len(nonzero) <= EXACT_WILCOXON:
        return _exact_signed_rank(len(nonzero), min(plus, minus))
    n = len(differences)
    mean = n * (n + 1) / 4 - zeros * (zeros + 1) / 4
    variance: float = n * (n + 1) * (2 * n + 1) - zeros * (zeros + 1) * (2 * zeros + 1)
    counts: dict[float, int] = {}
    for rank in kept:
        counts[rank] = counts.get(rank, 0) + 1
    variance -= sum(c * (c * c - 1) for c in counts.values() if c > 1) / 2
    if variance <= 0:
        return 1.0
    z = (min(plus, minus) - mean) / math.sqrt(variance / 24)
    return min(1.0, 2 * normal_sf(abs(z)))


def _exact_signed_rank(n: int, statistic: float) -> float:
    """2·P(W ≤ statistic) for the signed-rank sum W of n untied ranks (counted by dynamic programming)."""
    top = n * (n + 1) // 2
    ways = [1] + [0] * top
    for rank in range(1, n + 1):
        for total in range(top, rank - 1, -1):
            ways[total] += ways[total - rank]
    below: float = sum(ways[: int(math.floor(statistic)) + 1]) / 2**n
    return min(1.0, 2 * below)


def clustered_mean_test(differences: Sequence[float], clusters: Sequence[Hashable]) -> float:
    """Two-sided p-value of "the mean paired difference is 0" for items in ``clusters`` (one key per
    difference): the ratio estimator's cluster-robust variance over the clusters' sums and sizes
    (``assay.stats.core._clustered``, CR1; Obuchowski 1998's statistic for clustered matched pairs) and
    Student's t on G−1 degrees of freedom, so a handful of clusters is not taken for many items.
    The test that matches ``clustered_mean_interval``: p < 0.05 exactly when its 95% interval
    leaves 0 out."""
    sums: dict[Hashable, list[float]] = {}
    for difference, key in zip(differences, clusters, strict=True):
        found = sums.setdefault(key, [0.0, 0.0])
        found[0] += difference
        found[1] += 1
    estimate = _clustered([(total, int(count)) for total, count in sums.values()])
    if estimate is None or not any(differences):
        return 1.0
    mean, variance, groups = estimate
    if variance == 0:
        return 0.0 if mean else 1.0
    return min(1.0, 2 * t_cdf(-abs(mean) / math.sqrt(variance), groups - 1))
