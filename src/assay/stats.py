"""Intervals a user can trust: the Wilson score interval for a rate (good at small n and at rates
near 0 or 1, where the normal approximation fails)."""

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
    return max(0.0, centre - half), min(1.0, centre + half)


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
