"""MinHash signatures, farthest-first (the lazy form equals the textbook one), and the smart pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from assay.sampling import Candidate, random_sample, smart_sample
from assay.sampling.farthest import farthest_first, farthest_first_eager
from assay.sampling.minhash import distance, normalize_text, signatures


def _jaccard(a: str, b: str) -> float:
    grams = [{t[i : i + 5] for i in range(len(t) - 4)} for t in (a, b)]
    return len(grams[0] & grams[1]) / len(grams[0] | grams[1])


def test_signatures_estimate_jaccard_distance():
    a = normalize_text("Where is my order #1042? It was due  on Monday.")
    b = normalize_text("where is my order #1042, it was due monday")
    c = normalize_text("Do you ship rain jackets to Oslo?")
    sig = signatures([a, b, c, a])
    assert (sig[0] == sig[3]).all()
    assert abs(float(distance(sig[0], sig[1:2])[0]) - (1 - _jaccard(a, b))) < 0.12
    assert float(distance(sig[0], sig[2:3])[0]) > 0.9
    assert normalize_text("  Ｏｒｄｅｒ\tSTATUS ") == "order status"  # NFKC, casefold, whitespace


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_lazy_farthest_first_picks_exactly_what_the_eager_one_does(seed):
    rng = np.random.default_rng(seed)
    # Few distinct slot values, so distances tie often and the seeded tie-break matters.
    sig = rng.integers(0, 3, size=(500, 16)).astype(np.uint32)
    sig[100:150] = sig[0]  # exact duplicates
    assert farthest_first(sig, 60, seed=seed) == farthest_first_eager(sig, 60, seed=seed)
    assert len(set(farthest_first(sig, 60, seed=seed))) == 60


def test_farthest_first_covers_every_cluster_before_repeating_one():
    clusters = [
        "where is my order number {}",
        "do you ship to city {}",
        "reset my password please {}",
        "the kettle arrived broken {}",
    ]
    texts = [normalize_text(c.format(i)) for c in clusters for i in range(50)]
    picks = farthest_first(signatures(texts), 4, seed=5)
    assert sorted(p // 50 for p in picks) == [0, 1, 2, 3]


def test_smart_sample_reports_each_stage():
    pool = [Candidate(f"k{i}", f"question about topic {i} and its details", f"f{i}") for i in range(20)]
    pool += [Candidate("dup", "question about topic 1 and its details", "f1")]
    pool += [Candidate("hi", "hi", "fh"), Candidate("empty", "", "fe")]
    pool += [Candidate("err", "a failed question here", "fx", ["error status: timeout"])]
    pool += [
        Candidate("cut", "a cut question here", "fc", ["truncated or unparseable content in gen_ai.input.messages"])
    ]
    pool += [Candidate("tool", "a tool question here", "ft", ["unanswered tool call lookup"])]
    report = smart_sample(pool, 5, seed=1)
    assert report.removed == {
        "exact duplicates": 1,
        "empty or trivial user text": 2,
        "error status": 1,
        "truncated or unparseable content": 1,
        "malformed or unanswered tool calls": 1,
    }
    assert len(report.picked) == 5 and all(k.startswith("k") for k in report.picked)
    assert report.lines()[0] == "26 candidates" and report.lines()[-1] == "5 picked (smart)"
    assert random_sample(pool, 5, seed=1).picked == random_sample(pool, 5, seed=1).picked
