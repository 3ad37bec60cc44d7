"""Failures grouped by what they have in common: TF-IDF vectors of each failed result's text (the
judge's reason and the response), k-means with a seeded start, and for each cluster the terms that
set it apart. A model names the clusters afterwards when one is configured (``assay.api.insights``);
the terms are the name otherwise.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

STOP = frozenset(
    "a an and are as at be but by for from has have in is it its of on or that the this to was were with "
    "not no does do did which what who will would can could should response query answer".split()
)
MAX_CLUSTERS = 6


@dataclass
class Cluster:
    members: list[int]
    """Indexes of the texts in this cluster."""
    terms: list[str] = field(default_factory=list)
    """The terms with the most weight in it, beyond their weight overall."""


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z0-9']+", text.lower()) if w not in STOP]


def cluster(texts: list[str], seed: int = 0, k: int | None = None) -> list[Cluster]:
    """``texts`` in at most ``k`` clusters (by default about √(n/2), at most ``MAX_CLUSTERS``),
    largest first; empty texts join the nearest cluster like any other."""
    import numpy as np

    if not texts:
        return []
    docs = [Counter(words(t)) for t in texts]
    vocabulary = sorted({w for d in docs for w in d})
    if not vocabulary:
        return [Cluster(list(range(len(texts))))]
    index = {w: i for i, w in enumerate(vocabulary)}
    frequency = Counter(w for d in docs for w in d)
    idf = np.array([math.log((1 + len(docs)) / (1 + frequency[w])) + 1 for w in vocabulary])
    vectors = np.zeros((len(docs), len(vocabulary)))
    for row, doc in enumerate(docs):
        for word, count in doc.items():
            vectors[row, index[word]] = count * idf[index[word]]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1, norms)
    k = k or min(MAX_CLUSTERS, max(1, round(math.sqrt(len(texts) / 2))))
    k = min(k, len(texts))
    labels = _kmeans(vectors, k, seed)
    clusters = [Cluster([i for i, label in enumerate(labels) if label == c]) for c in range(k)]
    clusters = [c for c in clusters if c.members]
    overall = vectors.mean(axis=0)
    for found in clusters:
        lift = vectors[found.members].mean(axis=0) - overall
        found.terms = [vocabulary[i] for i in np.argsort(-lift)[:4] if lift[i] > 0]
    return sorted(clusters, key=lambda c: -len(c.members))


def _kmeans(vectors: object, k: int, seed: int, rounds: int = 50) -> list[int]:
    """k-means on unit vectors (cosine), started k-means++ style from a seeded generator."""
    import numpy as np

    data = np.asarray(vectors)
    rng = np.random.default_rng(seed)
    centres = [data[rng.integers(len(data))]]
    while len(centres) < k:
        distance = np.min([1 - data @ c for c in centres], axis=0).clip(min=0)
        total = distance.sum()
        chosen = rng.choice(len(data), p=distance / total) if total > 0 else rng.integers(len(data))
        centres.append(data[chosen])
    labels = np.argmax(data @ np.array(centres).T, axis=1)
    for _ in range(rounds):  # move each centre to its members' mean until no text changes cluster
        centres = [data[labels == c].mean(axis=0) if (labels == c).any() else centres[c] for c in range(k)]
        moved = np.argmax(data @ np.array(centres).T, axis=1)
        if (moved == labels).all():
            break
        labels = moved
    return [int(label) for label in labels]
