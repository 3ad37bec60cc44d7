"""The peer's model-free classes: F1, BLEU, GLEU, METEOR, ROUGE and document retrieval."""

from __future__ import annotations

from enum import Enum
from typing import Any, TypedDict

from assay.azure.evaluators import EvaluatorBase, _number
from assay.azure.exceptions import ErrorTarget
from assay.results import Result


class F1ScoreEvaluator(EvaluatorBase):
    builtin, key, target = "builtin.f1_score", "f1_score", ErrorTarget.F1_EVALUATOR

    def __init__(self, *, threshold: float = 0.5) -> None:
        super().__init__(threshold=threshold)


class BleuScoreEvaluator(EvaluatorBase):
    builtin, key = "builtin.bleu_score", "bleu"

    def __init__(self, *, threshold: float = 0.5) -> None:
        super().__init__(threshold=threshold)


class GleuScoreEvaluator(EvaluatorBase):
    builtin, key = "builtin.gleu_score", "gleu"

    def __init__(self, *, threshold: float = 0.5) -> None:
        super().__init__(threshold=threshold)


class MeteorScoreEvaluator(EvaluatorBase):
    builtin, key = "builtin.meteor_score", "meteor"

    def __init__(self, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5, *, threshold: float = 0.5) -> None:
        super().__init__({"alpha": alpha, "beta": beta, "gamma": gamma}, threshold=threshold)


class RougeType(str, Enum):  # noqa: UP042 - the peer's type, whose str() gives the member name
    ROUGE_1 = "rouge1"
    ROUGE_2 = "rouge2"
    ROUGE_3 = "rouge3"
    ROUGE_4 = "rouge4"
    ROUGE_5 = "rouge5"
    ROUGE_L = "rougeL"


ROUGE_PARTS = ("precision", "recall", "f1_score")


class RougeScoreEvaluator(EvaluatorBase):
    """Passes when precision, recall and F1 each reach their threshold; ``rouge`` is the F1."""

    builtin, key, target = "builtin.rouge_score", "rouge", ErrorTarget.ROUGE_EVALUATOR

    def __init__(
        self,
        rouge_type: RougeType | str,
        *,
        precision_threshold: float = 0.5,
        recall_threshold: float = 0.5,
        f1_score_threshold: float = 0.5,
    ) -> None:
        thresholds = {
            "precision_threshold": precision_threshold,
            "recall_threshold": recall_threshold,
            "f1_score_threshold": f1_score_threshold,
        }
        for name, value in thresholds.items():
            _number(value, name, self.target)
        kind = rouge_type.value if isinstance(rouge_type, RougeType) else str(rouge_type)
        self._thresholds = {part: thresholds[f"{part}_threshold"] for part in ROUGE_PARTS}
        super().__init__({"rouge_type": kind, **thresholds}, reported_threshold=f1_score_threshold)

    def peer_properties(self, result: Result, inputs: dict[str, Any]) -> Any:
        found = result.properties or {}
        values: dict[str, float] = {part: float(found.get(f"rouge_{part}") or 0.0) for part in ROUGE_PARTS}
        passed = {part: values[part] >= self._thresholds[part] for part in ROUGE_PARTS}
        return {
            **{f"rouge_{part}": values[part] for part in ROUGE_PARTS},
            **{f"rouge_{part}_result": "pass" if passed[part] else "fail" for part in ROUGE_PARTS},
            **{f"rouge_{part}_passed": passed[part] for part in ROUGE_PARTS},
            **{f"rouge_{part}_threshold": self._thresholds[part] for part in ROUGE_PARTS},
        }


# The metrics document retrieval reports, each with whether higher is better.
RETRIEVAL_METRICS = {
    "ndcg@3": True,
    "xdcg@3": True,
    "fidelity": True,
    "top1_relevance": True,
    "top3_max_relevance": True,
    "holes": False,
    "holes_ratio": False,
    "total_retrieved_documents": True,
    "total_ground_truth_documents": True,
}


class RetrievalGroundTruthDocument(TypedDict):
    """A ``retrieval_ground_truth`` entry: a document and how relevant it is to the query."""

    document_id: str
    query_relevance_label: int


class RetrievedDocument(TypedDict):
    """A ``retrieved_documents`` entry: a document the search returned and its score."""

    document_id: str
    relevance_score: float


class DocumentRetrievalEvaluator(EvaluatorBase):
    builtin, key = "builtin.document_retrieval", "document_retrieval"
    target = ErrorTarget.DOCUMENT_RETRIEVAL_EVALUATOR

    def __init__(
        self,
        *,
        ground_truth_label_min: int = 0,
        ground_truth_label_max: int = 4,
        ndcg_threshold: float = 0.5,
        xdcg_threshold: float = 50.0,
        fidelity_threshold: float = 0.5,
        top1_relevance_threshold: float = 50.0,
        top3_max_relevance_threshold: float = 50.0,
        total_retrieved_documents_threshold: int = 50,
        total_ground_truth_documents_threshold: int = 50,
    ) -> None:
        self._thresholds: dict[str, float] = {
            "ndcg@3": ndcg_threshold,
            "xdcg@3": xdcg_threshold,
            "fidelity": fidelity_threshold,
            "top1_relevance": top1_relevance_threshold,
            "top3_max_relevance": top3_max_relevance_threshold,
            "holes": 0,
            "holes_ratio": 0,
            "total_retrieved_documents": total_retrieved_documents_threshold,
            "total_ground_truth_documents": total_ground_truth_documents_threshold,
        }
        super().__init__(
            {
                "ground_truth_label_min": ground_truth_label_min,
                "ground_truth_label_max": ground_truth_label_max,
                "ndcg_threshold": ndcg_threshold,
                "xdcg_threshold": xdcg_threshold,
                "fidelity_threshold": fidelity_threshold,
            },
            reported_threshold=ndcg_threshold,
        )

    def peer_properties(self, result: Result, inputs: dict[str, Any]) -> Any:
        found = result.properties or {}
        shown: dict[str, Any] = {name: found.get(name) for name in RETRIEVAL_METRICS}
        for name, higher in RETRIEVAL_METRICS.items():
            value, threshold = found.get(name), self._thresholds[name]
            passed = value is not None and (value >= threshold if higher else value <= threshold)
            shown.update(
                {
                    f"{name}_result": "pass" if passed else "fail",
                    f"{name}_passed": passed,
                    f"{name}_threshold": threshold,
                    f"{name}_higher_is_better": higher,
                }
            )
        return shown
