"""document_retrieval: ranking quality of retrieved documents against labelled ground truth.

The algorithms (NDCG@3, XDCG@3, fidelity, top-1/top-3 relevance, holes) and thresholds are those
of azure-ai-evaluation's ``DocumentRetrievalEvaluator``; the score is NDCG@3.
"""

from __future__ import annotations

import math
from typing import Any

from assay.errors import ConfigError, ItemError, MissingInput
from assay.evaluators.base import Evaluator, EvaluatorSpec, Metric, Score
from assay.evaluators.inputs import json_input

K = 3
XDCG_DISCOUNT = 0.6


def _dcg(labels: list[int]) -> float:
    return sum((2.0**label - 1) / math.log2(rank + 1) for rank, label in enumerate(labels[:K], 1))


def _xdcg(labels: list[int]) -> float:
    numerator = sum(25 * label * XDCG_DISCOUNT ** (rank - 1) for rank, label in enumerate(labels[:K], 1))
    return numerator / sum(XDCG_DISCOUNT ** (rank - 1) for rank in range(1, K + 1))


def _weighted_by_rating(labels: list[int], low: int, high: int) -> float:
    counts = {str(i): 0 for i in range(low + 1, high + 1)}
    for label in labels:
        if label >= low + 1:
            counts[str(label)] += 1
    # Sorted by the label's text, as the peer does (it only differs for labels of 10 and above).
    ordered = [count for _, count in sorted(counts.items())]
    weights = [2.0 ** (i + 1) - 1 for i in range(low + 1, high + 1)]
    return sum(c * w for c, w in zip(ordered, weights, strict=True))


MAX_DOCUMENTS = 10_000
"""The most ground-truth or retrieved documents an item may list (the peer's limit)."""


def _documents(inputs: dict[str, Any], low: int, high: int) -> tuple[dict[Any, int], dict[Any, float]]:
    """The labelled and the retrieved documents, checked; the errors say what the peer's do."""
    truth = json_input(inputs, "retrieval_ground_truth")
    retrieved = inputs.get("retrieved_documents")
    retrieved = json_input(inputs, "retrieved_documents") if retrieved is not None else []
    if not isinstance(truth, list) or not truth:
        raise MissingInput(
            "'retrieval_ground_truth' parameter must contain at least one item: a list of "
            "{document_id, query_relevance_label}"
        )
    labels: dict[Any, int] = {}
    for index, doc in enumerate(truth):
        label = doc.get("query_relevance_label") if isinstance(doc, dict) else None
        if not isinstance(doc, dict) or doc.get("document_id") is None or label is None:
            raise MissingInput(
                f"retrieval_ground_truth[{index}]: Invalid input data was found in the retrieval ground truth. "
                "Ensure that all items in the 'retrieval_ground_truth' array contain 'document_id' and "
                "'query_relevance_label' properties."
            )
        if not isinstance(label, int) or isinstance(label, bool):
            raise ItemError(f"retrieval_ground_truth[{index}]: Query relevance labels must be integer values.")
        if not low <= label <= high:
            side, bound = (
                ("less than the configured minimum", "min")
                if label < low
                else ("greater than the configured maximum", "max")
            )
            raise ItemError(
                f"retrieval_ground_truth[{index}] is labelled {label}, outside {low}..{high}: A query relevance label "
                f"{side} value was detected in the evaluation input data. Check the range of ground truth label "
                f"values in the input data and set the value of ground_truth_label_{bound} to the appropriate value "
                "for your data."
            )
        labels[doc["document_id"]] = label
    scores: dict[Any, float] = {}
    for index, doc in enumerate(retrieved if isinstance(retrieved, list) else []):
        score = doc.get("relevance_score") if isinstance(doc, dict) else None
        if not isinstance(doc, dict) or doc.get("document_id") is None or score is None:
            raise MissingInput(
                f"retrieved_documents[{index}]: Invalid input data was found in the retrieved documents. Ensure "
                "that all items in the 'retrieved_documents' array contain 'document_id' and 'relevance_score' "
                "properties."
            )
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            raise ItemError(
                f"retrieved_documents[{index}]: Retrieved document relevance score must be a numerical value."
            )
        scores[doc["document_id"]] = score
    if len(truth) > MAX_DOCUMENTS or len(scores) > MAX_DOCUMENTS:
        raise ItemError(
            "'retrieval_ground_truth' and 'retrieved_documents' inputs should contain no more than "
            f"{MAX_DOCUMENTS} items."
        )
    return labels, scores


def document_retrieval(
    ground_truth_label_min: int = 0,
    ground_truth_label_max: int = 4,
    ndcg_threshold: float = 0.5,
    xdcg_threshold: float = 50.0,
    fidelity_threshold: float = 0.5,
    top1_relevance_threshold: float = 50.0,
    top3_max_relevance_threshold: float = 50.0,
    total_retrieved_documents_threshold: int = 50,
    total_ground_truth_documents_threshold: int = 50,
) -> Evaluator:
    low, high = ground_truth_label_min, ground_truth_label_max
    for name, bound in (("minimum", low), ("maximum", high)):
        if not isinstance(bound, int) or isinstance(bound, bool):
            raise ConfigError(f"The ground truth label {name} must be an integer value (got {bound!r}).")
    if low >= high:
        raise ConfigError(
            f"ground_truth_label_min={low}, ground_truth_label_max={high}: The ground truth label maximum must be "
            "strictly greater than the ground truth label minimum."
        )
    thresholds = {
        f"ndcg@{K}": ndcg_threshold,
        f"xdcg@{K}": xdcg_threshold,
        "fidelity": fidelity_threshold,
        "top1_relevance": top1_relevance_threshold,
        "top3_max_relevance": top3_max_relevance_threshold,
        "total_retrieved_documents": total_retrieved_documents_threshold,
        "total_ground_truth_documents": total_ground_truth_documents_threshold,
    }

    def metrics(labels: dict[Any, int], scores: dict[Any, float]) -> dict[str, float]:
        ranked = [doc for doc, _ in sorted(scores.items(), key=lambda kv: kv[1], reverse=True)]
        ideal = sorted(labels.values(), reverse=True)
        found = [labels.get(doc, 0) for doc in ranked]
        holes = len(set(ranked) - set(labels))
        values: dict[str, float] = {
            f"ndcg@{K}": 0.0,
            f"xdcg@{K}": 0.0,
            "fidelity": 0.0,
            "top1_relevance": 0.0,
            "top3_max_relevance": 0.0,
            "holes": holes,
            "holes_ratio": holes / len(ranked) if ranked else 0,
            "total_retrieved_documents": len(ranked),
            "total_ground_truth_documents": len(labels),
        }
        if any(found):
            by_rating = _weighted_by_rating(ideal, low, high)
            values.update(
                {
                    f"ndcg@{K}": _dcg(found) / _dcg(ideal),
                    f"xdcg@{K}": _xdcg(found),
                    "fidelity": _weighted_by_rating(found, low, high) / by_rating if by_rating else math.nan,
                    "top1_relevance": found[0],
                    "top3_max_relevance": max(found[:K]),
                }
            )
        return values

    async def evaluate(inputs: dict[str, Any]) -> Score:
        values = metrics(*_documents(inputs, low, high))
        properties: dict[str, Any] = dict(values)
        for name, value in values.items():
            limit = thresholds.get(name, 0)
            higher_is_better = name in thresholds
            properties[f"{name}_passed"] = value >= limit if higher_is_better else value <= limit
            properties[f"{name}_threshold"] = limit
        ndcg = float(values[f"ndcg@{K}"])
        return Score(ndcg, passed=ndcg >= ndcg_threshold, properties=properties)

    return evaluate


SPEC = EvaluatorSpec(
    name="builtin.document_retrieval",
    description="NDCG@3, XDCG@3, fidelity, top-k relevance and holes of a retrieval result.",
    category="rag",
    required_inputs=["retrieval_ground_truth", "retrieved_documents"],
    metrics=[Metric(name="ndcg@3", type="continuous", min_value=0, max_value=1, threshold=0.5)],
    init_parameters={
        "ground_truth_label_min": {"type": "integer", "default": 0},
        "ground_truth_label_max": {"type": "integer", "default": 4},
        "ndcg_threshold": {"type": "number", "default": 0.5},
        "xdcg_threshold": {"type": "number", "default": 50.0},
        "fidelity_threshold": {"type": "number", "default": 0.5},
    },
    factory=document_retrieval,
)
