"""Failures grouped by what they have in common: TF-IDF vectors of each failed result's text (the
judge's reason and the response), k-means with a seeded start, and for each cluster the terms that
set it apart. A model names the clusters afterwards when one is configured (``assay.api.insights``,
which merges clusters the model names alike); the terms are the name otherwise.

How many clusters is found, not counted: the texts are a graph weighted by their cosine
similarity, and the number of kinds is where the spectrum of its normalized Laplacian jumps (the
eigengap: k loosely joined groups give k eigenvalues near 0 and a gap after them). The texts are
then clustered in that spectral embedding (k-means on the first k eigenvectors, normalized:
spectral clustering as Ng, Jordan and Weiss give it). Beyond ``SPECTRAL_SAMPLE`` texts a seeded
sample is clustered and the others join the nearest cluster's centre, so the work stays cubic in
that, not in n. A failure kind whose texts share no word with each other cannot be found this way;
the model that names the clusters merges those it names alike (``assay.api.insights``).
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
MAX_CLUSTERS = 10
SPECTRAL_SAMPLE = 1500


@dataclass
class Cluster:
    members: list[int]
    """Indexes of the texts in this cluster."""
    terms: list[str] = field(default_factory=list)
    """The terms with the most weight in it, beyond their weight overall."""


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z0-9']+", text.lower()) if w not in STOP]


def cluster(texts: list[str], seed: int = 0, k: int | None = None) -> list[Cluster]:
    """``texts`` in at most ``k`` clusters (by default as many as the texts' kinds, found by the
    silhouette), largest first; empty texts join the nearest cluster like any other."""
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
    if k is None:
        k, labels = _kinds(vectors, seed)
    else:
        k = min(k, len(texts))
        labels = _kmeans(vectors, k, seed)
    clusters = [Cluster([i for i, label in enumerate(labels) if label == c]) for c in range(k)]
    clusters = [c for c in clusters if c.members]
    overall = vectors.mean(axis=0)
    for found in clusters:
        lift = vectors[found.members].mean(axis=0) - overall
        found.terms = [vocabulary[i] for i in np.argsort(-lift)[:4] if lift[i] > 0]
    return sorted(clusters, key=lambda c: -len(c.members))


def _kinds(vectors: object, seed: int) -> tuple[int, list[int]]:
    """How many kinds the texts are (the eigengap) and each text's kind (spectral clustering)."""
    import numpy as np

    data = np.asarray(vectors)
    n = len(data)
    present = np.flatnonzero(np.linalg.norm(data, axis=1) > 0)  # empty texts join a cluster after
    if len(present) < 3:
        return 1, [0] * n
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(present, SPECTRAL_SAMPLE, replace=False)) if len(present) > SPECTRAL_SAMPLE else present
    similarity = (data[sample] @ data[sample].T).clip(min=0)
    np.fill_diagonal(similarity, 0)  # a text is not evidence of its own kind
    scale = 1 / np.sqrt(np.maximum(similarity.sum(axis=1), 1e-12))
    values, embedding = np.linalg.eigh(scale[:, None] * similarity * scale[None, :])
    spectrum = 1 - values[::-1]  # the normalized Laplacian's eigenvalues, smallest first
    top = min(MAX_CLUSTERS, len(sample) - 1)
    k = int(np.argmax(np.diff(spectrum[: top + 1]))) + 1
    if k == 1:
        return 1, [0] * n
    points = embedding[:, ::-1][:, :k]
    points = points / np.maximum(np.linalg.norm(points, axis=1, keepdims=True), 1e-12)
    sampled = np.asarray(_kmeans(points, k, seed))
    centres = np.array([data[sample][sampled == c].mean(axis=0) for c in range(k)])
    labels = np.argmax(data @ centres.T, axis=1)  # the sample keeps its own; the rest join the nearest
    labels[sample] = sampled
    largest = np.bincount(labels[present], minlength=k).argmax()
    labels[np.setdiff1d(np.arange(n), present)] = largest
    return k, [int(label) for label in labels]


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
