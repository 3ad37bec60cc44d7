"""Evaluators that compare text with a reference and need no model: F1, BLEU, GLEU, METEOR, ROUGE."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from assay.errors import ConfigError
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score, computes_only
from assay.evaluators.catalog import Catalog
from assay.evaluators.inputs import text_input
from assay.evaluators.nlp import scores
from assay.evaluators.nlp.tokenize import nltk_tokenize

NLP_INPUTS = {"required_inputs": ["response", "ground_truth"], "category": "nlp"}


def _texts(inputs: dict[str, Any]) -> tuple[str, str]:
    return text_input(inputs, "response"), text_input(inputs, "ground_truth")


def f1_score() -> Evaluator:
    def compute(inputs: dict[str, Any]) -> Score:
        return Score(scores.f1(*_texts(inputs)))

    return computes_only(compute)


def _on_tokens(metric: Callable[[Sequence[str], Sequence[str]], float]) -> Evaluator:
    """An evaluator comparing the peer's tokens of ground_truth (reference) and response."""

    def compute(inputs: dict[str, Any]) -> Score:
        response, ground_truth = _texts(inputs)
        return Score(metric(nltk_tokenize(ground_truth), nltk_tokenize(response)))

    return computes_only(compute)


def bleu_score() -> Evaluator:
    return _on_tokens(scores.bleu)


def gleu_score() -> Evaluator:
    return _on_tokens(scores.gleu)


def meteor_score(alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5) -> Evaluator:
    """NLTK METEOR; ``alpha`` weighs precision against recall, ``beta`` and ``gamma`` shape the
    fragmentation penalty (the peer's constructor parameters and defaults)."""
    for name, value in (("alpha", alpha), ("beta", beta), ("gamma", gamma)):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ConfigError(f"{name} must be a number, got {value!r}")
    return _on_tokens(lambda reference, hypothesis: scores.meteor(reference, hypothesis, alpha, beta, gamma))


def rouge_score(
    rouge_type: str = "rougeL",
    precision_threshold: float = 0.5,
    recall_threshold: float = 0.5,
    f1_score_threshold: float = 0.5,
) -> Evaluator:
    """ROUGE F-measure as the score; precision and recall, each with its threshold, in properties.

    The criterion passes only when all three reach their thresholds, as the peer reports them.
    """
    kind = {"rouge_l": "rougeL", "rougel": "rougeL"}.get(rouge_type.lower(), rouge_type)
    if kind not in scores.ROUGE_TYPES:
        raise ConfigError(f"rouge_type {rouge_type!r} is not one of {', '.join(scores.ROUGE_TYPES)}")
    thresholds = {"precision": precision_threshold, "recall": recall_threshold, "f1_score": f1_score_threshold}
    for name, value in thresholds.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ConfigError(f"{name}_threshold must be a number, got {value!r}")

    def compute(inputs: dict[str, Any]) -> Score:
        response, ground_truth = _texts(inputs)
        precision, recall, fmeasure = scores.rouge(kind, response, ground_truth)
        values = {"precision": precision, "recall": recall, "f1_score": fmeasure}
        checks = {name: values[name] >= thresholds[name] for name in values}
        properties = {
            "rouge_type": kind,
            **{f"rouge_{name}": value for name, value in values.items()},
            **{f"rouge_{name}_threshold": float(thresholds[name]) for name in values},
            **{f"rouge_{name}_passed": passed for name, passed in checks.items()},
        }
        return Score(fmeasure, passed=all(checks.values()), properties=properties)

    return computes_only(compute)


def _spec(name: str, factory: Any, metric: str, description: str, **extra: Any) -> EvaluatorSpec:
    return EvaluatorSpec(
        name=f"builtin.{name}",
        description=description,
        metrics=[Metric(name=metric, type="continuous", min_value=0, max_value=1, threshold=0.5)],
        factory=factory,
        **{**NLP_INPUTS, **extra},
    )


def register(catalog: Catalog) -> None:
    catalog.add(
        _spec("f1_score", f1_score, "f1_score", "SQuAD-style token-overlap F1 between response and ground truth.")
    )
    catalog.add(_spec("bleu_score", bleu_score, "bleu", "Sentence BLEU (NLTK, smoothing method 4)."))
    catalog.add(_spec("gleu_score", gleu_score, "gleu", "Sentence Google-BLEU (NLTK)."))
    catalog.add(
        _spec(
            "meteor_score",
            meteor_score,
            "meteor",
            "METEOR with stems and WordNet synonyms (NLTK).",
            init_parameters={
                "alpha": {"type": "number", "default": 0.9},
                "beta": {"type": "number", "default": 3.0},
                "gamma": {"type": "number", "default": 0.5},
            },
        )
    )
    catalog.add(
        _spec(
            "rouge_score",
            rouge_score,
            "rouge_f1_score",
            "ROUGE-N (1-5) or ROUGE-L precision, recall and F-measure (rouge_score, unstemmed).",
            init_parameters={
                "rouge_type": {"type": "string", "enum": list(scores.ROUGE_TYPES), "default": "rougeL"},
                "precision_threshold": {"type": "number", "default": 0.5},
                "recall_threshold": {"type": "number", "default": 0.5},
                "f1_score_threshold": {"type": "number", "default": 0.5},
            },
        )
    )
