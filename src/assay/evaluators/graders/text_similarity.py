"""text_similarity: a similarity score between ``input`` and ``reference`` against ``pass_threshold``.

``fuzzy_match`` is rapidfuzz's normalised Indel ratio (``fuzz.ratio / 100``); the BLEU, GLEU,
METEOR and ROUGE metrics are the same code as the builtin NLP evaluators; ``cosine`` is the cosine
similarity of the two texts' embeddings, from the ``models:`` entry with ``api: embeddings``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from rapidfuzz import fuzz

from assay.errors import ConfigError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score, computes_only
from assay.evaluators.inputs import text_input
from assay.evaluators.nlp import scores
from assay.evaluators.nlp.tokenize import nltk_tokenize
from assay.llm import Model


def _tokens(metric: Callable[[Any, Any], float]) -> Callable[[str, str], float]:
    return lambda output, reference: metric(nltk_tokenize(reference), nltk_tokenize(output))


def _rouge(kind: str) -> Callable[[str, str], float]:
    return lambda output, reference: scores.rouge(kind, output, reference)[2]


METRICS: dict[str, Callable[[str, str], float]] = {
    "fuzzy_match": lambda output, reference: float(fuzz.ratio(output, reference)) / 100.0,
    "bleu": _tokens(scores.bleu),
    "gleu": _tokens(scores.gleu),
    "meteor": _tokens(scores.meteor),
    **{f"rouge_{n}": _rouge(f"rouge{n}") for n in range(1, 6)},
    "rouge_l": _rouge("rougeL"),
}


def text_similarity(
    evaluation_metric: str = "fuzzy_match", pass_threshold: float | None = None, embeddings: Model | None = None
) -> Evaluator:
    if pass_threshold is not None and (
        isinstance(pass_threshold, bool) or not isinstance(pass_threshold, (int, float))
    ):
        raise ConfigError("text_similarity needs a numeric pass_threshold, e.g. 0.8")
    # None inside a multi grader: a score for the formula, no verdict of its own.
    threshold = None if pass_threshold is None else float(pass_threshold)
    if evaluation_metric == "cosine":
        if embeddings is None:
            raise ConfigError(
                "text_similarity 'cosine' compares embeddings: no embeddings model is configured",
                hint="add a models: entry with api: embeddings (e.g. {model: text-embedding-3-small, api: embeddings})",
            )
        return _cosine(embeddings, threshold)
    metric = METRICS.get(evaluation_metric)
    if metric is None:
        known = ", ".join([*METRICS, "cosine"])
        raise ConfigError(f"text_similarity evaluation_metric {evaluation_metric!r} is not one of {known}")

    def compute(inputs: dict[str, Any]) -> Score:
        value = metric(text_input(inputs, "input"), text_input(inputs, "reference"))
        passed = None if threshold is None else value >= threshold
        return Score(value, passed=passed, properties={"evaluation_metric": evaluation_metric})

    return computes_only(compute)


def _cosine(embeddings: Model, threshold: float | None) -> Evaluator:
    async def evaluate(inputs: dict[str, Any]) -> Score:
        first, second = await embeddings.embed([text_input(inputs, "input"), text_input(inputs, "reference")])
        norms = math.sqrt(sum(x * x for x in first)) * math.sqrt(sum(y * y for y in second))
        value = sum(x * y for x, y in zip(first, second, strict=False)) / norms if norms else 0.0
        properties = {"evaluation_metric": "cosine", "embeddings_model": embeddings.config.model}
        return Score(value, passed=None if threshold is None else value >= threshold, properties=properties)

    return evaluate


SPEC = EvaluatorSpec(
    name="text_similarity",
    description="OpenAI grader: fuzzy_match, bleu, gleu, meteor, rouge_1..5, rouge_l or cosine (embeddings), "
    "passed at pass_threshold.",
    category="graders",
    required_inputs=["input", "reference"],
    metrics=[Metric(name="text_similarity", type="continuous", min_value=0, max_value=1, threshold=None)],
    init_parameters={
        "evaluation_metric": {"type": "string", "enum": sorted([*METRICS, "cosine"])},
        "pass_threshold": {"type": "number"},
    },
    factory=text_similarity,
)
