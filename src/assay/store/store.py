"""The store: one object over every table, on SQLite (default) or PostgreSQL."""

from __future__ import annotations

from typing import Any

from assay.store.agents import AgentsStore
from assay.store.alerts import AlertsStore
from assay.store.assets import AssetsStore
from assay.store.blobs import BlobStore
from assay.store.captured import CapturedStore
from assay.store.conversations import ConversationsStore
from assay.store.insights import InsightsStore
from assay.store.jobs import JobsStore
from assay.store.monitors import MonitorsStore
from assay.store.reviews import ReviewsStore
from assay.store.rules import RulesStore
from assay.store.schedules import SchedulesStore
from assay.store.taxonomies import TaxonomyStore
from assay.store.traces import TracesStore


class Store(
    BlobStore,
    AssetsStore,
    CapturedStore,
    ConversationsStore,
    TracesStore,
    TaxonomyStore,
    RulesStore,
    SchedulesStore,
    AlertsStore,
    InsightsStore,
    ReviewsStore,
    AgentsStore,
    JobsStore,
    MonitorsStore,
):
    """Evals, runs, output items, files (and the blob containers uploads arrive through), datasets,
    custom evaluators, the model-call cache, captured responses, trace spans, red-team taxonomies,
    evaluation rules with their events, schedules with their firings, alerts, insights, human
    review's labels and queues, prompt agents, long-running jobs (data and evaluator generation, agent insight runs) and
    agent insight monitors."""

    def save_dataset(self, project: str, name: str, content: bytes) -> dict[str, Any]:
        """``content`` (JSONL) as a new file and the next version of dataset ``name`` (1, 2, ...):
        what a simulation or a generator saves its rows as."""
        file = self.create_file(project=project, filename=f"{name}.jsonl", purpose="evals", content=content)
        versions = [r["version"] for r in self.list_datasets(project) if r["name"] == name]
        version = str(max((int(v) for v in versions if v.isdigit()), default=0) + 1)
        return self.register_dataset(name=name, version=version, uri=file["id"], project=project, file_id=file["id"])
