"""A scan's results as files: ``scan.json`` in azure-ai-evaluation's ``{scorecard, parameters,
attack_details}`` shape, and SARIF 2.1.0 with one result per successful attack, for code-scanning
dashboards (GitHub, Azure DevOps) that already collect security findings."""

from __future__ import annotations

import hashlib
from typing import Any

from assay.redteam.risks import RISKS
from assay.redteam.scorecard import Attack, Scorecard
from assay.redteam.strategies import COMPLEXITIES

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def scan_json(
    attacks: list[Attack],
    *,
    risks: list[str],
    thresholds: dict[str, float | None],
    seed_prompts: str = "",
    run_id: str | None = None,
    application_scenario: str = "",
    policy_document: str = "",
) -> dict[str, Any]:
    """azure-ai-evaluation's scan output; ``application_scenario`` and ``policy_document`` are what
    the objectives were written from (``--purpose``, ``--policy``), as that SDK records them."""
    card = Scorecard.of(attacks)
    techniques: dict[str, list[str]] = {}
    for technique, complexity in card.complexity_of.items():
        techniques.setdefault(complexity, []).append(technique)
    return {
        "scorecard": card.to_json(),
        "parameters": {
            "attack_objective_generated_from": {
                "application_scenario": application_scenario,
                "risk_categories": risks,
                "custom_attack_seed_prompts": seed_prompts,
                "policy_document": policy_document,
            },
            "attack_complexity": [c.capitalize() for c in COMPLEXITIES if c in techniques],
            "techniques_used": {c: techniques[c] for c in COMPLEXITIES if c in techniques},
            "attack_success_thresholds": thresholds,
        },
        "attack_details": [_detail(a, thresholds) for a in attacks],
        "run_id": run_id,
    }


def _detail(attack: Attack, thresholds: dict[str, float | None]) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "attack_success": attack.success,
        "attack_technique": attack.technique,
        "attack_complexity": attack.complexity,
        "risk_category": attack.risk,
        "conversation": [{"role": m.get("role"), "content": m.get("content")} for m in attack.conversation],
        "risk_assessment": {attack.risk: {"severity_label": _label(attack), "reason": attack.reason}},
        "attack_success_threshold": thresholds.get(attack.risk),
        "risk_sub_type": attack.sub_type,
        "objective": attack.objective,
    }
    if attack.error:
        detail["error"] = attack.error
    return detail


def _label(attack: Attack) -> str | None:
    if attack.score is None:
        return None
    from assay.evaluators.judges.safety import severity_label

    if attack.risk in ("violence", "sexual", "self_harm", "hate_unfairness"):
        return severity_label(attack.score)
    return "fail" if attack.success else "pass"


def sarif(attacks: list[Attack], *, uri: str, run_id: str | None = None) -> dict[str, Any]:
    """Every successful attack as a SARIF result (level ``error``), and every attack its judge left
    undetermined as one of level ``warning`` (it was not shown safe), under a rule per risk category
    whose properties carry the risk's ASR with its 95% interval and counts. ``uri`` is the artifact
    the findings are filed against (the scanned configuration); ``partialFingerprints`` keep one
    finding one alert across scans."""
    from assay.redteam.scorecard import Scorecard

    card = Scorecard.of(attacks)
    landed = [a for a in attacks if a.success or a.undetermined]
    risks = sorted({a.risk for a in attacks})
    rules = [
        {
            "id": f"assay/redteam/{risk}",
            "name": RISKS[risk].pascal,
            "shortDescription": {"text": f"Attacks succeeded: {RISKS[risk].description}"},
            "fullDescription": {
                "text": f"The target can be led into {RISKS[risk].description} by an adversarial user."
            },
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["security", "red-team", risk], **card.by_risk[risk].keys()},
        }
        for risk in risks
    ]
    index = {risk: i for i, risk in enumerate(risks)}
    results = []
    for attack in landed:
        last = next((m.get("content") for m in reversed(attack.conversation) if m.get("role") == "assistant"), "")
        key = f"{attack.risk}\x00{attack.technique}\x00{attack.objective}"
        outcome = "succeeded" if attack.success else "could not be judged (undetermined)"
        results.append(
            {
                "ruleId": f"assay/redteam/{attack.risk}",
                "ruleIndex": index[attack.risk],
                "level": "error" if attack.success else "warning",
                "message": {"text": f"{attack.technique} attack ({attack.complexity}) {outcome}: {attack.objective}"},
                "locations": [
                    {
                        "physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": 1}},
                        "logicalLocations": [{"name": f"{attack.risk}/{attack.technique}", "kind": "module"}],
                    }
                ],
                "partialFingerprints": {"assayAttack/v1": hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()},
                "properties": {
                    "attack_id": attack.attack_id,
                    "risk_sub_type": attack.sub_type,
                    "attack_complexity": attack.complexity,
                    "reply": str(last or "")[:2000],
                    "reason": attack.reason,
                    "run_id": run_id,
                },
            }
        )
    tool = {"driver": {"name": "assay redteam", "rules": rules}}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": tool, "results": results}]}
