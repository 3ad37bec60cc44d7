"""How a run simulates users: the model that plays the user, turns and repetitions. A target's spec
carries these (``assay.targets.base.TargetSpec.simulation``), so they live apart from the runs that
read them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SimulationSettings:
    model: str
    """The model that plays the user."""
    max_turns: int
    repetitions: int
    sampling: dict[str, Any] = field(default_factory=dict)
    data_mapping: dict[str, str] = field(default_factory=dict)
    """Scenario field → the source row's field."""
    default_desired_turns: int | None = None
    save_as: str | None = None
    """Save the conversations as a dataset of this name (a new version each run)."""
    warnings: tuple[str, ...] = ()
