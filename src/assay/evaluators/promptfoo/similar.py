"""promptfoo's ``similar`` (``similar:cosine``, ``similar:dot``, ``similar:euclidean``): the output's
embedding against each expected value's, from the run's embeddings model (a promptfoo config's
``defaultTest.options.provider.embedding``, else OpenAI's ``text-embedding-3-large``, as promptfoo's
default).

Cosine and dot product pass at or above the threshold (0.75), Euclidean distance at or below it (its
score 1 / (1 + distance)); ``not-`` flips the pass and the score. Given several expected values, the
assertion passes when one does (inverted, when none does).
"""

from __future__ import annotations

import math
from typing import Any

from assay.errors import ItemError
from assay.evaluators.promptfoo.assertion import Assertion
from assay.evaluators.promptfoo.checks import Seen, Verdict
from assay.llm import Model, ModelError

METRICS = {
    "similar": "cosine",
    "similar:cosine": "cosine",
    "similar:dot": "dot_product",
    "similar:euclidean": "euclidean",
}
EPSILON = 2.220446049250313e-16
"""JavaScript's ``Number.EPSILON``, which promptfoo allows at the threshold."""


def measure(expected: list[float], found: list[float], metric: str) -> float:
    if len(expected) != len(found):
        raise ItemError("Vectors must be of equal length")
    dot = math.fsum(a * b for a, b in zip(expected, found, strict=True))
    if metric == "dot_product":
        return dot
    if metric == "euclidean":
        return math.sqrt(math.fsum((a - b) ** 2 for a, b in zip(expected, found, strict=True)))
    norms = math.sqrt(math.fsum(a * a for a in expected)) * math.sqrt(math.fsum(b * b for b in found))
    return 0.0 if norms == 0 else dot / norms


def judged(similarity: float, threshold: float, inverse: bool, metric: str) -> Verdict:
    if metric == "euclidean":
        near = similarity <= threshold + EPSILON
        passed = similarity >= threshold - EPSILON if inverse else near
        score = 1 / (1 + similarity)
        below = f"Distance {similarity:.2f} is less than or equal to threshold {threshold:g}"
        above = f"Distance {similarity:.2f} is greater than threshold {threshold:g}"
        reason = (above if inverse else below) if passed else (below if inverse else above)
        return Verdict(passed, 1 - score if inverse else score, reason)
    passed = similarity <= threshold + EPSILON if inverse else similarity >= threshold - EPSILON
    at_least = f"Similarity {similarity:.2f} is greater than or equal to threshold {threshold:g}"
    less = f"Similarity {similarity:.2f} is less than threshold {threshold:g}"
    reason = (less if inverse else at_least) if passed else (at_least if inverse else less)
    return Verdict(passed, 1 - similarity if inverse else similarity, reason)


async def similar(kind: str, assertion: Assertion, seen: Seen, inverse: bool, embeddings: Model | None) -> Verdict:
    value: Any = assertion.get("value")
    if not (isinstance(value, str) or (isinstance(value, list) and value)):
        raise ItemError("Similarity assertion type must have a string or array of strings value")
    if embeddings is None:
        raise ItemError(f"a {kind!r} assertion needs an embeddings model: configure one with api: embeddings")
    threshold = float(assertion.get("threshold", 0.75))
    metric = METRICS[kind]
    expected = [str(v) for v in (value if isinstance(value, list) else [value])]
    try:
        vectors = await embeddings.embed([*expected, seen.output])
    except ModelError as exc:
        return Verdict(False, 0.0, f"Embedding failed: {exc}")
    found = vectors[-1]
    verdicts = [judged(measure(vector, found, metric), threshold, inverse, metric) for vector in vectors[:-1]]
    if len(verdicts) == 1:
        return verdicts[0]
    if inverse:  # every value must be far enough: the first that is not decides, else the closest
        failing = next((verdict for verdict in verdicts if not verdict.passed), None)
        return failing or min(verdicts, key=lambda verdict: verdict.score)
    passing = next((verdict for verdict in verdicts if verdict.passed), None)
    best = max(verdict.score for verdict in verdicts)
    return passing or Verdict(False, best, "None of the provided values met the similarity threshold")
