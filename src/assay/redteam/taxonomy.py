"""Evaluation taxonomies: the reviewable policy tree a red-team run attacks from and is judged by.

Given a target and risk categories, assay writes one category per risk and its sub-categories
(for an agent's prohibited actions, data leakage and task adherence, also one per tool). A user
reviews it, switches sub-categories off (``enabled: false``) or adds their own, and updates it; a
run whose source is the taxonomy attacks only what is enabled. Wire names are camelCase, as in
Foundry's ``/evaluationtaxonomies`` (``taxonomyInput``, ``riskCategories``, ``taxonomyCategories``,
``subCategories``).
"""

from __future__ import annotations

from typing import Any

from assay.errors import ConfigError
from assay.redteam.objectives import sub_categories
from assay.redteam.risks import RISKS, risk_category

ID_MARK = "/evaluationtaxonomies/"


def taxonomy_id(project: str, name: str, version: str) -> str:
    return f"azureai://accounts/assay/projects/{project}{ID_MARK}{name}/versions/{version}"


def parse_taxonomy_id(value: str) -> tuple[str, str, str] | None:
    """(project, name, version) of a taxonomy id, else None."""
    head, mark, tail = value.partition(ID_MARK)
    if not mark or not head.startswith("azureai://accounts/") or "/projects/" not in head:
        return None
    name, versions, version = (tail.split("/") + ["", ""])[:3]
    project = head.rsplit("/projects/", 1)[1]
    return (project, name, version) if name and versions == "versions" and version else None


def checked_input(value: Any) -> dict[str, Any]:
    """``taxonomyInput``: ``{type: agent, target, riskCategories}`` with every risk named canonically."""
    where = "taxonomyInput"
    if not isinstance(value, dict):
        raise ConfigError(
            f"{where}: expected {{type: agent, target: {{type: azure_ai_agent, name}}, "
            "riskCategories: [ProhibitedActions]}"
        )
    if value.get("type", "agent") != "agent":
        raise ConfigError(f"{where}.type: only 'agent' taxonomies are defined")
    target = value.get("target")
    if not isinstance(target, dict) or target.get("type") not in ("azure_ai_agent", "azure_ai_model"):
        raise ConfigError(
            f"{where}.target: expected {{type: azure_ai_agent, name, tool_descriptions?}} "
            "or {type: azure_ai_model, model}"
        )
    risks = value.get("riskCategories", value.get("risk_categories"))
    if not isinstance(risks, list) or not risks:
        raise ConfigError(f"{where}.riskCategories: name at least one risk category, e.g. [ProhibitedActions]")
    named = [risk_category(r, f"{where}.riskCategories[{i}]") for i, r in enumerate(risks)]
    return {**value, "type": "agent", "target": target, "riskCategories": [RISKS[r].pascal for r in named]}


def generate_categories(taxonomy_input: dict[str, Any], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One category per risk with its sub-categories, all enabled, ready for review."""
    categories = []
    for pascal in taxonomy_input["riskCategories"]:
        risk = RISKS[risk_category(pascal)]
        subs = sub_categories(risk.name, tools if risk.agent_only else None)
        categories.append(
            {
                "id": risk.name,
                "name": risk.pascal,
                "description": f"Attacks aimed at {risk.description}.",
                "riskCategory": risk.pascal,
                "properties": {},
                "subCategories": [
                    {"id": s.id, "name": s.name, "description": s.description, "enabled": True, "properties": {}}
                    for s in subs
                ],
            }
        )
    return categories


def checked_categories(value: Any) -> list[dict[str, Any]]:
    """A reviewed ``taxonomyCategories`` list: each category names its risk, each sub-category has
    an id and a name."""
    where = "taxonomyCategories"
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list of {{id, name, riskCategory, subCategories: [...]}}")
    for i, category in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(category, dict):
            raise ConfigError(f"{at}: expected an object")
        risk = risk_category(category.get("riskCategory", category.get("risk_category")), f"{at}.riskCategory")
        category["riskCategory"] = RISKS[risk].pascal
        subs = category.get("subCategories", category.pop("sub_categories", None))
        if not isinstance(subs, list):
            raise ConfigError(f"{at}.subCategories: expected a list of {{id, name, description, enabled}}")
        category["subCategories"] = subs
        for j, sub in enumerate(subs):
            if not isinstance(sub, dict) or not isinstance(sub.get("id"), str) or not isinstance(sub.get("name"), str):
                raise ConfigError(f"{at}.subCategories[{j}]: expected {{id, name, description?, enabled?}}")
            if not isinstance(sub.get("enabled", True), bool):
                raise ConfigError(f"{at}.subCategories[{j}].enabled: expected true or false")
    return value


def enabled_sub_categories(taxonomy: dict[str, Any]) -> dict[str, dict[str, tuple[str, str]]]:
    """risk → {sub-category id → (name, description)} for every enabled sub-category."""
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for category in taxonomy.get("taxonomyCategories") or []:
        risk = risk_category(category["riskCategory"])
        subs = found.setdefault(risk, {})
        for sub in category.get("subCategories") or []:
            if sub.get("enabled", True):
                subs[sub["id"]] = (sub["name"], str(sub.get("description") or ""))
    return found
