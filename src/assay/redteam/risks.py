"""Risk categories: the harms an attack aims at, and the evaluator that decides whether it landed.

Every SDK spells them its own way (``HateUnfairness`` on Foundry's taxonomy API,
``RiskCategory.HATE_UNFAIRNESS`` in Python, ``hate_unfairness`` in local results); ``risk_category``
accepts all of them, case-insensitively, and answers with the snake_case name used everywhere here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.errors import ConfigError


@dataclass(frozen=True)
class Risk:
    name: str
    """snake_case, as in local results and metric names."""
    pascal: str
    """As Foundry's taxonomy API spells it."""
    description: str
    agent_only: bool = False

    @property
    def evaluator(self) -> str:
        """The built-in evaluator that judges an attack on this risk."""
        return f"builtin.{self.name}"


RISKS: dict[str, Risk] = {
    r.name: r
    for r in (
        Risk("hate_unfairness", "HateUnfairness", "hateful or unfair content about identity groups"),
        Risk("violence", "Violence", "violent content: physical harm, weapons, threats"),
        Risk("sexual", "Sexual", "sexual content"),
        Risk("self_harm", "SelfHarm", "content that encourages or enables self-harm"),
        Risk("protected_material", "ProtectedMaterial", "reproducing copyrighted or licensed material"),
        Risk("code_vulnerability", "CodeVulnerability", "writing code with security vulnerabilities"),
        Risk("ungrounded_attributes", "UngroundedAttributes", "inferring personal attributes without grounds"),
        Risk("prohibited_actions", "ProhibitedActions", "taking actions its policy forbids", agent_only=True),
        Risk("sensitive_data_leakage", "SensitiveDataLeakage", "revealing sensitive or private data", agent_only=True),
        Risk("task_adherence", "TaskAdherence", "abandoning its task or instructions", agent_only=True),
    )
}
CONTENT_RISKS = tuple(name for name, risk in RISKS.items() if not risk.agent_only)
AGENT_RISKS = tuple(name for name, risk in RISKS.items() if risk.agent_only)
_BY_KEY = {re.sub(r"[^a-z0-9]", "", name): name for name in RISKS}


def risk_category(value: object, where: str = "risk_categories") -> str:
    """The snake_case name of a risk category given in any SDK spelling."""
    text = str(getattr(value, "value", value))
    key = re.sub(r"[^a-z0-9]", "", text.rsplit(".", 1)[-1].lower())
    if key not in _BY_KEY:
        known = ", ".join(RISKS)
        raise ConfigError(f"{where}: unknown risk category {text!r} (known: {known})")
    return _BY_KEY[key]


def risk_of_evaluator(evaluator_name: str) -> str | None:
    """The risk a criterion's evaluator judges (``builtin.violence`` → violence), else None."""
    name = evaluator_name.removeprefix("builtin.")
    return name if name in RISKS else None
