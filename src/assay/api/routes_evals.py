"""``/evals``: create (criteria checked against the catalog and item_schema), retrieve, update, list, delete."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from fastapi import APIRouter, Query, Request

from assay.api import fields
from assay.api.context import ApiContext, JsonBody, Owner, context
from assay.api.wire import eval_object, page
from assay.dataset import ItemSchema
from assay.errors import ConfigError
from assay.results.criterion import Criterion
from assay.run.criteria import bind_criteria

router = APIRouter()
CONFIG_TYPES = {"custom", "azure_ai_source", "logs", "stored_completions"}


def check_eval(
    ctx: ApiContext, owner: str, config: Any, criteria: Any, level: str | None = None, target: bool = False
) -> None:
    """``level`` None: the eval is being created and its runs will choose (each criterion is then
    checked at a level it supports)."""
    """Refuse what no run could execute: a bad item_schema, unknown evaluators, impossible mappings."""
    if not isinstance(config, dict) or not isinstance(config.get("type"), str) or config["type"] not in CONFIG_TYPES:
        raise ConfigError("data_source_config.type must be custom (with item_schema) or azure_ai_source")
    if config["type"] == "custom" and "item_schema" not in config:
        raise ConfigError("a custom data_source_config needs an item_schema (a JSON Schema for one item)")
    schema = ItemSchema(config.get("item_schema"), where="data_source_config.item_schema")
    if not isinstance(criteria, list):
        raise ConfigError("testing_criteria must be a list")
    # Foundry's scenario evals (azure_ai_source: synthetic data, red teaming) are run against targets.
    has_sample = target or bool(config.get("include_sample_schema")) or config["type"] == "azure_ai_source"
    bind_criteria(
        criteria,
        ctx.catalog(owner),
        item_fields=schema.known_fields(),
        list_fields=schema.list_fields(),
        has_sample=has_sample,
        level="conversation" if level == "conversation" else "turn",
        models=ctx.models(),
        any_level=level is None,
    )


def with_ids(criteria: list[Criterion]) -> list[Criterion]:
    """Each criterion with an id: its own, else its name (unique in the eval), else name-uuid. Output
    items name their results by this id, as OpenAI's do: clients (azure-ai-evaluation) map a result
    back to its criterion through it, and a name that is its id keeps ``result.name == "f1"`` true."""
    names = [c.get("name") for c in criteria]
    ids = []
    for criterion in criteria:
        name = criterion.get("name") or "criterion"
        unique = names.count(criterion.get("name")) == 1
        ids.append(criterion.get("id") or (name if unique else f"{name}-{uuid.uuid4()}"))
    return [{**c, "id": given} for c, given in zip(criteria, ids, strict=True)]


@router.post("/evals", status_code=201)
def create_eval(request: Request, body: JsonBody, owner: Owner) -> dict[str, Any]:
    ctx = context(request)
    config, criteria = body.get("data_source_config"), body.get("testing_criteria")
    metadata = fields.metadata(body.get("metadata"))
    check_eval(ctx, owner, config, criteria)
    assert isinstance(config, dict) and isinstance(criteria, list)
    criteria = with_ids(criteria)
    name = fields.name(body.get("name"))
    row = ctx.store.create_eval(
        name=name, data_source_config=config, testing_criteria=criteria, metadata=metadata, project=owner
    )
    return eval_object(row)


@router.get("/evals")
def list_evals(
    request: Request,
    owner: Owner,
    after: str | None = None,
    limit: int = Query(20, ge=1, le=100),
    order: Literal["asc", "desc"] = "asc",
    order_by: Literal["created_at", "updated_at"] = "created_at",
) -> dict[str, Any]:
    store = context(request).store
    rows = store.list_evals(owner, after=after, limit=limit + 1, order=order, by_update=order_by == "updated_at")
    return page([eval_object(r) for r in rows], limit)


@router.get("/evals/{eval_id}")
def retrieve_eval(request: Request, eval_id: str, owner: Owner) -> dict[str, Any]:
    return eval_object(context(request).store.get_eval_in(owner, eval_id))


@router.post("/evals/{eval_id}")
def update_eval(request: Request, eval_id: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    """OpenAI's update (name, metadata), and assay's extension: ``testing_criteria`` replaced, the
    eval and its runs kept (``assay eval create`` updates a declared eval whose evaluator moved on)."""
    ctx = context(request)
    values: dict[str, Any] = {key: body[key] for key in ("name", "metadata") if key in body}
    if "metadata" in values:
        fields.metadata(values["metadata"])
    fields.name(values.get("name"))
    if "testing_criteria" in body:
        config = ctx.store.get_eval_in(owner, eval_id).data_source_config
        check_eval(ctx, owner, config, body["testing_criteria"])
        values["testing_criteria"] = with_ids(body["testing_criteria"])
        ctx.reads.forget(eval_id=eval_id)
    return eval_object(ctx.store.update_eval(owner, eval_id, **values))


@router.delete("/evals/{eval_id}")
def delete_eval(request: Request, eval_id: str, owner: Owner) -> dict[str, Any]:
    context(request).store.delete_eval(owner, eval_id)
    context(request).reads.forget(eval_id=eval_id)
    return {"object": "eval.deleted", "deleted": True, "eval_id": eval_id}
