"""What the store gives back: an eval, a run and its options, an output item, as types.

The store is typed on write (``OutputItem``, ``Result``) and reads back the same types, so no
caller walks a row's JSON by key. ``Eval`` and ``Run`` are plain frozen records (the store writes
their columns); a run's ``options`` column is ``RunSettings``; a stored output item is the
engine's ``OutputItem`` with the run it belongs to and when it was written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.results.criterion import Criterion
from assay.results.records import OutputItem, RunSummary

EvaluationLevel = Literal["turn", "conversation"]
CacheMode = Literal["use", "replay", "off", "refresh"]
"""The model-call cache: ``use`` reads and writes, ``replay`` only reads (a miss is an error),
``off`` neither, ``refresh`` writes without reading."""
RunStatus = Literal["queued", "in_progress", "completed", "failed", "canceled"]


class RunSettings(BaseModel):
    """A run's options, as stored in its ``options``; keys this model does not name are kept."""

    model_config = ConfigDict(extra="allow")

    evaluation_level: EvaluationLevel = "turn"
    total_items: int | None = None
    """The items the run had when it started (a resumed run must have as many)."""
    repeats: int = Field(default=1, ge=1)
    """How many times each judge scores each item."""
    trials: int = Field(default=1, ge=1)
    """How many times the target runs for each item, each trial judged."""
    cluster_by: str | None = None
    cache: CacheMode | None = None
    """The model-call cache's mode for this run; None: the executor's."""
    limit: int | None = Field(default=None, ge=1)
    """Only the first ``limit`` items (``assay run --limit``)."""
    traces: dict[str, Any] | None = None
    """A trace source's traces, resolved once when the run was created."""
    output_dataset_id: str | None = None
    """The generated items' dataset (synthetic data, planned attacks), written when the run starts."""
    output_datasets: list[dict[str, Any]] = Field(default_factory=list)
    """Datasets the run saved (conversations, generated test cases), as Foundry lists them."""
    warnings: list[str] = Field(default_factory=list)
    item_schema_checks: Literal["refuse", "warn"] = "refuse"
    """What an item that breaks the eval's item_schema does: ``refuse`` the run (OpenAI's Evals API,
    the CLI), or ``warn`` and go on (Foundry's project routes, whose samples send rows that lack a
    field their schema requires and expect them scored; a field a criterion maps is still needed)."""
    optimize_job: str | None = None
    """The optimization job whose candidate this run scored."""
    candidate_id: str | None = None
    imported_from: str | None = None
    """Where an imported run was made (``openai-evals``, ``inspect``)."""
    red_team_object: dict[str, Any] | None = None
    """A run made by Foundry's ``/redTeams/runs``: the body it was posted with."""
    batch: bool = False
    """Model calls go through the provider's Batch API (``assay.llm.batch``), at its price."""

    def stored(self) -> dict[str, Any]:
        """The ``options`` column: only what was set, as the API and older stores wrote it."""
        return self.model_dump(mode="json", exclude_defaults=True)


@dataclasses.dataclass(frozen=True, slots=True)
class Eval:
    """An eval as stored: its data source's schema and its testing criteria, as the API took them."""

    id: str
    project: str
    name: str | None
    data_source_config: dict[str, Any]
    testing_criteria: list[Criterion]
    metadata: dict[str, Any] | None
    created_at: int
    updated_at: int | None = None

    @classmethod
    def of_row(cls, row: Mapping[Any, Any]) -> Eval:
        return cls(**{name: row[name] for name in _EVAL_FIELDS if name in row})


@dataclasses.dataclass(frozen=True, slots=True)
class Run:
    """A run as stored. ``worker`` holds it while ``lease_until`` is ahead; ``inputs`` is what a
    local process brought to it (``assay.run.request.RunInputs``), for whoever finishes it."""

    id: str
    project: str
    eval_id: str
    name: str | None
    status: RunStatus
    data_source: dict[str, Any]
    options: RunSettings
    summary: RunSummary | None
    """Written when the run ends (and as it goes, for a canceled one)."""
    error: dict[str, Any] | None
    metadata: dict[str, Any] | None
    created_at: int
    finished_at: int | None
    worker: str | None = None
    lease_until: float | None = None
    inputs: dict[str, Any] | None = None

    @classmethod
    def of_row(cls, row: Mapping[Any, Any]) -> Run:
        values = {name: row[name] for name in _RUN_FIELDS if name in row}
        options = row.get("options") or {}
        try:
            values["options"] = RunSettings.model_validate(options)
        except ValidationError:  # written by hand or by another version: shown as it is, not refused
            values["options"] = RunSettings.model_construct(**options)
        summary = row.get("summary")
        try:
            values["summary"] = RunSummary.model_validate(summary) if summary else None
        except ValidationError:  # one this version cannot read: left out, as for a run still going
            values["summary"] = None
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        """The run's columns as stored (``options`` as its JSON)."""
        columns = {name: getattr(self, name) for name in _RUN_FIELDS}
        summary = self.summary.model_dump() if self.summary is not None else None
        return {**columns, "options": self.options.stored(), "summary": summary}


class StoredItem(OutputItem):
    """An output item as a run stored it."""

    run_id: str
    created_at: int


_EVAL_FIELDS = tuple(field.name for field in dataclasses.fields(Eval))
_RUN_FIELDS = tuple(field.name for field in dataclasses.fields(Run))
