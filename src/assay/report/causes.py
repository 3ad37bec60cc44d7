"""Why a run's results errored, grouped by cause per criterion (the CLI summary and the web UI)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import sqlalchemy as sa

from assay.store import Store
from assay.store import tables as t

SAMPLED_ERRORS = 200
"""Errored results read for their causes: enough to name the common ones, cheap at any run size."""


def error_causes(store: Store, run_id: str) -> dict[str, Counter[str]]:
    """Per criterion, why its results errored (from up to ``SAMPLED_ERRORS`` of them)."""
    res = t.results.c
    query = (
        sa.select(res.datasource_item_id, res.criterion)
        .where(res.run_id == run_id, res.status == "error")
        .order_by(res.datasource_item_id)
        .limit(SAMPLED_ERRORS)
    )
    with store.engine.connect() as conn:
        errored = [(int(index), str(criterion)) for index, criterion in conn.execute(query)]
    causes: dict[str, Counter[str]] = {}
    for index, criterion in errored:
        output = store.get_output_item(run_id, index)
        reason = next((r.reason for r in output.results if r.name == criterion), None)
        causes.setdefault(criterion, Counter())[_cause(reason)] += 1
    return causes


def _cause(reason: Any) -> str:
    """A reason with its item-specific tail cut, so the same failure groups together."""
    text = str(reason or "no reason given").splitlines()[0]
    return text if len(text) <= 120 else text[:119] + "…"
