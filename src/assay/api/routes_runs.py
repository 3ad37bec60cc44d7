"""``/evals/{id}/runs`` and their output items."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from assay.api import fields
from assay.api.context import ApiContext, JsonBody, Owner, context
from assay.api.ratelimit import limited
from assay.api.readcache import FINAL_STATUSES
from assay.api.routes_evals import check_eval
from assay.api.wire import (
    criterion_ids,
    item_index,
    output_item_id,
    output_item_object,
    output_item_page,
    page,
    run_object,
)
from assay.dataset import Dataset, ItemSchema, scan
from assay.errors import ConfigError, NotFoundError
from assay.redteam.runs import attacked_risks, check_judged
from assay.results.criterion import Criterion
from assay.results.stored import Eval, Run, RunSettings, RunStatus
from assay.run.clusters import check_cluster_by
from assay.run.repeats import check_repeats
from assay.run.request import RunRequest
from assay.run.sources import WRITTEN_AT_START, agents_in, check_data_source, dataset_for, lookup_in, target_for
from assay.run.targets import build_run_target
from assay.run.trace_sources import NO_TRACES_HINT, TRACE_SOURCES, resolve, selection_of
from assay.run.trials import split_repeats
from assay.targets import TargetSpec

router = APIRouter()


def _warn_of_schema(dataset: Dataset, schema: ItemSchema, settings: RunSettings) -> None:
    """Foundry's way: an unreadable row still refuses the run, an item that breaks the schema is
    named among the run's warnings (a field a criterion maps is still needed, item by item)."""
    report = scan(dataset, schema)
    if report.issue_count > report.schema_issue_count:
        report.raise_if_invalid()
    if report.issues:
        shown = "; ".join(str(issue) for issue in report.issues[:3])
        more = f" (and {report.issue_count - 3} more)" if report.issue_count > 3 else ""
        settings.warnings.append(f"items break the item_schema: {shown}{more}")


def _run(request: Request, run: Run, criteria: list[Criterion]) -> dict[str, Any]:
    return run_object(run, criteria, str(request.base_url).rstrip("/") + f"/ui/runs/{run.id}")


@router.post("/evals/{eval_id}/runs", dependencies=[limited("runs")], status_code=201)
def create_run(request: Request, eval_id: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    ctx = context(request)
    stored = ctx.store.get_eval_in(owner, eval_id)
    foundry = request.url.path.startswith("/api/projects/")
    run = queue_run(ctx, owner, stored, body, {"item_schema_checks": "warn"} if foundry else None)
    return _run(request, run, stored.testing_criteria)


def queue_run(
    ctx: ApiContext, owner: str, stored: Eval, body: dict[str, Any], extra: dict[str, Any] | None = None
) -> Run:
    """Check a run request of ``stored`` (the eval) through and queue it; ``extra`` options ride along."""
    eval_id = stored.id
    metadata = fields.metadata(body.get("metadata"))
    data_source = body.get("data_source")
    check_data_source(data_source)
    assert isinstance(data_source, dict)
    level = body.get("evaluation_level", "turn")
    if level not in ("turn", "conversation"):
        raise ConfigError("evaluation_level must be 'turn' or 'conversation'")
    settings = RunSettings(evaluation_level=level, cache=fields.cache_mode(metadata), **(extra or {}))
    if body.get("repeats") is not None:  # an assay extension: {judge: J, target: K} or the judge's J
        judge, settings.trials = split_repeats(body["repeats"], "repeats")
        settings.repeats = check_repeats(judge, "repeats")
    if body.get("cluster_by") is not None:  # an assay extension: intervals over clusters of items
        settings.cluster_by = check_cluster_by(body["cluster_by"], "cluster_by")
    if body.get("batch") is not None:  # an assay extension: model calls through the provider's Batch API
        if not isinstance(body["batch"], bool):
            raise ConfigError(f"batch must be true or false, got {body['batch']!r}")
        settings.batch = body["batch"]
    if data_source["type"] in TRACE_SOURCES:
        # Resolved now, so the run evaluates these traces however late (or often) a worker picks it up.
        traces = resolve(ctx.store, owner, selection_of(data_source), level)
        if not traces.trace_ids:
            raise ConfigError("no stored traces match this data source", hint=NO_TRACES_HINT)
        settings.traces = traces.options()
        dataset = traces.dataset(ctx.store, owner, level)
    elif data_source["type"] in WRITTEN_AT_START:
        dataset = None  # its items are written when a worker starts the run
    else:
        try:
            dataset = dataset_for(ctx.store, owner, data_source, settings)
        except NotFoundError as exc:
            raise ConfigError(f"data_source.source.id: {exc.message}") from None
    config = stored.data_source_config or {}
    spec = target_for(data_source, lookup_in(ctx.store, owner), agents_in(ctx.store, owner))
    if dataset is not None:
        # Like `assay run`, a run refuses to start on invalid data: every bad line is named, nothing is stored.
        # A simulation's rows are scenarios; the eval's item_schema describes the conversations made from them.
        schema = config.get("item_schema") if config.get("type") == "custom" and not _simulated(spec) else None
        if settings.item_schema_checks == "refuse":
            scan(dataset, ItemSchema(schema)).raise_if_invalid()
        else:
            _warn_of_schema(dataset, ItemSchema(schema), settings)
    check_eval(ctx, owner, stored.data_source_config, stored.testing_criteria, level, target=spec is not None)
    if settings.trials > 1 and spec is None:
        raise ConfigError("repeats.target runs the target several times per item: this data source has no target")
    if spec is not None:
        build_run_target(spec, ctx.models())  # the model must exist (and have credentials) before the run is queued
        if spec.simulation is not None and spec.simulation.warnings:
            settings.warnings = list(spec.simulation.warnings)
        if spec.red_team is not None:
            check_judged(attacked_risks(ctx.store, owner, spec.red_team), stored.testing_criteria)
    # Named as `assay run` names its runs, after the eval, when the caller gives none (OpenAI's runs
    # always carry a name): a list of runs never shows a blank.
    name = fields.name(body.get("name")) or stored.name or data_source["type"]
    request = RunRequest(data_source=data_source, settings=settings, project=owner)
    run = ctx.store.create_run(
        eval_id=eval_id, data_source=request.data_source, options=request.settings, name=name, project=owner
    )
    if metadata:
        ctx.store.update_run(run.id, metadata=metadata)
        run = ctx.store.get_run(run.id)
    return run


def _simulated(spec: TargetSpec | None) -> bool:
    return spec is not None and spec.simulation is not None


@router.get("/evals/{eval_id}/runs")
def list_runs(
    request: Request,
    eval_id: str,
    owner: Owner,
    after: str | None = None,
    limit: int = Query(20, ge=1, le=100),
    order: Literal["asc", "desc"] = "asc",
    status: RunStatus | None = None,
) -> dict[str, Any]:
    ctx = context(request)
    criteria = ctx.store.get_eval_in(owner, eval_id).testing_criteria
    runs = ctx.store.list_eval_runs(owner, eval_id, status=status, after=after, limit=limit + 1, order=order)
    return page([_run(request, run, criteria) for run in runs], limit)


# Reads of a run and its items go through the server's read cache (assay.api.readcache): async
# routes whose store work runs in a thread, shared by concurrent misses, kept a second once the
# run has finished.


@router.get("/evals/{eval_id}/runs/{run_id}")
async def retrieve_run(request: Request, eval_id: str, run_id: str, owner: Owner) -> Response:
    ctx = context(request)

    def compute() -> tuple[dict[str, Any], bool]:
        criteria = ctx.store.get_eval_in(owner, eval_id).testing_criteria
        run = ctx.store.get_run_in(owner, eval_id, run_id)
        return _run(request, run, criteria), run.status in FINAL_STATUSES

    return await ctx.reads.answer(request, eval_id, run_id, compute)


@router.get("/evals/{eval_id}/runs/{run_id}/compare")
def compare_run(
    request: Request, eval_id: str, run_id: str, owner: Owner, baseline: str, margin: float = Query(0.0, ge=0, le=1)
) -> dict[str, Any]:
    """This run against ``baseline`` (a run of this project), paired item by item (``assay.stats.compare``)."""
    from assay.stats.compare import compare_runs

    store = context(request).store
    store.get_run_in(owner, eval_id, run_id)
    other = store.get_run(baseline)
    if other.project != owner:
        raise NotFoundError(f"No run found with id '{baseline}'.")
    return compare_runs(store, baseline, run_id, margin=margin).as_dict()


@router.post("/evals/{eval_id}/runs/{run_id}/cancel")
@router.post("/evals/{eval_id}/runs/{run_id}")  # the spec's cancel route; the SDK posts to .../cancel
def cancel_run(request: Request, eval_id: str, run_id: str, owner: Owner) -> dict[str, Any]:
    ctx = context(request)
    criteria = ctx.store.get_eval_in(owner, eval_id).testing_criteria
    canceled = ctx.store.cancel_run(owner, eval_id, run_id)
    ctx.reads.forget(eval_id=eval_id, run_id=run_id)
    return _run(request, canceled, criteria)


@router.delete("/evals/{eval_id}/runs/{run_id}")
def delete_run(request: Request, eval_id: str, run_id: str, owner: Owner) -> dict[str, Any]:
    context(request).store.delete_run(owner, eval_id, run_id)
    context(request).reads.forget(eval_id=eval_id, run_id=run_id)
    return {"object": "eval.run.deleted", "deleted": True, "run_id": run_id}


def on_foundry_path(request: Request) -> bool:
    """Whether the call came through a Foundry project's path (``/api/projects/{p}/...``), whose
    wire differs from OpenAI's where Foundry's does."""
    return request.url.path.startswith("/api/projects/")


@router.get("/evals/{eval_id}/runs/{run_id}/output_items")
async def list_output_items(
    request: Request,
    eval_id: str,
    run_id: str,
    owner: Owner,
    after: str | None = None,
    limit: int = Query(20, ge=1, le=100),
    order: Literal["asc", "desc"] = "asc",
    status: Literal["pass", "fail", "failed", "error", "undetermined", "filtered", "skipped"] | None = None,
) -> Response:
    ctx = context(request)

    def compute() -> tuple[bytes, bool]:
        run_status, criteria = _run_header(ctx, owner, eval_id, run_id)
        cursor = item_index(after) if after else None
        if after and cursor is None:
            raise ConfigError(f"after: '{after}' is not an output item id")
        wanted = "fail" if status == "failed" else status
        texts = ctx.store.output_item_texts(
            run_id, after=cursor, limit=limit + 1, status=wanted, descending=order == "desc"
        )
        body = output_item_page(texts, eval_id, limit, criterion_ids(criteria), foundry=on_foundry_path(request))
        return body, run_status in FINAL_STATUSES

    return await ctx.reads.answer(request, eval_id, run_id, compute)


def _run_header(ctx: ApiContext, owner: str, eval_id: str, run_id: str) -> tuple[str, list[Criterion]]:
    """What a read of a run's output items needs of the run: its status and its eval's criteria."""
    return ctx.reads.run_header(owner, eval_id, run_id, lambda: ctx.store.status_and_criteria(owner, eval_id, run_id))


@router.get("/evals/{eval_id}/runs/{run_id}/output_items/{item_id}")
async def retrieve_output_item(request: Request, eval_id: str, run_id: str, item_id: str, owner: Owner) -> Response:
    ctx = context(request)

    def compute() -> tuple[dict[str, Any], bool]:
        run_status, criteria = _run_header(ctx, owner, eval_id, run_id)
        index = item_index(item_id)
        if index is None or output_item_id(run_id, index) != item_id:
            raise NotFoundError(f"No output item found with id '{item_id}'.")
        stored = ctx.store.get_output_item(run_id, index).model_dump()  # the row as stored, for the wire
        item = output_item_object(stored, eval_id, criterion_ids(criteria), foundry=on_foundry_path(request))
        return item, run_status in FINAL_STATUSES

    return await ctx.reads.answer(request, eval_id, run_id, compute)
