"""MinHash signatures of short texts, all at once with numpy: 128 slots over character 5-grams.

Texts are normalised (NFKC, casefold, whitespace collapsed) first. Each 5-gram gets a 64-bit
polynomial hash, mixed and cut to 32 bits; slot ``i`` keeps the minimum of ``a_i·h + b_i`` (mod
2³², ``a_i`` odd, so a permutation of the hash space) over the text's 5-grams. Work goes in chunks
of texts so memory stays flat; per chunk, one pass per slot over every 5-gram of the chunk.
A text shorter than five characters is one shingle; an empty text must be filtered out before
(two empty sets would look identical).
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import numpy.typing as npt

SLOTS = 128
SHINGLE = 5
CHUNK = 2000
_SPACE = re.compile(r"\s+")

Signatures = npt.NDArray[np.uint32]


def normalize_text(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def signatures(texts: list[str], slots: int = SLOTS, seed: int = 1) -> Signatures:
    """One row of ``slots`` uint32 minima per (already normalised, non-empty) text."""
    rng = np.random.default_rng(seed)
    a = (rng.integers(1, 2**32, slots, dtype=np.uint64) | np.uint64(1)).astype(np.uint32)
    b = rng.integers(0, 2**32, slots, dtype=np.uint64).astype(np.uint32)
    out = np.empty((len(texts), slots), dtype=np.uint32)
    for first in range(0, len(texts), CHUNK):
        hashes, owner = _shingle_hashes(texts[first : first + CHUNK])
        starts = np.flatnonzero(np.diff(owner, prepend=-1))  # each text's first shingle
        rows = first + owner[starts]
        for slot in range(slots):
            out[rows, slot] = np.minimum.reduceat(hashes * a[slot] + b[slot], starts)
    return out


def _shingle_hashes(texts: list[str]) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """Every 5-gram's 32-bit hash, and the index of the text it came from (ascending)."""
    padded = [t if len(t) >= SHINGLE else t.ljust(SHINGLE, "\x01") for t in texts]
    codes = np.frombuffer("\x00".join(padded).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    windows = len(codes) - SHINGLE + 1
    value = np.zeros(windows, dtype=np.uint64)
    crosses = np.zeros(windows, dtype=bool)
    separator = codes == 0
    for offset in range(SHINGLE):
        value = value * np.uint64(1099511628211) + codes[offset : offset + windows]
        crosses |= separator[offset : offset + windows]
    keep = np.flatnonzero(~crosses)
    value = value[keep]
    # murmur3's finaliser: spread every input bit over the 32 bits kept
    value ^= value >> np.uint64(33)
    value *= np.uint64(0xFF51AFD7ED558CCD)
    value ^= value >> np.uint64(33)
    value *= np.uint64(0xC4CEB9FE1A85EC53)
    value ^= value >> np.uint64(33)
    lengths = np.fromiter((len(t) + 1 for t in padded), dtype=np.int64, count=len(padded))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    owner = np.searchsorted(starts, keep, side="right") - 1
    return (value >> np.uint64(32)).astype(np.uint32), owner


def distance(signature: Signatures, others: Signatures) -> npt.NDArray[np.float64]:
    """Estimated Jaccard distance: the share of slots that differ (itself a metric on signatures)."""
    result: npt.NDArray[np.float64] = (others != signature).mean(axis=-1)
    return result
