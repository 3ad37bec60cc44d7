"""Failures clustered by their text: two kinds of reasons become two clusters, each named by the
terms that set it apart, the same way every time (a seeded start)."""

from __future__ import annotations

from assay.insights import cluster


def test_two_kinds_of_failure_are_two_clusters_named_by_their_terms():
    texts = [f"it gives no tracking number for order {i}" for i in range(5)]
    texts += [f"it is rude and dismissive to customer {i}" for i in range(7)]
    found = cluster(texts, seed=3)
    assert [sorted(c.members) for c in found] == [list(range(5, 12)), list(range(5))]  # largest first
    assert {"rude", "dismissive"} & set(found[0].terms) and {"tracking"} & set(found[1].terms)
    assert cluster(texts, seed=3)[0].members == found[0].members


def test_nothing_to_cluster():
    assert cluster([]) == []
    assert [c.members for c in cluster(["", ""])] == [[0, 1]]
