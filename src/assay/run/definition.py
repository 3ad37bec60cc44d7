"""What a run is made of before it runs: the eval as the user wrote it (``EvalDefinition``) and what
its criteria and target are built from (``RunBinding``). The engine, the runner and the Ray actors all
read these; they import nothing of the engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.evaluators.base import EvaluationLevel
from assay.evaluators.catalog import Catalog
from assay.results.criterion import Criterion
from assay.targets import TargetSpec


@dataclass
class EvalDefinition:
    """An eval as the user wrote it: criteria in their wire form and an optional item_schema."""

    name: str
    testing_criteria: list[Criterion]
    item_schema: dict[str, Any] | None = None
    check_items: bool = True
    """Refuse items that break ``item_schema`` (False: it only names the fields; see
    ``RunSettings.item_schema_checks``)."""
    evaluation_level: EvaluationLevel = "turn"
    metadata: dict[str, Any] = field(default_factory=dict)
    repeats: int = 1
    """How many times each judge scores each item (``assay.run.repeats``)."""
    trials: int = 1
    """How many times the target runs for each item, each trial judged (``assay.run.trials``)."""
    cluster_by: str | None = None
    """An item field whose equal values make a cluster (one document's questions): the intervals
    then treat a cluster, not an item, as the independent unit."""
    eval_id: str | None = None
    """A stored eval the run belongs to (``assay eval create`` made it); a new eval per run when None."""

    def data_source_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"type": "custom", "include_sample_schema": False}
        if self.item_schema is not None:
            config["item_schema"] = self.item_schema
        return config


@dataclass
class RunBinding:
    """Everything criteria and a target are built from, and nothing else: it pickles, so Ray actors
    bind the same criteria as the driver (``bind_run``) without the dataset or the store."""

    definition: EvalDefinition
    catalog: Catalog
    target: TargetSpec | None
    fields: set[str] | None
    has_tasks: bool
    samples: bool = False
    """The rows carry their samples (``{"item": ..., "sample": ...}``): criteria may read ``sample.*``
    without a target."""
    list_fields: frozenset[str] = frozenset()
    """Item fields that hold lists (an agent's messages): see ``bind_criteria``."""
