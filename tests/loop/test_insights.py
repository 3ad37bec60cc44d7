"""Failures clustered by their text: two kinds of reasons become two clusters, each named by the
terms that set it apart, the same way every time (a seeded start)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from assay.api.insights import merge_alike
from assay.loop.insights import cluster


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


# Five kinds of failure as a judge words them: each kind's reasons share the words that name it,
# in three phrasings, with three responses of its own, and numbers that differ every time.
KINDS = [
    (
        [
            "The response gives no tracking number for order {n}.",
            "No tracking number was provided for the order {n}.",
            "Missing the tracking number the user asked for (order {n}).",
        ],
        ["Your order {n} is on its way.", "Order {n} ships soon, thanks for waiting.", "We are processing order {n}."],
    ),
    (
        [
            "The reply is rude and dismissive toward the customer.",
            "Rude tone: the agent insults the customer.",
            "Rude, condescending wording to the user.",
        ],
        ["That is a silly question, read the manual.", "Obviously you did not read anything.", "Stop bothering us."],
    ),
    (
        [
            "States a refund window of {d} days; the policy says 30.",
            "Wrong refund policy: {d} days instead of 30 days.",
            "Cites an incorrect refund period of {d} days.",
        ],
        [
            "Refunds are accepted within {d} days.",
            "You can get your money back for {d} days.",
            "Refund period: {d} days.",
        ],
    ),
    (
        [
            "Called the weather tool instead of the order lookup tool.",
            "Used get_weather where lookup_order was needed.",
            "Wrong tool call: weather forecast instead of order status.",
        ],
        ["The weather in Paris is sunny.", "Forecast: rain tomorrow in Lyon.", "It will be 12 degrees today."],
    ),
    (
        [
            "Answered in French although the user wrote in English.",
            "Response language is French, the question was English.",
            "Language mismatch: French reply to an English question.",
        ],
        ["Bonjour, votre commande est en route.", "Merci, nous traitons votre demande.", "Je ne peux pas vous aider."],
    ),
]


def failures(kinds: int, n: int, seed: int = 0) -> tuple[list[str], list[int]]:
    """``n`` failures of the first ``kinds`` kinds, in turn; their texts and their kinds."""
    rng = random.Random(seed)
    texts, truth = [], []
    for i in range(n):
        reasons, responses = KINDS[i % kinds]
        values = {"n": rng.randint(1000, 9999), "d": rng.choice([7, 14, 60, 90])}
        texts.append(f"{rng.choice(reasons)} {rng.choice(responses)}".format(**values))
        truth.append(i % kinds)
    return texts, truth


def kinds_in(found, truth) -> list[set[int]]:
    return [{truth[i] for i in c.members} for c in found]


@pytest.mark.parametrize("kinds", [1, 2, 3, 5])
@pytest.mark.parametrize("n", [100, 1000])
def test_as_many_clusters_are_found_as_there_are_kinds(kinds, n):
    texts, truth = failures(kinds, n)
    found = cluster(texts)
    assert sorted(len(c.members) for c in found) == sorted(Counter(truth).values())
    assert all(len(kind) == 1 for kind in kinds_in(found, truth))  # each cluster one kind


@pytest.mark.parametrize("kinds", [2, 3, 5])
@pytest.mark.parametrize("seed", range(3))
def test_twenty_failures_never_put_two_kinds_together(kinds, seed):
    """Four to ten texts of a kind may share no word at all: words alone can split a kind then
    (the model's names merge it, ``merge_alike``), but never join two."""
    texts, truth = failures(kinds, 20, seed)
    found = cluster(texts, seed=seed)
    assert all(len(kind) == 1 for kind in kinds_in(found, truth))
    assert {k for kind in kinds_in(found, truth) for k in kind} == set(range(kinds))
    assert kinds <= len(found) <= kinds + 1


def test_clusters_a_model_names_alike_are_one_with_their_parts_kept():
    def made(number: int, label: str, weight: int) -> dict:
        samples = [{"id": f"{number}-{i}"} for i in range(weight)]
        return {"id": f"cluster-{number}", "label": label, "description": "", "weight": weight, "samples": samples}

    merged = merge_alike([made(1, "Rude tone", 6), made(2, "No tracking number", 5), made(3, "rude  TONE", 4)])
    assert [(c["id"], c["label"], c["weight"]) for c in merged] == [
        ("cluster-1", "Rude tone", 10),
        ("cluster-2", "No tracking number", 5),
    ]
    assert [sub["id"] for sub in merged[0]["subClusters"]] == ["cluster-1.1", "cluster-1.2"]
    assert len(merged[0]["samples"]) == 10 and "subClusters" not in merged[1]
