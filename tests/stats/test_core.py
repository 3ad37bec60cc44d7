"""The statistics against textbook values (scale-and-statistics.md §4 and their sources)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.stats import core as stats


def test_wilson_at_textbook_points():
    assert stats.wilson(40, 50) == pytest.approx((0.670, 0.888), abs=5e-4)
    assert stats.wilson(160, 200) == pytest.approx((0.739, 0.850), abs=5e-4)
    assert stats.wilson(800, 1000) == pytest.approx((0.774, 0.824), abs=5e-4)
    assert stats.wilson(0, 0) is None and stats.wilson(0, 10)[0] == 0.0


def test_students_t_quantiles():
    assert stats.t_quantile(0.975, 1) == pytest.approx(12.706, abs=1e-3)
    assert stats.t_quantile(0.975, 10) == pytest.approx(2.228, abs=1e-3)
    assert stats.t_quantile(0.975, 1000) == pytest.approx(1.962, abs=1e-3)
    low, high = stats.t_interval([0.5] * 49 + [0.75])
    assert low < 0.505 < high


@pytest.mark.parametrize("df", [0.5, 1, 2, 3, 7, 30, 4999, 1e6])
@pytest.mark.parametrize("p", [1e-4, 0.025, 0.3, 0.5, 0.9, 0.975, 0.9999])
def test_t_quantile_inverts_the_cdf(df, p):
    quantile = stats.t_quantile(p, df)
    assert stats.t_cdf(quantile, df) == pytest.approx(p, rel=1e-9, abs=1e-12)


def test_t_quantile_in_the_far_tail_and_out_of_range():
    assert stats.t_quantile(0.9999, 1) == pytest.approx(3183.099, abs=1e-3)  # past a ±1000 bisection
    assert stats.t_quantile(0.5, 3) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="between 0 and 1"):
        stats.t_quantile(1.0, 5)


def test_mcnemar_exact_and_holm():
    assert stats.mcnemar(20, 8) == pytest.approx(0.036, abs=5e-4)
    assert stats.mcnemar(5, 5) == 1.0 and stats.mcnemar(0, 0) == 1.0
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_pass_at_k_and_pass_hat_k():
    assert stats.pass_hat_k(8, 6, 4) == pytest.approx(0.214, abs=5e-4)
    assert stats.pass_at_k(8, 6, 4) == 1.0
    assert stats.pass_hat_k(8, 8, 8) == 1.0 and stats.pass_at_k(8, 0, 3) == 0.0


def test_minimum_detectable_difference():
    assert stats.minimum_detectable_difference(200, 0.2) == pytest.approx(0.089, abs=5e-4)
    assert stats.minimum_detectable_difference(1000, 0.1) == pytest.approx(0.028, abs=5e-4)


def test_a_seeded_bootstrap_is_stable_to_three_decimals():
    deltas = [1, 0, 0, 1, 1, 0.5, 0, 1, -1, 0] * 20
    first = stats.paired_bootstrap(deltas, seed=7)
    assert first == pytest.approx(stats.paired_bootstrap(deltas, seed=7), abs=1e-12)
    assert first == pytest.approx(stats.paired_bootstrap(deltas, seed=8), abs=0.02)  # a new seed moves it little
    assert [round(v, 3) for v in first] == [round(v, 3) for v in stats.paired_bootstrap(deltas, seed=7)]


@given(st.integers(0, 200), st.integers(1, 200))
def test_wilson_holds_the_estimate(successes, n):
    successes = min(successes, n)
    low, high = stats.wilson(successes, n)
    assert 0.0 <= low <= successes / n <= high <= 1.0


def test_agreement_statistics():
    first = [True] * 160 + [False] * 40
    second = [True] * 145 + [False] * 15 + [True] * 15 + [False] * 25
    assert stats.cohen_kappa(first, second) == pytest.approx(0.53125)
    assert stats.krippendorff_alpha_nominal([[a, b] for a, b in zip(first, second, strict=True)]) == pytest.approx(
        1 - 399 * 60 / (2 * 320 * 80)
    )  # coincidences by hand: o_PF = o_FP = 30, n_P = 320, n_F = 80
    shrout_fleiss = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    assert stats.icc_2_1(shrout_fleiss) == pytest.approx(0.29, abs=5e-3)  # Shrout & Fleiss (1979), table 4
    assert stats.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert stats.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)


def test_clustered_intervals_count_clusters_not_items():
    from assay.stats.core import clustered_mean_interval, clustered_rate_interval, t_quantile, wilson

    # 10 documents × 5 questions, each document's questions all passed or all failed: the 50 verdicts
    # are worth 9 independent ones (CR1: 10/9 · Σ(y_g - p̂·n_g)² / N² = 0.01778; 0.16 / 0.01778 = 9).
    whole = [(5, 5)] * 8 + [(0, 5)] * 2
    assert clustered_rate_interval(whole) == pytest.approx(wilson(7.2, 9))
    assert clustered_rate_interval(whole)[0] < wilson(40, 50)[0] - 0.15  # far wider than 50 items suggest
    # Clusters as mixed as the whole: no effective loss, Wilson at the plain n.
    mixed = [(4, 5)] * 10
    assert clustered_rate_interval(mixed) == pytest.approx(wilson(40, 50))
    # Means: t with G-1 = 9 degrees of freedom over the clusters' residuals.
    low, high = clustered_mean_interval([(5.0, 5)] * 8 + [(0.0, 5)] * 2)
    assert (low + high) / 2 == pytest.approx(0.8)
    assert (high - low) / 2 == pytest.approx(t_quantile(0.975, 9) * math.sqrt(10 / 9 * 40 / 2500))
    assert clustered_rate_interval([(3, 5)]) is None  # one cluster: nothing to say
