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
