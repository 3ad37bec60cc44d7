"""The comparison's statistics against the values scipy 1.17.1 and statsmodels 0.15.0 gave for the
same data (computed once, written here: neither library is a dependency). ``binomtest(...)
.proportion_ci(method="wilsoncc")``, McNemar's mid-p as microsoft/ai-agent-evals writes it with
``scipy.stats.binom``, ``ttest_rel``, ``wilcoxon(zero_method="pratt")``, an intercept-only OLS with
cluster-robust errors (``use_t=True``), and ``cohens_kappa``."""

from __future__ import annotations

import pytest

from assay.stats.core import clustered_mean_interval, cohen_kappa, cohen_kappa_interval, wilson_cc
from assay.stats.paired import clustered_mean_test, mcnemar_mid_p, paired_t, wilcoxon_pratt

CLOSE = {"rel": 1e-9, "abs": 1e-12}


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (7, 20, 0.1630866797163093, 0.5905104338485733),
        (0, 15, 0.0, 0.25346786096061696),
        (15, 15, 0.7465321390393831, 1.0),
        (183, 200, 0.8651648077634854, 0.9482115740025201),
        (1, 3, 0.01765279427865346, 0.8746655280897369),
    ],
)
def test_wilson_with_continuity_correction_is_scipys(successes, n, low, high):
    assert wilson_cc(successes, n) == (pytest.approx(low, **CLOSE), pytest.approx(high, **CLOSE))


@pytest.mark.parametrize(
    ("only_a", "only_b", "p"),
    [(14, 4, 0.01921081542968751), (40, 2, 2.1532287064474102e-10), (3, 0, 0.125), (5, 5, 1.0), (0, 1, 0.5)],
)
def test_mcnemar_mid_p_is_ai_agent_evals(only_a, only_b, p):
    assert mcnemar_mid_p(only_a, only_b) == pytest.approx(p, **CLOSE)


def test_paired_t_is_scipys_ttest_rel():
    first = [0.61, 0.72, 0.55, 0.80, 0.66, 0.59, 0.71, 0.68, 0.74, 0.62, 0.70, 0.65]
    second = [0.66, 0.75, 0.54, 0.86, 0.70, 0.63, 0.70, 0.75, 0.79, 0.61, 0.77, 0.69]
    assert paired_t(first, second) == pytest.approx(0.0018112395542326436, rel=1e-7)
    assert paired_t(first, first) == 1.0


def test_wilcoxon_pratt_with_zeros_and_ties_is_scipys_normal_approximation():
    first = [3, 4, 2, 5, 3, 3, 4, 1, 2, 4, 3, 5, 2, 3, 4, 4, 3, 2, 5, 1]
    second = [4, 4, 3, 5, 4, 2, 5, 2, 2, 5, 4, 5, 3, 3, 5, 4, 4, 3, 5, 2]
    assert wilcoxon_pratt(first, second) == pytest.approx(0.0022819372533154484, rel=1e-9)


def test_wilcoxon_without_zeros_or_ties_is_scipys_exact_test():
    first = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    second = [1.5, 3.2, 2.7, 5.9, 5.4, 7.8, 6.3, 10.1]
    assert wilcoxon_pratt(first, second) == pytest.approx(0.078125, **CLOSE)
    assert wilcoxon_pratt(first, first) == 1.0


def test_the_clustered_interval_is_statsmodels_cluster_robust_ols():
    values = [1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0]
    groups = [0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 4, 5, 5, 6, 6, 7, 7]
    sums: dict[int, list[float]] = {}
    for value, group in zip(values, groups, strict=True):
        sums.setdefault(group, [0.0, 0])[0] += value
        sums[group][1] += 1
    low, high = clustered_mean_interval([(total, int(count)) for total, count in sums.values()])
    assert (low, high) == (pytest.approx(0.40638303620358085, rel=1e-7), pytest.approx(0.893616963796419, rel=1e-7))


def test_the_clustered_test_is_the_clustered_intervals_and_the_paired_t_for_single_items():
    """p = 0.05 exactly at the bound of the statsmodels-checked interval above; with every item a
    cluster of its own, it is Student's paired t test."""
    values = [1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0]
    groups = [0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 4, 5, 5, 6, 6, 7, 7]
    low, high = 0.40638303620358085, 0.893616963796419
    assert clustered_mean_test([v - low for v in values], groups) == pytest.approx(0.05, rel=1e-6)
    assert clustered_mean_test([v - high for v in values], groups) == pytest.approx(0.05, rel=1e-6)
    differences = [0.5, -1.0, 2.0, 0.0, 1.5, 1.0, -0.5, 2.5]
    single = clustered_mean_test(differences, list(range(len(differences))))
    assert single == pytest.approx(paired_t([0.0] * len(differences), differences), rel=1e-12)


def test_a_cluster_that_drifted_as_a_whole_is_not_taken_for_many_items():
    """Three documents of twenty, ten questions each, went from pass to fail together: McNemar sees
    thirty independent flips (p < 1e-8); the cluster-robust test sees three documents (p > 0.05)."""
    differences = [-1.0 if item < 30 else 0.0 for item in range(200)]
    documents = [item // 10 for item in range(200)]
    assert mcnemar_mid_p(30, 0) < 1e-8
    assert clustered_mean_test(differences, documents) > 0.05


def test_kappas_interval_is_statsmodels():
    first = [True, True, False, True, False, True, True, True, False, False]
    first += [True, True, False, True, True, True, False, True, True, False]
    second = [True, False, False, True, False, True, True, True, True, False]
    second += [True, True, False, True, False, True, False, True, True, True]
    assert cohen_kappa(first, second) == pytest.approx(0.5604395604395604, **CLOSE)
    low, high = cohen_kappa_interval(first, second)
    assert (low, high) == (pytest.approx(0.17936530336299406, rel=1e-9), pytest.approx(0.9415138175161268, rel=1e-9))
