"""Foundry's generation jobs (``assay.api.generation_jobs``): ``/data_generation_jobs``
(``project_client.datasets.*_generation_job``) and ``/evaluator_generation_jobs``
(``project_client.evaluators.*_generation_job``). Each has create (201 with ``Operation-Location``,
the job run once the answer is sent), get, list (cursor pages, newest first), ``{id}:cancel`` and
delete."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, BackgroundTasks, Header, Request, Response
from fastapi.responses import JSONResponse

from assay.api.context import ApiContext, JsonBody, Owner, context
from assay.api.generation_jobs import create_data_job, create_evaluator_job
from assay.api.jobs import Accepted, answer, cancel, reap
from assay.api.ratelimit import limited
from assay.api.wire import Paging
from assay.store.jobs import JobKind

router = APIRouter()
Create = Callable[[ApiContext, str, dict[str, Any], str | None], Accepted]


def _routes(path: str, kind: JobKind, create: Create) -> None:
    @router.post(f"/{path}", status_code=201, dependencies=[limited("runs")])
    def create_job(
        request: Request,
        body: JsonBody,
        owner: Owner,
        background: BackgroundTasks,
        operation_id: str | None = Header(None, alias="Operation-Id"),
    ) -> JSONResponse:
        ctx = context(request)
        return answer(request, ctx, owner, kind, create(ctx, owner, body, operation_id), background)

    @router.get(f"/{path}")
    def list_jobs(
        request: Request,
        owner: Owner,
        paging: Paging,
    ) -> dict[str, Any]:
        ctx = context(request)
        reap(ctx, owner, kind)
        return paging.page(ctx.store.list_jobs(owner, kind))

    @router.get(f"/{path}/{{job_id}}")
    def get_job(request: Request, job_id: str, owner: Owner) -> dict[str, Any]:
        ctx = context(request)
        reap(ctx, owner, kind)
        return ctx.store.get_job(owner, kind, job_id)

    @router.post(f"/{path}/{{job_id}}:cancel")
    def cancel_job(request: Request, job_id: str, owner: Owner) -> dict[str, Any]:
        return cancel(context(request), owner, kind, job_id)

    @router.delete(f"/{path}/{{job_id}}", status_code=204)
    def delete_job(request: Request, job_id: str, owner: Owner) -> Response:
        context(request).store.delete_job(owner, kind, job_id)
        return Response(status_code=204)


_routes("data_generation_jobs", "data", create_data_job)
_routes("evaluator_generation_jobs", "evaluator", create_evaluator_job)
