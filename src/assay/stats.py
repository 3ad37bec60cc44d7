"""Numbers a user can trust: intervals for rates (Wilson: good at small n and near 0 or 1, where
the normal approximation fails) and means (Student's t), paired comparisons (McNemar's exact test,
a paired bootstrap), Holm's correction across criteria, pass@k and pass^k, and the smallest
difference a comparison of n items can detect. Pure Python and numpy: no statistics library is a
dependency."""

from __future__ import annotations

import math

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal."""


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval for ``successes`` out of ``n``, as fractions; None when n is 0."""
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


def paired_bootstrap(
    differences: list[float], *, seed: int = 0, resamples: int = 10_000, level: float = 0.95
) -> tuple[float, float] | None:
    """A percentile bootstrap interval for the mean of paired differences (one per item, resampled
    by item with a seeded generator, so the same data gives the same interval); None without data."""
    if not differences:
        return None
    import numpy as np

    values = np.asarray(differences, dtype=float)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
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
    tail = 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection on the CDF)."""
    low, high = -1e3, 1e3
    for _ in range(200):
        middle = (low + high) / 2
        if t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2


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
