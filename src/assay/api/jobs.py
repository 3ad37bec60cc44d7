"""Long-running operations of the API (data and evaluator generation jobs, agent insight runs,
insights): a job is stored ``queued`` when its create is answered (201 with ``Operation-Location``),
runs after the answer is sent, and ends ``succeeded`` with its result or ``failed`` with the reason,
unless a cancel came first. A job whose server stopped is failed when it is next read.

Generation jobs run in the server that answered, after the answer. Insights and agent insight runs
are queued for the workers (``queue_for_workers``; ``assay.api.background`` runs them): they make
model calls for minutes, and neither a request's thread nor the firer's may wait on them."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import BackgroundTasks, Request
from fastapi.responses import JSONResponse

from assay.errors import AssayError, NotFoundError
from assay.run.runner import dead_local_holder, local_worker

if TYPE_CHECKING:
    from assay.api.context import ApiContext
    from assay.store.jobs import JobKind

log = logging.getLogger("assay.api")

STAMPS: dict[str, tuple[str | None, str]] = {
    "data": (None, "finished_at"),
    "evaluator": (None, "finished_at"),
    "insight_run": ("started_at", "completed_at"),
    "insight": (None, "finished_at"),
}
"""Each kind's fields for when it started (None: not shown) and when it ended, as Foundry names them."""


@dataclass
class Accepted:
    """A job stored as queued, and the work that makes its result (None: a retried create's job)."""

    job: dict[str, Any]
    work: Callable[[], dict[str, Any]] | None


def accept(
    ctx: ApiContext, project: str, kind: JobKind, job: dict[str, Any], work: Callable[[], dict[str, Any]]
) -> Accepted:
    """Store ``job`` queued, this process its runner."""
    ctx.store.add_job(project, kind, _queued(kind, job), runner=local_worker())
    return Accepted(job, work)


def queue_for_workers(ctx: ApiContext, project: str, kind: JobKind, job: dict[str, Any]) -> Accepted:
    """Store ``job`` queued with no runner: the first worker free takes it."""
    ctx.store.add_job(project, kind, _queued(kind, job), runner=None)
    return Accepted(job, None)


def _queued(kind: JobKind, job: dict[str, Any]) -> dict[str, Any]:
    job |= {"status": "queued", "result": None, "error": None, "created_at": int(time.time()), STAMPS[kind][1]: None}
    return job


def answer(
    request: Request, ctx: ApiContext, project: str, kind: JobKind, accepted: Accepted, background: BackgroundTasks
) -> JSONResponse:
    """The create's answer: 201, the job, and ``Operation-Location`` naming it (the SDKs' pollers
    follow it until the job has ended and read its result there); the job runs once this is sent."""
    job = accepted.job
    if accepted.work is not None:
        background.add_task(run_job, ctx, project, kind, job["id"], accepted.work)
    location = request.url.replace(path=f"{request.url.path}/{job['id']}")
    return JSONResponse(job, status_code=201, headers={"Operation-Location": str(location)}, background=background)


def earlier(ctx: ApiContext, project: str, kind: JobKind, job_id: str) -> dict[str, Any] | None:
    """The job of that id, when there is one (a retried create with the same ``Operation-Id``)."""
    try:
        return ctx.store.get_job(project, kind, job_id)
    except NotFoundError:
        return None


def run_job(ctx: ApiContext, project: str, kind: JobKind, job_id: str, work: Callable[[], dict[str, Any]]) -> None:
    """Run a queued job and store how it ended. A job cancelled meanwhile stays cancelled; what the
    work saved (a dataset, an evaluator version, insights) is kept."""
    started, ended = STAMPS[kind]
    job = ctx.store.get_job(project, kind, job_id) | {"status": "in_progress", **_stamp(kind, started)}
    if not ctx.store.update_job(project, job):
        return  # cancelled before it started
    try:
        job |= {"status": "succeeded", "result": work()}
    except AssayError as exc:  # a model failed or wrote nothing usable: the job failed, with why
        job |= {"status": "failed", "error": {"code": getattr(exc, "code", "job_failed"), "message": str(exc)}}
    except Exception as exc:  # a bug: the job must still end, not stay in progress for ever
        log.exception("%s job %s failed", kind, job_id)
        job |= {"status": "failed", "error": {"code": "internal_error", "message": type(exc).__name__}}
    ctx.store.update_job(project, job | _stamp(kind, ended))


def cancel(ctx: ApiContext, project: str, kind: JobKind, job_id: str) -> dict[str, Any]:
    """Cancel a job that has not ended; one that has is returned as it is."""
    job = ctx.store.get_job(project, kind, job_id)
    ctx.store.update_job(project, job | {"status": "cancelled", **_stamp(kind, STAMPS[kind][1])})
    return ctx.store.get_job(project, kind, job_id)


def reap(ctx: ApiContext, project: str, kind: JobKind) -> None:
    """Fail the jobs a server of this machine was running when it stopped: they would never end."""
    for job, runner in ctx.store.unfinished_jobs(project, kind):
        if dead_local_holder(runner) is not None:
            error = {"code": "server_stopped", "message": "the server stopped before the job ended; create it again"}
            ctx.store.update_job(project, job | {"status": "failed", "error": error, **_stamp(kind, STAMPS[kind][1])})


def _stamp(kind: str, name: str | None) -> dict[str, Any]:
    moment = int(time.time())
    return ({name: moment} if name else {}) | ({"updated_at": moment} if kind == "insight_run" else {})
