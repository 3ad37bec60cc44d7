"""The web UI: a runs list, and a run page with pass-rate bars, score histograms and output items.

Server-rendered HTML with inline SVG, straight from the store; ``report_url`` points here. Once the
server has API keys, the UI is behind them too: a visitor signs in with a key (kept in an HttpOnly,
SameSite=Strict cookie scoped to ``/ui``) and sees that key's project only, as the API would.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

import sqlalchemy as sa
from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from assay.api.context import context
from assay.errors import NotFoundError
from assay.report.access import KEY_COOKIE, Viewer, back_into_the_ui
from assay.report.causes import error_causes
from assay.report.charts import difference_bars, histogram, pass_rate_bars
from assay.report.redteam_view import red_team_section
from assay.report.transcript import transcript
from assay.results import RunSummary
from assay.store import tables as t

TEMPLATES = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=select_autoescape())
TEMPLATES.filters["datetime"] = lambda seconds: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds)) + " UTC"
PAGE_SIZE = 50
KEY_COOKIE_SECONDS = 7 * 24 * 3600
router = APIRouter()


@router.get("/", include_in_schema=False)
def home() -> RedirectResponse:
    return RedirectResponse("/ui")


@router.get("/ui/login", response_class=HTMLResponse, include_in_schema=False)
def login_page(next: str = "/ui") -> str:  # noqa: A002 - the query parameter's name
    return TEMPLATES.get_template("login.html").render(title="Sign in", next=back_into_the_ui(next), problem=None)


@router.post("/ui/login", include_in_schema=False, response_model=None)
def login(request: Request, key: Annotated[str, Form()] = "", next: Annotated[str, Form()] = "/ui") -> Response:  # noqa: A002
    key, target = key.strip(), back_into_the_ui(next)
    if not key or context(request).owner_of(key) is None:
        page = TEMPLATES.get_template("login.html").render(
            title="Sign in", next=target, problem="That is not one of this server's API keys."
        )
        return HTMLResponse(page, status_code=401)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(KEY_COOKIE, key, max_age=KEY_COOKIE_SECONDS, path="/ui", httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")  # fmt: skip
    return response


@router.get("/ui/logout", include_in_schema=False)
def logout() -> RedirectResponse:
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(KEY_COOKIE, path="/ui")
    return response


@router.get("/ui", response_class=HTMLResponse, include_in_schema=False)
def runs_page(request: Request, viewer: Viewer) -> str:
    runs = []
    for row in context(request).store.list_runs(limit=200, project=viewer):
        summary = RunSummary.model_validate(row["summary"] or {})
        rate = summary.pass_rate()
        runs.append({**row, "counts": summary.result_counts, "pass_rate": "–" if rate is None else f"{rate:.0%}"})
    return TEMPLATES.get_template("runs.html").render(title="Runs", runs=runs, viewer=viewer)


@router.get("/ui/compare", response_class=HTMLResponse, include_in_schema=False)
def compare_page(request: Request, viewer: Viewer, a: str, b: str, margin: float = 0.0) -> str:
    """Run ``b`` against run ``a``, item by item: intervals, tests and the flipped items."""
    from assay.compare import compare_runs

    store = context(request).store
    for run_id in (a, b):
        if viewer is not None and store.get_run(run_id)["project"] != viewer:
            raise NotFoundError(f"no run with id {run_id!r}")
    found = compare_runs(store, a, b, margin=margin)
    rows = [(f"{c.name} (B − A)", c.delta * 100, (c.interval[0] * 100, c.interval[1] * 100) if c.interval else None,
             f"n={c.n}") for c in found.criteria]  # fmt: skip
    return TEMPLATES.get_template("compare.html").render(
        title=f"{b} against {a}", viewer=viewer, comparison=found, chart=difference_bars(rows),
    )


@router.get("/ui/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
def run_page(request: Request, viewer: Viewer, run_id: str, status: str = "", after: int | None = None) -> str:
    store = context(request).store
    run = store.get_run(run_id)
    if viewer is not None and run["project"] != viewer:
        raise NotFoundError(f"no run with id {run_id!r}")  # another project's run is not there, as in the API
    summary = RunSummary.model_validate(run["summary"] or {})
    # A red-team run's per-technique rows are shown in its own section, not as criteria.
    judged = [c for c in summary.per_testing_criteria_results if c.attack_strategy is None]
    criteria = [c.testing_criteria for c in judged]
    if not criteria:  # still running: name the criteria from the eval
        criteria = [c.get("name", "") for c in store.get_eval(run["eval_id"])["testing_criteria"]]
    notes = {c.testing_criteria: f"({c.errored} errored, {c.skipped} skipped)" for c in judged if c.pass_rate is None}
    bars = pass_rate_bars([(c.testing_criteria, c.pass_rate) for c in judged], notes,
                          {c.testing_criteria: c.pass_rate_ci for c in judged})  # fmt: skip
    rows = list(store.iter_output_items(run_id, after=after, limit=PAGE_SIZE + 1, status=status or None))
    items = [_item(row, criteria) for row in rows[:PAGE_SIZE]]
    base = f"/ui/runs/{run_id}"
    next_link = (
        f"{base}?{urlencode({'status': status, 'after': rows[PAGE_SIZE - 1]['datasource_item_id']})}"
        if len(rows) > PAGE_SIZE
        else None
    )
    return TEMPLATES.get_template("run.html").render(
        title=run["name"] or run_id, run=run, counts=summary.result_counts, bars=bars, viewer=viewer,
        histograms=_histograms(store, run_id), criteria=criteria, items=items, status=status,
        causes={name: counter.most_common(3) for name, counter in error_causes(store, run_id).items()},
        next_link=next_link, first_page_link=f"{base}?{urlencode({'status': status})}" if after is not None else None,
        red_team=red_team_section(store, run_id) if summary.red_team is not None else None,
    )  # fmt: skip


def _item(row: dict[str, Any], criteria: list[str]) -> dict[str, Any]:
    by_name = {r["name"]: r for r in row["results"]}
    results = []
    for name in criteria:
        result = by_name.get(name, {})
        score = result.get("score")
        shown = result.get("status", "") if score is None else f"{score:.3g} {result.get('label') or ''}"
        css = result.get("label") or result.get("status", "")
        results.append({"shown": shown, "css": css, "reason": result.get("reason")})
    item = row["datasource_item"]
    preview = " · ".join(f"{k}: {_short(v)}" for k, v in list(item.items())[:3])
    # Items made from traces name them: a turn its trace_id, a conversation its trace_ids.
    traces = [item["trace_id"]] if isinstance(item.get("trace_id"), str) else list(item.get("trace_ids") or [])
    return {**row, "results": results, "preview": preview, "traces": [str(t) for t in traces],
            "transcript": transcript(item)}  # fmt: skip


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _histograms(store: Any, run_id: str) -> list[tuple[str, str]]:
    res = t.results.c
    query = sa.select(res.criterion, res.score).where(res.run_id == run_id, res.score.is_not(None))
    scores: dict[str, list[float]] = {}
    with store.engine.connect() as conn:
        for criterion, score in conn.execute(query):
            scores.setdefault(criterion, []).append(float(score))
    charts = []
    for name, values in sorted(scores.items()):
        low, high = min(0.0, min(values)), max(1.0, max(values))
        if high > 1 and high <= 7:
            low, high = (1.0, 5.0) if min(values) >= 1 and high <= 5 else (0.0, 7.0)
        charts.append((name, histogram(name, values, low, high)))
    return charts
