"""How well a run's judges agree with people: per criterion, Cohen's κ and Krippendorff's α of the
verdicts, the true positive and true negative rates against the human pass labels, and, where
people gave scores, Spearman's ρ and ICC(2,1) of the scores (``assay judges agreement``, the
review queue's page, and the calibration a gate asks for).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from assay.stats.core import (
    bootstrap_statistic,
    cohen_kappa,
    cohen_kappa_interval,
    icc_2_1,
    krippendorff_alpha_nominal,
    spearman,
)

if TYPE_CHECKING:
    from assay.results import OutputItem, Result


def judged_results(outputs: Iterable[OutputItem]) -> dict[tuple[str, int], Result]:
    """(criterion, item) → the result that gave a verdict."""
    judged: dict[tuple[str, int], Result] = {}
    for output in outputs:
        for result in output.results:
            if result.status == "completed" and result.passed is not None:
                judged[(result.name, output.datasource_item_id)] = result
    return judged


def agreement(name: str, labels: dict[int, dict[str, Any]], judged: dict[tuple[str, int], Result]) -> dict[str, Any]:
    pairs = [(labels[item], judged[(name, item)]) for item in sorted(labels) if (name, item) in judged]
    human = [p[0]["passed"] for p in pairs]
    judge = [bool(p[1].passed) for p in pairs]
    matched = list(zip(human, judge, strict=True))
    positives = [j for h, j in matched if h]
    negatives = [j for h, j in matched if not h]
    scored = [(float(h["score"]), j.score) for h, j in pairs if h["score"] is not None and j.score is not None]
    return {
        "criterion": name,
        "n": len(pairs),
        "agreement": sum(h == j for h, j in matched) / len(pairs) if pairs else None,
        "kappa": cohen_kappa(human, judge),
        "kappa_ci": cohen_kappa_interval(human, judge),
        "alpha": krippendorff_alpha_nominal([[h, j] for h, j in matched]),
        "alpha_ci": bootstrap_statistic([[h, j] for h, j in matched], krippendorff_alpha_nominal),
        "tpr": sum(positives) / len(positives) if positives else None,
        "tnr": (len(negatives) - sum(negatives)) / len(negatives) if negatives else None,
        "spearman": spearman([h for h, _ in scored], [j for _, j in scored]),
        "icc": icc_2_1([[h, j] for h, j in scored]),
        "icc_ci": bootstrap_statistic([[h, j] for h, j in scored], icc_2_1) if len(scored) > 2 else None,
    }
