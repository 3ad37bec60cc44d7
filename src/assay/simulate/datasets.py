"""The conversations a simulation run played out, saved as a versioned dataset (Foundry's
``enable_conversation_dataset_generation``): one JSONL row per conversation with its messages,
tool definitions, scenario and how it ended; the run reports it under ``output_datasets``."""

from __future__ import annotations

import json
from typing import Any

from assay.dataset.ids import dataset_id
from assay.store import Store

KEPT = (
    "messages",
    "tool_definitions",
    "id",
    "test_case_id",
    "test_case_description",
    "termination_reason",
    "turns",
    "simulation_seed",
)


def save_conversations(store: Store, project: str, run_id: str, name: str) -> dict[str, Any]:
    """Store the run's conversations as the next version of dataset ``name``; returns the
    ``output_datasets`` entry."""
    lines = []
    for output in store.iter_output_items(run_id):
        item = output.datasource_item
        lines.append(json.dumps({key: item[key] for key in KEPT if key in item}, ensure_ascii=False))
    saved = store.save_dataset(project, name, ("\n".join(lines) + "\n").encode())
    return output_dataset("simulated_user_conversations", project, name, saved["version"])


def output_dataset(kind: str, project: str, name: str, version: str) -> dict[str, Any]:
    """An entry of a run's ``output_datasets``, as Foundry reports them."""
    return {"type": kind, "dataset": {"id": dataset_id(project, name, version), "name": name, "version": version}}
