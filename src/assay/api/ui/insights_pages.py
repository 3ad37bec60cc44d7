"""Insights in the web UI: the list, and an insight's page (a cluster insight's clusters with their
suggestions and samples, each linked to its item; a comparison's effects), with a CSV export."""

from __future__ import annotations

import csv
import io
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from assay.api.context import context
from assay.api.ui.access import Viewer
from assay.report.charts import rate_intervals
from assay.report.run_view import TEMPLATES

router = APIRouter()
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
    found = list(reversed(context(request).store.list_insights(viewer)))  # the newest first
    return TEMPLATES.get_template("insights.html").render(title="Insights", insights=found, viewer=viewer)


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


@router.get("/ui/insights/{insight_id}/export.csv", include_in_schema=False)
def insight_csv(request: Request, viewer: Viewer, insight_id: str) -> Response:
    """One row per sample of each cluster (a comparison: one per criterion and treatment)."""
    insight = context(request).store.get_insight(viewer, insight_id)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
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
