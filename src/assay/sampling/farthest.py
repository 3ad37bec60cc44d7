"""Seeded farthest-first traversal (Gonzalez 1985) over MinHash signatures, never an N×N matrix.

Each pick is the point farthest from every earlier pick. ``nearest`` is the running-minimum
vector of each point's distance to the picks; it is kept lazily: an entry is an upper bound
(distances only shrink as picks are added) refreshed against the newer picks only when the point
reaches the top of a max-heap. A refreshed point still on top is the true farthest, so the picks
are exactly those of the eager algorithm (every point updated after every pick), with the same
seeded tie-break, at a fraction of the work: most points never come near the top again.
"""

from __future__ import annotations

import heapq

import numpy as np

from assay.sampling.minhash import Signatures, distance


def farthest_first(signatures: Signatures, count: int, seed: int = 0) -> list[int]:
    """Indices of ``count`` picks; ties at equal distance go to a seeded random order."""
    total, slots = signatures.shape if signatures.size else (0, 0)
    if count <= 0 or total == 0:
        return []
    priority = np.random.default_rng(seed).permutation(total)  # the tie-break, fixed per seed
    wanted = min(count, total)
    picks = np.empty(wanted, dtype=np.int64)
    picked = np.empty((wanted, slots), dtype=signatures.dtype)  # the picks' rows, contiguous
    picks[0] = int(np.argmin(priority))
    picked[0] = signatures[picks[0]]
    made = 1
    # Distances as whole numbers of differing slots (exact, and cheap to compare): ``nearest`` starts
    # at the largest possible, a valid bound before any pick is looked at.
    nearest = np.full(total, slots, dtype=np.int64)
    checked = np.zeros(total, dtype=np.int64)  # how many picks each bound has seen
    heap = [(-slots, int(priority[i]), i) for i in range(total) if i != picks[0]]
    heapq.heapify(heap)
    while made < wanted:
        _, rank, index = heapq.heappop(heap)
        if checked[index] < made:
            since, row = int(checked[index]), signatures[index]
            if made - since <= 8:  # the common case: numpy's no-axis count is several times cheaper per call
                same = max(np.count_nonzero(picked[j] == row) for j in range(since, made))
            else:
                same = (picked[since:made] == row).sum(axis=1).max()
            nearest[index] = min(int(nearest[index]), slots - int(same))
            checked[index] = made
            heapq.heappush(heap, (-int(nearest[index]), rank, index))
            continue
        picks[made] = index
        picked[made] = signatures[index]
        made += 1
    return [int(i) for i in picks]


def farthest_first_eager(signatures: Signatures, count: int, seed: int = 0) -> list[int]:
    """The textbook form (every distance updated after every pick): the reference the lazy one must match."""
    total = len(signatures)
    if count <= 0 or total == 0:
        return []
    priority = np.random.default_rng(seed).permutation(total)
    picks = [int(np.argmin(priority))]
    nearest = distance(signatures[picks[0]], signatures)
    nearest[picks[0]] = -1.0
    while len(picks) < min(count, total):
        np.minimum(nearest, distance(signatures[picks[-1]], signatures), out=nearest)
        nearest[picks] = -1.0
        best = nearest.max()
        tied = np.flatnonzero(nearest == best)
        picks.append(int(tied[np.argmin(priority[tied])]))
    return picks
