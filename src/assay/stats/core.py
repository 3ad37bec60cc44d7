"""Numbers a user can trust: intervals for rates (Wilson: good at small n and near 0 or 1, where
the normal approximation fails) and means (Student's t), paired comparisons (McNemar's exact test,
a paired bootstrap; the tests a comparison chooses among are in ``assay.stats.paired``), Holm's
correction across criteria, pass@k and pass^k, agreement (κ with its interval, α, ICC), and the
smallest difference a comparison of n items can detect. Pure Python and numpy: no statistics
library is a dependency."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal."""


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval for ``successes`` out of ``n``, as fractions; None when n is 0.
    Both may be fractional: a clustered rate's effective sample size (``clustered_rate_interval``)."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in 0..{n}, got {successes}")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # At 0 and n successes the bound is 0 or 1 exactly (floating point would miss it by 1e-16).
    return (0.0 if successes == 0 else max(0.0, centre - half)), (1.0 if successes == n else min(1.0, centre + half))


def wilson_cc(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson's interval with continuity correction (Newcombe's method 4, scipy's ``wilsoncc``):
    what microsoft/ai-agent-evals reports for a pass rate; a little wider than ``wilson``."""
    if n <= 0:
        return None
    p, q, zz = successes / n, 1 - successes / n, z * z
    centre, denominator = 2 * n * p + zz, 2 * (n + zz)
    low = 0.0
    if successes > 0:
        low = max(0.0, (centre - 1 - z * math.sqrt(zz - 2 - 1 / n + 4 * p * (n * q + 1))) / denominator)
    high = 1.0
    if successes < n:
        high = min(1.0, (centre + 1 + z * math.sqrt(zz + 2 - 1 / n + 4 * p * (n * q - 1))) / denominator)
    return low, high


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2))


def paired_bootstrap(
    differences: list[float],
    *,
    seed: int = 0,
    resamples: int = 10_000,
    level: float = 0.95,
    clusters: list[Any] | None = None,
) -> tuple[float, float] | None:
    """A percentile bootstrap interval for the mean of paired differences (one per item, resampled
    by item with a seeded generator, so the same data gives the same interval); None without data.

    With ``clusters`` (one key per difference), whole clusters are resampled: items that share a
    document or a conversation move together, as they are not independent."""
    if not differences:
        return None
    import numpy as np

    values = np.asarray(differences, dtype=float)
    rng = np.random.default_rng(seed)
    if clusters is None:
        means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    else:
        keys = {key: index for index, key in enumerate(dict.fromkeys(clusters))}
        members = np.asarray([keys[key] for key in clusters])
        sums = np.bincount(members, weights=values, minlength=len(keys))
        sizes = np.bincount(members, minlength=len(keys)).astype(float)
        chosen = rng.integers(0, len(keys), size=(resamples, len(keys)))
        means = sums[chosen].sum(axis=1) / sizes[chosen].sum(axis=1)
    tail = (1 - level) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        for numerator in (even, odd):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    square = t * t
    if square < df:  # near the centre, from the mass between -|t| and |t| (the tail's form loses digits there)
        middle = 0.5 * _incomplete_beta(0.5, df / 2.0, square / (df + square))
        return 0.5 + middle if t > 0 else 0.5 - middle
    tail = 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + square))
    return 1.0 - tail if t > 0 else tail


def t_pdf(t: float, df: float) -> float:
    log_scale = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_scale - (df + 1) / 2 * math.log1p(t * t / df))


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom: Newton's method from the
    normal quantile, each step kept inside a bracket, bisected where Newton would leave it (heavy
    tails at small ``df``). A few CDF evaluations where bisection alone took 200, which cost every
    run summary 10 ms per criterion."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie strictly between 0 and 1, got {p}")
    if p == 0.5:
        return 0.0
    low, high = -1.0, 1.0
    while t_cdf(low, df) > p:
        low *= 10
    while t_cdf(high, df) < p:
        high *= 10
    t = min(max(NormalDist().inv_cdf(p), low), high)
    for _ in range(200):
        error = t_cdf(t, df) - p
        if error < 0:
            low = t
        else:
            high = t
        density = t_pdf(t, df)
        following = t - error / density if density > 0 else low - 1
        if not low <= following <= high:
            following = (low + high) / 2
        if abs(following - t) <= 1e-13 * max(1.0, abs(t)):
            return following
        t = following
    return t


def t_interval(values: list[float], level: float = 0.95) -> tuple[float, float] | None:
    """Student's t interval for the mean; None with fewer than two values."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(1 - (1 - level) / 2, n - 1) * sd / math.sqrt(n)
    return mean - half, mean + half


def t_interval_from_moments(n: int, total: float, squares: float, level: float = 0.95) -> tuple[float, float] | None:
    """The same interval from a count, a sum and a sum of squares (what a database aggregates)."""
    if n < 2:
        return None
    mean = total / n
    variance = max((squares - n * mean * mean) / (n - 1), 0.0)
    half = t_quantile(1 - (1 - level) / 2, n - 1) * math.sqrt(variance / n)
    return mean - half, mean + half


def _clustered(clusters: list[tuple[float, int]]) -> tuple[float, float, int] | None:
    """The mean of every value and the variance of that mean when values come in clusters that
    need not be independent inside (the questions of one document, the turns of one conversation):
    the ratio estimator's cluster-robust variance with the CR1 factor G/(G-1). ``clusters`` holds
    each cluster's sum and count. None with fewer than two clusters."""
    clusters = [(total, count) for total, count in clusters if count]
    groups, n = len(clusters), sum(count for _, count in clusters)
    if groups < 2:
        return None
    mean = sum(total for total, _ in clusters) / n
    residuals = sum((total - mean * count) ** 2 for total, count in clusters)
    return mean, groups / (groups - 1) * residuals / (n * n), groups


def clustered_mean_interval(clusters: list[tuple[float, int]], level: float = 0.95) -> tuple[float, float] | None:
    """A t interval (G-1 degrees of freedom) for the mean of clustered values; see ``_clustered``."""
    found = _clustered(clusters)
    if found is None:
        return None
    mean, variance, groups = found
    half = t_quantile(1 - (1 - level) / 2, groups - 1) * math.sqrt(variance)
    return mean - half, mean + half


def clustered_rate_interval(clusters: list[tuple[int, int]]) -> tuple[float, float] | None:
    """Wilson's interval for a pass rate over clustered items, at the effective sample size
    p(1-p)/variance (the design effect divided out): as many independent items as the clusters are
    worth. ``clusters`` holds each cluster's passes and decided items."""
    found = _clustered([(float(passed), count) for passed, count in clusters])
    if found is None:
        return None
    rate, variance, _ = found
    n = sum(count for _, count in clusters)
    # All alike (variance 0: every item passed, or every one failed): the plain n. Capped at n, since
    # clusters more mixed inside than out would otherwise claim more items than there are.
    effective = float(n) if variance <= 0 else min(float(n), rate * (1 - rate) / variance)
    return wilson(rate * effective, effective)


def mcnemar(b: int, c: int) -> float:
    """McNemar's test on the discordant pairs (b: passed only in the first run, c: only in the
    second): the exact two-sided binomial p-value, which is cheap at any size."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail: float = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (family-wise error across criteria)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance at least one of k of the n trials succeeds (Chen et al.): 1 − C(n−c, k) / C(n, k)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance all of k of the n trials succeed (τ-bench's pass^k): C(c, k) / C(n, k)."""
    return math.comb(c, k) / math.comb(n, k) if k <= n else 0.0


def minimum_detectable_difference(n: int, discordant: float, z_sum: float = 2.80) -> float | None:
    """The smallest pass-rate difference a paired comparison of ``n`` items detects at α = 0.05
    (two-sided) with power 0.8, given the share of items whose verdicts differ."""
    if n <= 0:
        return None
    return z_sum * math.sqrt(max(discordant, 1.0 / n) / n)


# -- agreement between a judge and human labels ------------------------------------------------


def cohen_kappa(first: list[bool], second: list[bool]) -> float | None:
    """Cohen's κ for two raters' pass/fail verdicts on the same items: (p_o − p_e) / (1 − p_e)."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    share_a, share_b = sum(first) / n, sum(second) / n
    expected = share_a * share_b + (1 - share_a) * (1 - share_b)
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)


def cohen_kappa_interval(first: list[bool], second: list[bool], z: float = Z95) -> tuple[float, float] | None:
    """A 95% interval for Cohen's κ from its large-sample variance (Fleiss, Cohen and Everitt 1969,
    as statsmodels' ``cohens_kappa`` computes it); None without data or when κ is undefined."""
    n = len(first)
    kappa = cohen_kappa(first, second)
    if kappa is None or n == 0:
        return None
    cells = [[0.0, 0.0], [0.0, 0.0]]
    for a, b in zip(first, second, strict=True):
        cells[int(a)][int(b)] += 1 / n
    rows = [sum(cells[i]) for i in range(2)]
    cols = [cells[0][j] + cells[1][j] for j in range(2)]
    expected = rows[0] * cols[0] + rows[1] * cols[1]
    if expected >= 1:
        return None
    on_diagonal = sum(cells[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(2))
    off = sum(cells[i][j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j)
    variance = (on_diagonal + (1 - kappa) ** 2 * off - (kappa - expected * (1 - kappa)) ** 2) / (1 - expected) ** 2 / n
    half = z * math.sqrt(max(variance, 0.0))
    return max(-1.0, kappa - half), min(1.0, kappa + half)


def bootstrap_statistic(
    units: list[Any], statistic: Any, *, seed: int = 0, resamples: int = 2000, level: float = 0.95
) -> tuple[float, float] | None:
    """A seeded percentile interval for ``statistic(units)``, the units resampled with replacement
    (what α and ICC get: their sampling distributions have no simple closed form)."""
    import random

    if len(units) < 2:
        return None
    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        value = statistic([units[rng.randrange(len(units))] for _ in units])
        if value is not None:
            values.append(float(value))
    if not values:
        return None
    values.sort()
    tail = (1 - level) / 2
    return values[int(tail * (len(values) - 1))], values[int((1 - tail) * (len(values) - 1))]


def krippendorff_alpha_nominal(units: list[list[Any]]) -> float | None:
    """Krippendorff's α for nominal values: each unit is the values its raters gave (missing ones
    left out); units with fewer than two values do not count."""
    coincidences: dict[tuple[Any, Any], float] = {}
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, first in enumerate(values):
            for j, second in enumerate(values):
                if i != j:
                    coincidences[(first, second)] = coincidences.get((first, second), 0.0) + 1.0 / (m - 1)
    totals: dict[Any, float] = {}
    for (first, _), count in coincidences.items():
        totals[first] = totals.get(first, 0.0) + count
    n = sum(totals.values())
    if n <= 1:
        return None
    disagreement = sum(count for (a, b), count in coincidences.items() if a != b)
    expected = sum(totals[a] * totals[b] for a in totals for b in totals if a != b)
    return 1.0 if expected == 0 else 1.0 - (n - 1) * disagreement / expected


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1  # ties share their mean rank
        i = j + 1
    return ranks


def spearman(first: list[float], second: list[float]) -> float | None:
    """Spearman's ρ: Pearson's correlation of the ranks (ties given their mean rank)."""
    if len(first) < 2 or len(first) != len(second):
        return None
    a, b = _ranks(first), _ranks(second)
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    cov = sum((x - mean_a) * (y - mean_b) for x, y in zip(a, b, strict=True))
    spread = math.sqrt(sum((x - mean_a) ** 2 for x in a) * sum((y - mean_b) ** 2 for y in b))
    return None if spread == 0 else cov / spread


def icc_2_1(ratings: list[list[float]]) -> float | None:
    """ICC(2,1) (Shrout & Fleiss): two-way random effects, absolute agreement, one rater; each row
    is a target's ratings by the same k raters."""
    n, k = len(ratings), len(ratings[0]) if ratings else 0
    if n < 2 or k < 2 or any(len(row) != k for row in ratings):
        return None
    grand = sum(map(sum, ratings)) / (n * k)
    rows = [sum(row) / k for row in ratings]
    columns = [sum(row[j] for row in ratings) / n for j in range(k)]
    between_targets = k * sum((r - grand) ** 2 for r in rows) / (n - 1)
    between_raters = n * sum((c - grand) ** 2 for c in columns) / (k - 1)
    residual = sum((ratings[i][j] - rows[i] - columns[j] + grand) ** 2 for i in range(n) for j in range(k))
    error = residual / ((n - 1) * (k - 1))
    denominator = between_targets + (k - 1) * error + k * (between_raters - error) / n
    return None if denominator == 0 else (between_targets - error) / denominator
