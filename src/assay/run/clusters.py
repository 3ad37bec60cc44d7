"""Intervals over clusters: when items share a document or a conversation (``cluster_by``), their
verdicts are not independent, and intervals computed as if they were are too narrow. Each
criterion's pass-rate and mean-score intervals are recomputed with the cluster as the unit
(``assay.stats.core.clustered_rate_interval``, ``clustered_mean_interval``); an item without the field
is a cluster of its own. Repeats need nothing of this: an item's repeats are reduced to one result
before any interval is taken, so those intervals are already over items."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError
from assay.stats.core import clustered_mean_interval, clustered_rate_interval

if TYPE_CHECKING:
    from assay.results import OutputItem, RunSummary
    from assay.store import Store


def cluster_intervals(store: Store, run_id: str, summary: RunSummary, field: str | None, trials: int = 1) -> None:
    """``field``'s values make the clusters; with target repeats, an item's trials are one too."""
    rates: dict[str, dict[str, list[int]]] = {}
    scores: dict[str, dict[str, list[float]]] = {}
    for output in store.iter_output_items(run_id):
        cluster = _cluster_of(output, field, trials)
        for result in output.results:
            if result.status != "completed":
                continue
            if result.passed is not None:
                tally = rates.setdefault(result.name, {}).setdefault(cluster, [0, 0])
                tally[0] += result.passed
                tally[1] += 1
            if result.score is not None:
                total = scores.setdefault(result.name, {}).setdefault(cluster, [0.0, 0])
                total[0] += result.score
                total[1] += 1
    for criterion in summary.per_testing_criteria_results:
        name = criterion.testing_criteria
        by_rate = [(int(p), int(n)) for p, n in rates.get(name, {}).values()]
        rate = clustered_rate_interval(by_rate)
        criterion.pass_rate_ci = list(rate) if rate else None
        by_score = [(total, int(n)) for total, n in scores.get(name, {}).values()]
        mean = clustered_mean_interval(by_score)
        criterion.mean_score_ci = list(mean) if mean else None
        criterion.clusters = len(by_rate) or len(by_score)


def check_cluster_by(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: name the item field whose equal values make a cluster, e.g. cluster_by: doc_id")
    return value


def _cluster_of(output: OutputItem, field: str | None, trials: int) -> str:
    value = output.datasource_item.get(field) if field else None
    if value is None:  # not in any cluster: one of its own, with its trials
        return f"\0item {output.datasource_item_id // trials}"
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
