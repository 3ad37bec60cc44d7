"""A run's target: the target itself, or a generator wrapping it from outside (a simulated user
talking to it, an attacker playing attacks against it). ``assay.targets`` never knows of either."""

from __future__ import annotations

import dataclasses
from typing import Any

from assay.llm import ModelRegistry
from assay.redteam.attacks import RedTeamTarget
from assay.redteam.runs import SUPPLIED_FIELDS as ATTACK_FIELDS
from assay.simulate.runs import SUPPLIED_FIELDS as SIMULATED_FIELDS
from assay.simulate.runs import SimulationTarget
from assay.targets import Target, TargetSpec, build_target
from assay.targets.agents import find_agent


def build_run_target(spec: TargetSpec, models: ModelRegistry | None) -> Target:
    """What generates a run's samples from ``spec``."""
    if spec.simulation is not None:
        replying = build_target(dataclasses.replace(spec, simulation=None), models)
        user_model = (models or ModelRegistry()).get(spec.simulation.model)
        user_model.check_credentials()
        return SimulationTarget(user_model, replying, spec.simulation, _tools(spec, models))
    if spec.red_team is not None:
        return _red_team_target(spec, models or ModelRegistry())
    return build_target(spec, models)


def supplied_fields(spec: TargetSpec) -> frozenset[str]:
    """Item fields the run's target adds to every item (simulated conversations and played attacks
    carry their conversation, stored responses theirs)."""
    if spec.simulation is not None:
        return SIMULATED_FIELDS
    if spec.red_team is not None:
        return ATTACK_FIELDS
    return spec.supplied_fields


def _tools(spec: TargetSpec, models: ModelRegistry | None) -> list[dict[str, Any]]:
    """The target's tools as the generator describes them: given, or the configured agent's."""
    if spec.kind == "agent" and not spec.tool_descriptions:
        agents = models.agents if models is not None else []
        return find_agent(agents, spec.model or "", spec.version).tool_descriptions
    return spec.tool_descriptions


def _red_team_target(spec: TargetSpec, registry: ModelRegistry) -> Target:
    assert spec.red_team is not None
    settings = spec.red_team
    replying = build_target(dataclasses.replace(spec, red_team=None), registry)
    attacker = None
    if settings.needs_attacker:
        attacker = registry.get(settings.attacker_model)
        attacker.check_credentials()
    tools = _tools(spec, registry)
    about = f"an AI model ({spec.model})" if spec.kind == "model" else f"the AI agent {spec.model!r}"
    if tools:
        about += "; its tools: " + "; ".join(f"{t.get('name')}: {t.get('description') or ''}" for t in tools)
    return RedTeamTarget(attacker, replying, settings.attack, tools, about)
