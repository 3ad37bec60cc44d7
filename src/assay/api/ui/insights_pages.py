"""Insights in the web UI: the list, an insight's page (a cluster insight's clusters with their
suggestions and samples, each linked to its item; a comparison's effects) with a CSV export, and
each agent insight monitor's page (its insights, their evidence linked to the traces, its runs)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from assay.api.agent_insights import SEVERITIES
from assay.api.context import context
from assay.api.ui.access import Viewer
from assay.report.charts import rate_intervals
from assay.report.run_view import TEMPLATES
from assay.store import Store

router = APIRouter()
RUNS_SHOWN = 20
CSV_COLUMNS = (
    "cluster_id",
    "label",
    "weight",
    "suggestion_title",
    "suggestion",
    "eval_id",
    "run_id",
    "datasource_item_id",
    "criterion",
    "score",
    "response",
    "reason",
)


@router.get("/ui/insights", response_class=HTMLResponse, include_in_schema=False)
def insights_page(request: Request, viewer: Viewer) -> str:
    store = context(request).store
    found = list(reversed(store.list_insights(viewer)))  # the newest first
    monitors = _monitor_rows(store, viewer)
    return TEMPLATES.get_template("insights.html").render(
        title="Insights", insights=found, monitors=monitors, viewer=viewer
    )


@router.get("/ui/insights/{insight_id}", response_class=HTMLResponse, include_in_schema=False)
def insight_page(request: Request, viewer: Viewer, insight_id: str) -> str:
    insight = context(request).store.get_insight(viewer, insight_id)
    clusters = _clusters(insight)
    total = sum(int(c.get("weight") or 0) for c in clusters) or 1
    rows: list[tuple[str, float | None, tuple[float, float] | None, str]] = [
        (str(c["label"])[:40], 100 * int(c.get("weight") or 0) / total, None, f"{c.get('weight')} results")
        for c in clusters
    ]
    return TEMPLATES.get_template("insight.html").render(
        title=insight.get("displayName") or insight_id,
        viewer=viewer,
        insight=insight,
        clusters=clusters,
        chart=rate_intervals(rows) if clusters else None,
        comparisons=(insight.get("result") or {}).get("comparisons") or [],
    )


class SpreadsheetSafe:
    """A CSV writer whose text cells a spreadsheet shows as text: a cell starting with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return is a formula to Excel and LibreOffice, and answers come from
    models and users (OWASP's CSV injection advice: prefix such a cell with a single quote)."""

    FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

    def __init__(self, writer: Any) -> None:
        self.writer = writer

    def writerow(self, row: Sequence[Any]) -> None:
        self.writer.writerow([self.shown(cell) for cell in row])

    def shown(self, cell: Any) -> Any:
        return f"'{cell}" if isinstance(cell, str) and cell.startswith(self.FORMULA_STARTS) else cell


@router.get("/ui/insights/{insight_id}/export.csv", include_in_schema=False)
def insight_csv(request: Request, viewer: Viewer, insight_id: str) -> Response:
    """One row per sample of each cluster (a comparison: one per criterion and treatment)."""
    insight = context(request).store.get_insight(viewer, insight_id)
    buffer = io.StringIO()
    writer = SpreadsheetSafe(csv.writer(buffer))
    result = insight.get("result") or {}
    if result.get("type") == "EvaluationComparison":
        writer.writerow(
            [
                "criterion",
                "baseline_run_id",
                "baseline_rate",
                "treatment_run_id",
                "treatment_rate",
                "delta",
                "p_value",
                "effect",
            ]
        )
        for row in result.get("comparisons") or []:
            for item in row["compareItems"]:
                writer.writerow(
                    [
                        row["testingCriteria"],
                        row["baselineRunSummary"]["runId"],
                        row["baselineRunSummary"]["average"],
                        item["treatmentRunId"],
                        item["treatmentRunSummary"]["average"],
                        item["deltaEstimate"],
                        item["pValue"],
                        item["treatmentEffect"],
                    ]
                )
    else:
        writer.writerow(CSV_COLUMNS)
        for c in _clusters(insight):
            for sample in c.get("samples") or []:
                where, verdict = sample.get("correlationInfo") or {}, sample.get("evaluationResult") or {}
                writer.writerow(
                    [
                        c["id"],
                        c["label"],
                        c.get("weight"),
                        c.get("suggestionTitle"),
                        c.get("suggestion"),
                        where.get("eval_id"),
                        where.get("run_id"),
                        where.get("datasource_item_id"),
                        verdict.get("name"),
                        verdict.get("score"),
                        (sample.get("features") or {}).get("response"),
                        (sample.get("features") or {}).get("reason"),
                    ]
                )
    headers = {"content-disposition": f'attachment; filename="{insight_id}.csv"'}
    return Response(buffer.getvalue(), media_type="text/csv; charset=utf-8", headers=headers)


def _clusters(insight: dict[str, Any]) -> list[dict[str, Any]]:
    return list(((insight.get("result") or {}).get("clusterInsight") or {}).get("clusters") or [])


@router.get("/ui/monitors/{monitor_id}", response_class=HTMLResponse, include_in_schema=False)
def monitor_page(request: Request, viewer: Viewer, monitor_id: str) -> str:
    """An agent insight monitor: its overview, the traces behind each active insight as a chart,
    each insight with its proposed fix and its evidence linked to the trace view, and its runs."""
    store = context(request).store
    project, monitor = store.find_monitor(viewer, monitor_id)
    insights = sorted(monitor["insights"], key=_insight_order)
    active = [i for i in insights if i["status"] == "active"]
    total = sum(i["trace_count"] for i in active) or 1
    rows: list[tuple[str, float | None, tuple[float, float] | None, str]] = [
        (str(i["title"])[:40], 100 * i["trace_count"] / total, None, f"{i['trace_count']} · {i['severity']}")
        for i in active
    ]
    runs = [r for r in store.list_jobs(project, "insight_run") if r["monitor_id"] == monitor_id]
    return TEMPLATES.get_template("monitor.html").render(
        title=f"{monitor['agent_name']} · agent insights",
        viewer=viewer,
        monitor=monitor,
        insights=insights,
        chart=rate_intervals(rows) if rows else None,
        runs=runs[::-1][:RUNS_SHOWN],
    )


def _monitor_rows(store: Store, viewer: str | None) -> list[dict[str, Any]]:
    """Each monitor with how many insights are active and the worst of them, for the insights page."""
    rows = []
    for monitor in store.list_monitors(viewer):
        active = [i for i in monitor["insights"] if i["status"] == "active"]
        worst = min((i["severity"] for i in active), key=SEVERITIES.index, default=None)
        rows.append(monitor | {"active": len(active), "worst": worst})
    return rows


def _insight_order(insight: dict[str, Any]) -> tuple[bool, int, int]:
    """Active ones first, the worst and the most seen first among them."""
    return insight["status"] != "active", SEVERITIES.index(insight["severity"]), -insight["trace_count"]
