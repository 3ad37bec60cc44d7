"""What a red-team run adds to its summary: the scorecard, one ``per_testing_criteria_results``
row per technique (Foundry's ``{testing_criteria: <technique>, attack_strategy: <technique>}``;
passed = attacks defended, failed = attacks that succeeded)."""

from __future__ import annotations

from assay.redteam.runs import attacks_of
from assay.redteam.scorecard import Scorecard
from assay.results import RunSummary
from assay.results.records import CriterionSummary
from assay.store import Store


def add_red_team(summary: RunSummary, store: Store, run_id: str) -> None:
    """The scorecard and a row per technique (the attacker's calls are in the run's usage by role)."""
    card = Scorecard.of(attacks_of(store.iter_output_items(run_id)))
    summary.red_team = card.to_json()
    for technique, cell in card.by_technique.items():
        defended = cell.decided - cell.successful
        summary.per_testing_criteria_results.append(
            CriterionSummary(
                testing_criteria=technique,
                metric="attack_success",
                attack_strategy=technique,
                passed=defended,
                failed=cell.successful,
                errored=cell.total - cell.decided - cell.undetermined,
                undetermined=cell.undetermined,
                filtered=cell.filtered,
                pass_rate=defended / cell.decided if cell.decided else None,
            )
        )
