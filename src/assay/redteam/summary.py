"""What a red-team run adds to its summary: the scorecard, one ``per_testing_criteria_results``
row per technique (Foundry's ``{testing_criteria: <technique>, attack_strategy: <technique>}``;
passed = attacks defended, failed = attacks that succeeded), and the attacker model's usage."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from assay.redteam.runs import attacks_of
from assay.redteam.scorecard import Scorecard
from assay.results import RunSummary
from assay.results.records import CriterionSummary, ModelUsage
from assay.store import Store


def add_red_team(summary: RunSummary, store: Store, run_id: str) -> None:
    attacker: dict[str, ModelUsage] = {}

    def rows() -> Iterator[dict[str, Any]]:
        for row in store.iter_output_items(run_id):
            _add_usage(attacker, (row.get("sample") or {}).get("attacker_usage"))
            yield row

    card = Scorecard.of(attacks_of(rows()))
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
                errored=cell.total - cell.decided,
                pass_rate=defended / cell.decided if cell.decided else None,
            )
        )
    for usage in attacker.values():
        known = next((u for u in summary.per_model_usage if u.model_name == usage.model_name), None)
        if known is None:
            summary.per_model_usage.append(usage)
            continue
        for key in ("invocation_count", "cache_hits", "prompt_tokens", "completion_tokens", "total_tokens"):
            setattr(known, key, getattr(known, key) + getattr(usage, key))


def _add_usage(total: dict[str, ModelUsage], usage: Any) -> None:
    if not isinstance(usage, dict) or not usage.get("model"):
        return
    entry = total.setdefault(usage["model"], ModelUsage(model_name=usage["model"]))
    entry.invocation_count += int(usage.get("calls") or 0)
    entry.cache_hits += int(usage.get("cache_hits") or 0)
    entry.prompt_tokens += int(usage.get("prompt_tokens") or 0)
    entry.completion_tokens += int(usage.get("completion_tokens") or 0)
    entry.total_tokens += int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
