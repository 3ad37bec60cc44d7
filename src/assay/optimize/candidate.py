"""Candidates: whole agent configurations (instructions, tool descriptions, skills, model), named
by their content (``cand_<sha8>``) so the same search finds the same ids, and the guards every
proposed change must pass before it is scored."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from assay.config.agents import AgentDefinition, Skill

LEAK_WORDS = 8
"""A run this long copied from a held-out query or answer is leakage."""


@dataclass(frozen=True)
class Candidate:
    config: AgentDefinition
    parent: str | None = None
    mutation: tuple[str, ...] = ()
    """What changed from the parent: ``system_prompt``, ``tools``, ``skills``, ``model``."""

    @property
    def id(self) -> str:
        return "cand_" + hashlib.sha256(canonical(self.config).encode()).hexdigest()[:8]

    @property
    def strategy(self) -> str:
        return ", ".join(self.mutation) or "baseline"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "parent": self.parent,
            "mutation": list(self.mutation),
            "config": config_dict(self.config),
        }


def canonical(config: AgentDefinition) -> str:
    return json.dumps(config_dict(config), sort_keys=True, ensure_ascii=False)


def config_dict(config: AgentDefinition) -> dict[str, Any]:
    return {
        "instructions": config.instructions,
        "tools": list(config.tools),
        "model": config.model,
        "skills": [dataclasses.asdict(s) for s in config.skills],
        "name": config.name,
    }


def foundry_config(candidate_id: str, config: AgentDefinition) -> dict[str, Any]:
    """The candidate as Foundry hands it to an agent: what ``load_config()`` reads from
    ``OPTIMIZATION_CONFIG`` or from the resolver's ``candidates/{id}/config`` (``instructions``,
    ``model``, ``skills``, ``tools`` as OpenAI function definitions). ``system_prompt`` repeats the
    instructions under the name the job request uses."""
    return {
        "candidate_id": candidate_id,
        "name": config.name,
        "instructions": config.instructions,
        "system_prompt": config.instructions,
        "model": config.model,
        "skills": [dataclasses.asdict(s) for s in config.skills],
        "tools": config.function_tools(),
    }


def optimization_env(handoff: dict[str, Any]) -> dict[str, str]:
    """The environment Foundry starts a candidate's agent with: ``load_config()`` reads the inline
    JSON under either name. (No candidate id: with one, ``load_config()`` would first ask a resolver
    endpoint that a local run does not have.)"""
    text = json.dumps(handoff, ensure_ascii=False)
    return {"OPTIMIZATION_CONFIG": text, "AGENT_OPTIMIZATION_CONFIG": text}


def config_from(data: dict[str, Any]) -> AgentDefinition:
    return AgentDefinition(
        instructions=data["instructions"],
        tools=tuple(data.get("tools") or ()),
        skills=tuple(Skill(**s) for s in data.get("skills") or ()),
        model=data.get("model"),
        name=data.get("name"),
    )


def candidate_from(data: dict[str, Any]) -> Candidate:
    return Candidate(config_from(data["config"]), data.get("parent"), tuple(data.get("mutation") or ()))


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def leaked(text: str, held_out: list[str]) -> str | None:
    """The first ``LEAK_WORDS``-word run of ``text`` found in a held-out text, else None."""
    runs: set[str] = set()
    for other in held_out:
        seen = words(other)
        runs.update(" ".join(seen[i : i + LEAK_WORDS]) for i in range(len(seen) - LEAK_WORDS + 1))
    mine = words(text)
    for i in range(len(mine) - LEAK_WORDS + 1):
        run = " ".join(mine[i : i + LEAK_WORDS])
        if run in runs:
            return run
    return None


def schema_change(before: tuple[dict[str, Any], ...], after: tuple[dict[str, Any], ...]) -> str | None:
    """Tools may change only their descriptions: names, parameter types and required fields stay."""
    if [t["name"] for t in before] != [t["name"] for t in after]:
        return "the tools' names or order changed"
    for old, new in zip(before, after, strict=True):
        if old.get("parameters") != new.get("parameters"):
            return f"tool {old['name']}: its parameters changed"
    return None
