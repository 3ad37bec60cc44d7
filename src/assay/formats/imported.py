"""What the importers of other tools' results share (``inspect_log``, ``every_eval_ever``): a finished
run stored under ids made from its source, so importing it again finds it; and the pieces of their
files they read alike (objects that may be absent, token counts as ``input_tokens``/``output_tokens``)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.errors import NotFoundError
from assay.results import OutputItem, RunSummary
from assay.results.criterion import as_criteria
from assay.results.stored import RunSettings
from assay.store import DEFAULT_PROJECT, Store

BATCH = 500
"""Output items written per call."""


@dataclass
class Imported:
    run_id: str
    items: int
    already: bool = False


@dataclass
class ImportedRun:
    """A run another tool made, as an eval of its own with one finished run."""

    eval_name: str
    criterion_type: str
    criteria: list[str]
    run_name: str
    data_source: dict[str, Any]
    imported_from: str
    items: list[OutputItem]
    created_at: int | None = None
    eval_metadata: dict[str, Any] | None = None
    run_metadata: dict[str, Any] | None = None
    status: str = "completed"
    error: dict[str, Any] | None = None
    summary: RunSummary | None = None
    """The source's own figures, for a run without items; with items the run is summarised from them."""


def run_ids(key: str) -> tuple[str, str]:
    """The run's and its eval's ids, made from what names the source run (``key``)."""
    digest = hashlib.sha256(key.encode()).hexdigest()
    return f"evalrun_{digest[:32]}", f"eval_{digest[:32]}"  # as assay's own ids: short ids work


def stored_already(store: Store, run_id: str) -> bool:
    try:
        store.get_run(run_id)
    except NotFoundError:
        return False
    return True


def store_run(store: Store, run_id: str, eval_id: str, found: ImportedRun, project: str = DEFAULT_PROJECT) -> Imported:
    """``found`` stored as eval ``eval_id`` and its finished run ``run_id``."""
    store.create_eval(
        id=eval_id,
        name=found.eval_name,
        data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=as_criteria(
            [{"type": found.criterion_type, "name": name, "imported": True} for name in found.criteria]
        ),
        metadata=found.eval_metadata,
        project=project,
        created_at=found.created_at,
    )
    store.create_run(
        id=run_id,
        eval_id=eval_id,
        data_source=found.data_source,
        options=RunSettings(imported_from=found.imported_from),
        name=found.run_name,
        project=project,
        created_at=found.created_at,
    )
    for start in range(0, len(found.items), BATCH):
        store.add_output_items(run_id, found.items[start : start + BATCH])
    summary = found.summary
    if found.items or summary is None:
        summary = store.summarize(run_id, [(name, name) for name in found.criteria])
    store.update_run(run_id, status=found.status, summary=summary, error=found.error, metadata=found.run_metadata)
    return Imported(run_id, len(found.items))


def object_of(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one: the optional parts of a file read alike."""
    return value if isinstance(value, dict) else {}


def usage_of(tokens: Any) -> dict[str, int] | None:
    """Token counts as Inspect and Every Eval Ever write them, as assay keeps a call's usage."""
    counts = object_of(tokens)
    if not counts:
        return None
    return {
        "prompt_tokens": int(counts.get("input_tokens") or 0),
        "completion_tokens": int(counts.get("output_tokens") or 0),
        "total_tokens": int(counts.get("total_tokens") or 0),
    }


def tokens_of(usage: dict[str, Any]) -> dict[str, int]:
    """A call's usage as Inspect and Every Eval Ever write token counts."""
    prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": int(usage.get("total_tokens") or prompt + completion),
    }


def run_model(data_source: dict[str, Any] | None, items: Sequence[OutputItem], default: str) -> str:
    """The model a run's samples name (its target), else its data source's, else ``default``."""
    for item in items:
        if item.sample and isinstance(item.sample.get("model"), str) and item.sample["model"]:
            return str(item.sample["model"])
    model = (data_source or {}).get("model")
    return str(model) if isinstance(model, str) and model else default
