"""What a red-team run plays: its kind, techniques, attack settings and attacker. A target's spec
carries these (``assay.targets.base.TargetSpec.red_team``), so they live apart from the runs that
read them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from assay.redteam.generated import TargetContext
from assay.redteam.record import AttackSettings
from assay.redteam.strategies import Technique

Kind = Literal["red_team_taxonomy", "red_team", "red_team_seed_prompts"]
KINDS: tuple[Kind, ...] = ("red_team_taxonomy", "red_team", "red_team_seed_prompts")


@dataclass(frozen=True)
class RedTeamSettings:
    kind: Kind
    techniques: tuple[Technique, ...]
    attack: AttackSettings
    attacker_model: str | None = None
    risk_categories: tuple[str, ...] = ()
    num_objectives: int = 10
    source: dict[str, Any] | None = None
    seed: int = 0
    context: TargetContext | None = None
    """Objectives are also written for the target from this (``assay.redteam.generated``)."""

    @property
    def needs_attacker(self) -> bool:
        """Seed prompts encoded by converters need no attacker model; anything else does."""
        written = any(t.multi_turn or "tense" in t.steps for t in self.techniques)
        return written or self.kind != "red_team_seed_prompts"
