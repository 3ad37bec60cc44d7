"""Which risk categories an eval's criteria can judge (the run's attack criteria are
``assay.run.attack_criteria``)."""

from __future__ import annotations

from assay.redteam.risks import risk_of_evaluator
from assay.results.criterion import Criterion


def judged_risks(criteria: list[Criterion]) -> set[str]:
    """The risk categories an eval's testing criteria (in their wire form) can judge."""
    found = set()
    for criterion in criteria:
        if isinstance(criterion, dict) and criterion.get("type", "azure_ai_evaluator") == "azure_ai_evaluator":
            risk = risk_of_evaluator(str(criterion.get("evaluator_name") or ""))
            if risk is not None:
                found.add(risk)
    return found
