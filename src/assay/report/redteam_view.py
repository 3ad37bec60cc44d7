"""The red-team part of a run page: overall attack success, rates per risk and technique with
their intervals, the risk × complexity table, and the attacks that succeeded, shown first."""

from __future__ import annotations

from typing import Any

from assay.redteam.runs import attacks_of
from assay.redteam.scorecard import Cell, Scorecard, describe
from assay.report.charts import rate_intervals
from assay.report.transcript import transcript
from assay.store import Store

SHOWN_ATTACKS = 50


def red_team_section(store: Store, run_id: str) -> dict[str, Any]:
    card = Scorecard.of(attacks_of(store.iter_output_items(run_id)))
    rows = [(f"risk: {risk}", cell) for risk, cell in card.by_risk.items()]
    rows += [(f"technique: {name}", cell) for name, cell in sorted(card.by_technique.items())]
    complexities = card.complexities()
    table = [
        [risk, *(describe(card.joint[(risk, c)]) if (risk, c) in card.joint else "" for c in complexities)]
        for risk in card.by_risk
    ]
    landed = []
    for output in store.iter_output_items(run_id, status="fail", limit=SHOWN_ATTACKS):
        item = output.datasource_item
        verdict = next((r for r in output.results if r.properties.get("attack_success")), None)
        if verdict is not None:
            landed.append(
                {
                    "id": output.datasource_item_id,
                    "risk": item.get("risk_category"),
                    "technique": item.get("attack_technique"),
                    "objective": item.get("objective"),
                    "reason": verdict.reason,
                    "transcript": transcript(item),
                }
            )
    return {
        "overall": describe(card.overall),
        "chart": rate_intervals([_bar(label, cell) for label, cell in rows]),
        "complexities": complexities,
        "table": table,
        "landed": landed,
        "successful": card.overall.successful,
    }


def _bar(label: str, cell: Cell) -> tuple[str, float | None, tuple[float, float] | None, str]:
    return label, cell.asr, cell.interval, f"{cell.successful}/{cell.decided}"
