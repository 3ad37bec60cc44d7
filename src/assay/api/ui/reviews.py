"""Human review in the web UI: the queues, a queue's items with who answered them, and an item to
answer, its evaluator's verdict hidden until the reviewer has answered.

A reviewer says who they are once (``as``, kept in a cookie beside the sign-in key); their answers
are labels, appended (``assay.review``). A queue's page shows the people's agreement with the
judges as soon as there are answers: the figures ``assay judges agreement`` prints.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar
from urllib.parse import quote, unquote, urlencode

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from assay.api.context import context
from assay.api.ui.access import FromThisUi, Viewer, form_token
from assay.api.ui.pages import visible_run
from assay.errors import ConfigError, NotFoundError
from assay.report.run_view import TEMPLATES, result_view
from assay.report.transcript import exchange
from assay.review.agreement import agreement, judged_results
from assay.review.labels import human_verdicts
from assay.review.queues import a_on_the_left, answer, answered, create_queue, next_position, progress

REVIEWER_COOKIE = "assay_reviewer"
router = APIRouter()


def _reviewer(request: Request, given: str | None) -> str:
    kept = unquote(request.cookies.get(REVIEWER_COOKIE, ""))
    return (given if given is not None else kept).strip()[:256]


R = TypeVar("R", HTMLResponse, RedirectResponse)


def _remembered(response: R, reviewer: str) -> R:
    if reviewer:
        # Quoted: a header holds Latin-1 only, and a reviewer may be "Zoë" or "Ārons".
        response.set_cookie(REVIEWER_COOKIE, quote(reviewer), max_age=30 * 24 * 3600, path="/ui", samesite="strict")
    return response


@router.get("/ui/reviews", response_class=HTMLResponse, include_in_schema=False)
def queues_page(request: Request, viewer: Viewer) -> str:
    store = context(request).store
    queues = []
    for queue in store.list_queues(viewer):
        entries = progress(store, queue)
        queues.append({**queue, "size": len(entries), "answered": answered(entries)})
    return TEMPLATES.get_template("reviews.html").render(title="Review", queues=queues, viewer=viewer)


@router.post("/ui/runs/{run_id}/review", include_in_schema=False, dependencies=[FromThisUi])
def new_queue(
    request: Request,
    viewer: Viewer,
    run_id: str,
    reviewers: Annotated[str, Form()] = "",
    items: Annotated[str, Form()] = "all",
    limit: Annotated[int, Form()] = 50,
    against: Annotated[str, Form()] = "",
) -> RedirectResponse:
    """A queue over a run's items, made from the run page's form."""
    store = context(request).store
    run = visible_run(store, run_id, viewer)
    other = visible_run(store, against.strip(), viewer).id if against.strip() else None
    queue = create_queue(
        store,
        run.project,
        run.id,
        against=other,
        reviewers=reviewers.split(","),
        which=items,
        limit=max(1, limit),
    )
    return RedirectResponse(f"/ui/reviews/{queue['id']}", status_code=303)


@router.get("/ui/reviews/{queue_id}", response_class=HTMLResponse, include_in_schema=False)
def queue_page(request: Request, viewer: Viewer, queue_id: str) -> Any:
    store = context(request).store
    queue = store.get_queue(viewer, queue_id)  # another project's queue is not there
    reviewer = _reviewer(request, request.query_params.get("as"))
    entries = progress(store, queue)
    run = store.get_run(queue["body"]["run_id"])
    figures = []
    if queue["body"]["mode"] == "single":
        verdicts = human_verdicts(store, run)
        judged = judged_results(store.iter_output_items(run.id))
        figures = [agreement(name, verdicts[name], judged) for name in queue["body"]["criteria"] if name in verdicts]
    page = TEMPLATES.get_template("review_queue.html").render(
        title=queue["body"]["name"],
        viewer=viewer,
        queue=queue,
        run=run,
        entries=entries,
        reviewer=reviewer,
        next_position=next_position(entries, reviewer) if reviewer else None,
        preferences=_preferences(entries, queue) if queue["body"]["mode"] == "pairwise" else None,
        figures=figures,
    )
    return _remembered(HTMLResponse(page), reviewer)


def _preferences(entries: list[dict[str, Any]], queue: dict[str, Any]) -> dict[str, int]:
    """How often each run (or a tie) was preferred, each reviewer's newest answer counted."""
    counts = {queue["body"]["run_id"]: 0, queue["body"]["against_run_id"]: 0, "tie": 0}
    for entry in entries:
        for labels in entry["answers"].values():
            counts[labels[-1]["label"]] = counts.get(labels[-1]["label"], 0) + 1
    return counts


@router.get("/ui/reviews/{queue_id}/items/{position}", response_class=HTMLResponse, include_in_schema=False)
def review_item_page(request: Request, viewer: Viewer, queue_id: str, position: int) -> Any:
    store = context(request).store
    queue = store.get_queue(viewer, queue_id)  # another project's queue is not there
    reviewer = _reviewer(request, request.query_params.get("as"))
    if not reviewer:
        return RedirectResponse(f"/ui/reviews/{queue_id}", status_code=303)
    entries = progress(store, queue)
    entry = next((e for e in entries if e["position"] == position), None)
    if entry is None:
        raise NotFoundError(f"no item {position} in review queue {queue_id!r}")
    body, item_id = queue["body"], entry["datasource_item_id"]
    output = store.get_output_item(body["run_id"], item_id)
    mine = entry["answers"].get(reviewer)
    sides = []
    if body["mode"] == "pairwise":
        runs = [body["run_id"], body["against_run_id"]]
        if not a_on_the_left(queue_id, item_id):
            runs.reverse()
        for letter, run_id in zip("AB", runs, strict=True):
            other = store.get_output_item(run_id, item_id)
            verdicts = {r.name: result_view(r) for r in other.results}
            shown = exchange(other.datasource_item, other.sample)
            sides.append({"letter": letter, "run_id": run_id, "verdicts": verdicts, **shown})
    following = next_position(entries, reviewer, after=position)
    page = TEMPLATES.get_template("review_item.html").render(
        csrf=form_token(request),
        title=f"{body['name']} · item {item_id}",
        viewer=viewer,
        queue=queue,
        entry=entry,
        reviewer=reviewer,
        shown=exchange(output.datasource_item, output.sample),
        sides=sides,
        mine={label["criterion"]: label for label in mine or []},
        # The evaluator's verdicts only once this reviewer has answered: they must not lead the answer.
        verdicts=[result_view(r) for r in output.results if r.name in body["criteria"]] if mine else None,
        next_link=None
        if following is None
        else f"/ui/reviews/{queue_id}/items/{following}?{urlencode({'as': reviewer})}",
        previous_link=f"/ui/reviews/{queue_id}/items/{position - 1}?as={quote(reviewer)}" if position else None,
        total=len(entries),
    )
    return _remembered(HTMLResponse(page), reviewer)


@router.post("/ui/reviews/{queue_id}/items/{position}", include_in_schema=False, dependencies=[FromThisUi])
async def answer_item(request: Request, viewer: Viewer, queue_id: str, position: int) -> RedirectResponse:
    store = context(request).store
    queue = store.get_queue(viewer, queue_id)  # another project's queue is not there
    form = await request.form()
    reviewer = str(form.get("reviewer") or "")
    entry = next((e for e in store.queue_items(queue["project"], queue_id) if e["position"] == position), None)
    if entry is None:
        raise NotFoundError(f"no item {position} in review queue {queue_id!r}")
    verdicts = {c: str(form[f"verdict:{c}"]) for c in queue["body"]["criteria"] if form.get(f"verdict:{c}")}
    scores = {}
    for criterion in queue["body"]["criteria"]:
        given = str(form.get(f"score:{criterion}") or "").strip()
        if given:
            try:
                scores[criterion] = float(given)
            except ValueError:
                raise ConfigError(f"score:{criterion}: {given!r} is not a number") from None
    comment = str(form.get("comment") or "").strip()
    answer(store, queue, entry["datasource_item_id"], reviewer, verdicts, scores=scores, comment=comment)
    back = f"/ui/reviews/{queue_id}/items/{position}?{urlencode({'as': reviewer.strip()})}"
    return _remembered(RedirectResponse(back, status_code=303), reviewer.strip())
