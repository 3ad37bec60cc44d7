"""The web UI's traces: the newest agent traces, and one trace as a span waterfall with the turns
assay reads from it (what an evaluator is given)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from assay.api.context import context
from assay.api.ui.access import Viewer
from assay.errors import NotFoundError
from assay.report.charts import span_waterfall
from assay.report.run_view import TEMPLATES
from assay.store import DEFAULT_PROJECT
from assay.traces.conversion import turns_of
from assay.traces.spans import STATUS_ERROR, Span

router = APIRouter()
SHOWN_ATTRIBUTES = (
    "gen_ai.request.model",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.tool.name",
    "gen_ai.conversation.id",
    "gen_ai.agent.name",
    "gen_ai.agent.version",
)


@router.get("/ui/traces", response_class=HTMLResponse, include_in_schema=False)
def traces_page(request: Request, viewer: Viewer) -> str:
    # Without keys every span arrives in the default project (the receiver has no path of its own).
    traces = context(request).store.list_traces(viewer or DEFAULT_PROJECT, limit=200)
    return TEMPLATES.get_template("traces.html").render(title="Traces", traces=traces, viewer=viewer)


@router.get("/ui/traces/{trace_id}", response_class=HTMLResponse, include_in_schema=False)
def trace_page(request: Request, viewer: Viewer, trace_id: str) -> str:
    spans = context(request).store.trace(trace_id, viewer)
    if not spans:
        raise NotFoundError(f"no trace with id {trace_id!r}")
    ordered = tree_order(spans)
    first = min(s.start_ns for s in spans)
    rows = [
        (
            depth,
            s.name,
            s.operation,
            (s.start_ns - first) / 1e6,
            (s.end_ns - s.start_ns) / 1e6,
            s.status_code == STATUS_ERROR,
        )
        for depth, s in ordered
    ]
    table = [
        {
            "depth": depth,
            "span": s,
            "duration_ms": (s.end_ns - s.start_ns) / 1e6,
            "shown": {k: s.attributes[k] for k in SHOWN_ATTRIBUTES if k in s.attributes},
        }
        for depth, s in ordered
    ]
    turns = [_pretty(turn.item()) for turn in turns_of(spans)]
    return TEMPLATES.get_template("trace.html").render(
        title=f"trace {trace_id}",
        trace_id=trace_id,
        waterfall=span_waterfall(rows),
        spans=table,
        turns=turns,
        viewer=viewer,
    )


def tree_order(spans: list[Span]) -> list[tuple[int, Span]]:
    """Depth-first from the roots, children by start time; a span whose parent never arrived is a root."""
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[Span]] = defaultdict(list)
    for span in spans:
        children[span.parent_span_id if span.parent_span_id in ids else None].append(span)
    ordered: list[tuple[int, Span]] = []
    stack = [(0, s) for s in sorted(children[None], key=lambda s: s.start_ns, reverse=True)]
    while stack:
        depth, span = stack.pop()
        ordered.append((depth, span))
        stack += [(depth + 1, c) for c in sorted(children[span.span_id], key=lambda s: s.start_ns, reverse=True)]
    return ordered


def _pretty(item: dict[str, Any]) -> str:
    return json.dumps(item, ensure_ascii=False, indent=2, default=str)
