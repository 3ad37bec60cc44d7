"""The web UI: a runs list, and a run page with pass-rate bars, score histograms and output items.

Server-rendered HTML with inline SVG, straight from the store; ``report_url`` points here. Once the
server has API keys, the UI is behind them too: a visitor signs in with a key (kept in an HttpOnly,
SameSite=Strict cookie scoped to ``/ui``) and sees that key's project only, as the API would.
"""

from __future__ import annotations

import json
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse

from assay.api.context import context
from assay.api.ui.access import KEY_COOKIE, FromThisUi, Viewer, back_into_the_ui, form_token
from assay.errors import ConfigError, NotFoundError
from assay.report.charts import difference_bars
from assay.report.redteam_view import red_team_section
from assay.report.run_view import (
    TEMPLATES,
    criterion_names,
    duration_of,
    finished_summary,
    item_row,
    result_view,
    score_histograms,
    summary_bars,
    top_causes,
)
from assay.report.transcript import exchange
from assay.results import RunSummary
from assay.results.stored import Run
from assay.store import Store

PAGE_SIZE = 50
FLIPS_SHOWN = 200
"""Flipped items shown side by side on the compare page."""
KEY_COOKIE_SECONDS = 7 * 24 * 3600
router = APIRouter()


@router.get("/", include_in_schema=False)
def home() -> RedirectResponse:
    return RedirectResponse("/ui")


@router.get("/ui/login", response_class=HTMLResponse, include_in_schema=False)
def login_page(request: Request, next: str = "/ui") -> str:  # noqa: A002 - the query parameter's name
    return TEMPLATES.get_template("login.html").render(
        title="Sign in", next=back_into_the_ui(next), problem=None, csrf=form_token(request)
    )


@router.post("/ui/login", include_in_schema=False, response_model=None, dependencies=[FromThisUi])
def login(request: Request, key: Annotated[str, Form()] = "", next: Annotated[str, Form()] = "/ui") -> Response:  # noqa: A002
    key, target = key.strip(), back_into_the_ui(next)
    if not key or context(request).owner_of(key) is None:
        page = TEMPLATES.get_template("login.html").render(
            title="Sign in", next=target, problem="That is not one of this server's API keys.", csrf=form_token(request)
        )
        return HTMLResponse(page, status_code=401)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        KEY_COOKIE,
        key,
        max_age=KEY_COOKIE_SECONDS,
        path="/ui",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@router.get("/ui/logout", include_in_schema=False)
def logout() -> RedirectResponse:
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(KEY_COOKIE, path="/ui")
    return response


@router.get("/ui", response_class=HTMLResponse, include_in_schema=False)
def runs_page(request: Request, viewer: Viewer) -> str:
    runs = []
    for run in context(request).store.list_runs(limit=200, project=viewer):
        summary = run.summary or RunSummary()
        rate = summary.pass_rate()
        costs = [u.cost_usd for u in summary.per_model_usage if u.cost_usd is not None]
        runs.append(
            {
                **run.as_dict(),
                "counts": summary.result_counts,
                "pass_rate": "–" if rate is None else f"{rate:.0%}",
                "models": ", ".join(u.model_name for u in summary.per_model_usage) or "–",
                "cost": f"${sum(costs):.4f}" if costs else "–",
                "duration": duration_of(run),
            }
        )
    return TEMPLATES.get_template("runs.html").render(title="Runs", runs=runs, viewer=viewer)


@router.get("/ui/compare", response_class=HTMLResponse, include_in_schema=False)
def compare_page(
    request: Request,
    viewer: Viewer,
    a: str = "",
    b: str = "",
    margin: float = 0.0,
    pick: Annotated[list[str] | None, Query()] = None,
) -> str:
    """Run ``b`` against run ``a`` (whole ids or any unique start; or two runs ``pick``ed in the runs
    list, the older the baseline), item by item: intervals, tests, and the flipped items with both
    runs' answers side by side."""
    from assay.stats.compare import compare_runs

    store = context(request).store
    if pick:
        if len(pick) != 2:
            raise ConfigError(f"pick two runs to compare, not {len(pick)}", hint="tick two runs in the list")
        older, newer = sorted((visible_run(store, p, viewer) for p in pick), key=_created)
        a, b = older.id, newer.id
    if not a or not b:
        raise ConfigError("name two runs: /ui/compare?a=BASELINE&b=RUN", hint="or tick two runs in the runs list")
    a, b = (visible_run(store, r, viewer).id for r in (a, b))
    found = compare_runs(store, a, b, margin=margin)
    rows = [
        (
            f"{c.name} (B − A)",
            c.delta * 100,
            (c.interval[0] * 100, c.interval[1] * 100) if c.interval else None,
            f"n={c.n}",
        )
        for c in found.criteria
    ]
    flipped = sorted({f.item for c in found.criteria for f in c.flips})[:FLIPS_SHOWN]
    sides = {item: [_answer(store, run_id, item) for run_id in (a, b)] for item in flipped}
    return TEMPLATES.get_template("compare.html").render(
        title=f"{b} against {a}",
        viewer=viewer,
        comparison=found,
        chart=difference_bars(rows),
        sides=sides,
        names={run_id: store.get_run(run_id).name or run_id for run_id in (a, b)},
    )


def _created(run: Run) -> tuple[int, str]:
    return run.created_at, run.id


def _answer(store: Store, run_id: str, item_id: int) -> dict[str, Any] | None:
    """What a run answered for an item (None when it has no such item)."""
    try:
        output = store.get_output_item(run_id, item_id)
    except NotFoundError:
        return None
    return exchange(output.datasource_item, output.sample)


@router.get("/ui/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
def run_page(
    request: Request,
    viewer: Viewer,
    run_id: str,
    status: str = "",
    criterion: str = "",
    verdict: str = "",
    q: str = "",
    sort: str = "",
    page: int = 0,
) -> str:
    store = context(request).store
    run = visible_run(store, run_id, viewer)
    run_id = run.id
    summary = run.summary or RunSummary()
    final = finished_summary(run, summary)
    criteria = criterion_names(store, run, summary)
    shown = {
        "status": status,
        "criterion": criterion if criterion in criteria else "",
        "verdict": verdict,
        "q": q,
        "sort": sort if sort in ("score", "-score") else "",
    }
    page = max(0, page)
    outputs, total = store.find_output_items(
        run_id,
        status=status or None,
        criterion=shown["criterion"] or None,
        verdict=verdict or None,
        text=q or None,
        sort=shown["sort"] or None,
        offset=page * PAGE_SIZE,
        limit=PAGE_SIZE,
    )
    base = f"/ui/runs/{run_id}"
    query = {k: v for k, v in shown.items() if v}
    options = run.options.stored()

    def link(to: int) -> str:
        return f"{base}?{urlencode({**query, 'page': to})}"

    return TEMPLATES.get_template("run.html").render(
        csrf=form_token(request),
        title=run.name or run_id,
        run=run,
        counts=summary.result_counts,
        bars=summary_bars(summary),
        viewer=viewer,
        histograms=score_histograms(store, run_id, final),
        criteria=criteria,
        items=[item_row(output, criteria) for output in outputs],
        causes=top_causes(store, run_id, final),
        shown=shown,
        total=total,
        first=page * PAGE_SIZE,
        next_link=link(page + 1) if (page + 1) * PAGE_SIZE < total else None,
        previous_link=link(page - 1) if page else None,
        red_team=red_team_section(store, run_id) if summary.red_team is not None else None,
        per_agent=summary.per_agent or [],
        source=run.data_source.get("type") or "–",
        options=json.dumps(options, indent=2, ensure_ascii=False, default=str) if options else None,
    )


@router.get("/ui/runs/{run_id}/report.html", response_class=HTMLResponse, include_in_schema=False)
def run_report(request: Request, viewer: Viewer, run_id: str) -> str:
    """The run's self-contained HTML report (``assay report RUN --html``)."""
    from assay.report.export import html_report

    store = context(request).store
    return html_report(store, visible_run(store, run_id, viewer).id)


@router.get("/ui/runs/{run_id}/export.jsonl", include_in_schema=False)
def run_export(request: Request, viewer: Viewer, run_id: str) -> StreamingResponse:
    """The run's output items as JSON lines (``assay results RUN --format jsonl``)."""
    store = context(request).store
    run_id = visible_run(store, run_id, viewer).id
    lines = (output.model_dump_json() + "\n" for output in store.iter_output_items(run_id))
    headers = {"content-disposition": f'attachment; filename="{run_id}.jsonl"'}
    return StreamingResponse(lines, media_type="application/x-ndjson", headers=headers)


@router.get("/ui/runs/{run_id}/items/{item_id}", response_class=HTMLResponse, include_in_schema=False)
def item_page(request: Request, viewer: Viewer, run_id: str, item_id: int) -> str:
    """One item in full: its data, what the target said, every criterion's verdict with the judge's
    own answer, tokens and latency."""
    store = context(request).store
    run = visible_run(store, run_id, viewer)
    run_id = run.id
    output = store.get_output_item(run_id, item_id)
    previous_item, next_item = store.adjacent_items(run_id, item_id)
    return TEMPLATES.get_template("item.html").render(
        title=f"{run.name or run_id} · item {item_id}",
        run=run,
        row=output,
        viewer=viewer,
        item=item_row(output, [r.name for r in output.results]),
        exchange=exchange(output.datasource_item, output.sample),
        previous_item=previous_item,
        next_item=next_item,
        results=[result_view(r) for r in output.results],
        data=json.dumps(output.datasource_item, indent=2, ensure_ascii=False, default=str),
        sample=None if not output.sample else json.dumps(output.sample, indent=2, ensure_ascii=False, default=str),
    )


def visible_run(store: Store, run_id: str, viewer: str | None) -> Run:
    run = store.get_run(store.run_id_for(run_id, viewer))  # a whole id or any unique start of the viewer's
    if viewer is not None and run.project != viewer:
        raise NotFoundError(f"no run with id {run_id!r}")  # another project's run is not there, as in the API
    return run
