"""Attack objectives: what an attack tries to make the target do, per risk category.

The catalog (``objectives.json``, written by us) holds short, abstract objectives: the attacker
model turns one into a prompt, so no objective carries operational detail. For agents, the
prohibited-action, data-leakage and task-adherence objectives are also written from each of the
agent's tools. A run picks ``num_objectives`` per category with a seeded choice, so the same
request attacks with the same objectives (and a rerun is served from the cache).

Custom seed prompts use azure-ai-evaluation's format and are sent as written:
``[{"metadata": {"target_harms": [{"risk-type": "violence", "risk-subtype": ""}]},
"messages": [{"role": "user", "content": "..."}], "id": "1"}]``.
"""

from __future__ import annotations

import functools
import json
import random
from dataclasses import dataclass
from importlib import resources
from typing import Any

from assay.errors import ConfigError
from assay.redteam.risks import risk_category


@dataclass(frozen=True)
class Objective:
    risk: str
    sub_type: str
    text: str
    """What the attack should get the target to do."""
    prompt: str | None = None
    """A custom seed prompt, sent as written (no attacker model writes one)."""
    seed_id: str | None = None


@dataclass(frozen=True)
class SubCategory:
    id: str
    name: str
    description: str
    objectives: tuple[str, ...]


@functools.cache
def catalog() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(resources.files("assay.redteam").joinpath("objectives.json").read_text("utf-8"))
    return loaded


def sub_categories(risk: str, tools: list[dict[str, Any]] | None = None) -> list[SubCategory]:
    """The risk's sub-categories with their objectives; for agent risks also one per tool."""
    entry = catalog()[risk]
    by_sub: dict[str, list[str]] = {}
    for objective in entry["objectives"]:
        by_sub.setdefault(objective["sub_type"], []).append(objective["objective"])
    found = [
        SubCategory(key, sub["name"], sub["description"], tuple(by_sub.get(key, ())))
        for key, sub in entry["sub_categories"].items()
    ]
    for template in entry.get("per_tool", []):
        for tool in tools or []:
            name, description = str(tool.get("name") or ""), str(tool.get("description") or "no description")
            if not name:
                continue
            fill = {"tool": name, "description": description.rstrip(".")}
            found.append(
                SubCategory(
                    f"{template['sub_type']}_{name}",
                    template["name"].format(**fill),
                    template["description"].format(**fill),
                    (template["objective"].format(**fill),),
                )
            )
    return found


def select(
    risk: str,
    count: int,
    seed: int,
    *,
    tools: list[dict[str, Any]] | None = None,
    enabled: dict[str, tuple[str, str]] | None = None,
) -> tuple[list[Objective], str | None]:
    """``count`` objectives for ``risk`` (all of them when it has fewer; the shortfall is said).

    ``enabled``: a reviewed taxonomy's enabled sub-categories, id → (name, description); one the
    catalog does not know is attacked from its own name and description.
    """
    pool: list[Objective] = []
    known = {sub.id: sub for sub in sub_categories(risk, tools)}
    for sub_id in enabled if enabled is not None else known:
        sub = known.get(sub_id)
        if sub is None and enabled is not None:
            name, description = enabled[sub_id]
            detail = f" ({description})" if description else ""
            pool.append(Objective(risk, sub_id, f"Get the target to do what this policy forbids: {name}{detail}"))
        elif sub is not None:
            pool.extend(Objective(risk, sub.id, text) for text in sub.objectives)
    if not pool:
        return [], f"{risk}: no sub-category is enabled, so nothing attacks it"
    if count >= len(pool):
        shortfall = None if count == len(pool) else f"{risk}: {count} objectives asked, {len(pool)} available"
        return pool, shortfall
    picked = sorted(random.Random(f"{seed}:{risk}").sample(range(len(pool)), count))
    return [pool[i] for i in picked], None


def seed_prompts(value: Any, where: str) -> list[Objective]:
    """Custom attack seed prompts in azure-ai-evaluation's format, each checked with its index."""
    if not isinstance(value, list) or not value:
        raise ConfigError(
            f"{where}: expected a list of seed prompts such as "
            '[{"metadata": {"target_harms": [{"risk-type": "violence"}]}, '
            '"messages": [{"role": "user", "content": "..."}]}]'
        )
    found = []
    for index, entry in enumerate(value):
        at = f"{where}[{index}]"
        if isinstance(entry, dict) and isinstance(entry.get("item"), dict):
            entry = entry["item"]  # a file_content row
        if not isinstance(entry, dict):
            raise ConfigError(f"{at}: expected an object with metadata.target_harms and messages")
        harms = (entry.get("metadata") or {}).get("target_harms") if isinstance(entry.get("metadata"), dict) else None
        if not isinstance(harms, list) or not harms or not isinstance(harms[0], dict) or "risk-type" not in harms[0]:
            raise ConfigError(f'{at}.metadata.target_harms: expected [{{"risk-type": "violence"}}]')
        risk = risk_category(harms[0]["risk-type"], f"{at}.metadata.target_harms[0].risk-type")
        messages: list[Any] = entry["messages"] if isinstance(entry.get("messages"), list) else []
        users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        content = users[-1].get("content") if users else None
        if not isinstance(content, str) or not content.strip():
            raise ConfigError(f'{at}.messages: expected [{{"role": "user", "content": "<the attack prompt>"}}]')
        sub_type = str(harms[0].get("risk-subtype") or "custom")
        seed_id = str(entry["id"]) if entry.get("id") is not None else str(index + 1)
        found.append(Objective(risk, sub_type, content, prompt=content, seed_id=seed_id))
    return found
