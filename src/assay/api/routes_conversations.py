"""OpenAI's Conversations API: ``/conversations`` (create, retrieve, update, delete) and
``/conversations/{id}/items`` (add, list, retrieve, delete). Foundry's agent samples start a
conversation, add a user message and answer it with ``responses.create(conversation=...)``
(``assay.api.routes_capture``), which appends the answer."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from fastapi import APIRouter, Query, Request

from assay.api import fields
from assay.api.context import JsonBody, Owner, context
from assay.api.conversations import MAX_ITEMS_PER_CALL, normalized_items
from assay.errors import ConfigError

router = APIRouter()


def conversation_object(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "object": "conversation", "created_at": row["created_at"], "metadata": row["metadata"]}


def _items(raw: Any, where: str) -> list[dict[str, Any]]:
    items = normalized_items(raw, where)
    if len(items) > MAX_ITEMS_PER_CALL:
        raise ConfigError(f"{where}: at most {MAX_ITEMS_PER_CALL} items at a time (got {len(items)})")
    return items


def _item_list(items: list[dict[str, Any]], has_more: bool = False) -> dict[str, Any]:
    return {
        "object": "list",
        "data": items,
        "first_id": items[0]["id"] if items else None,
        "last_id": items[-1]["id"] if items else None,
        "has_more": has_more,
    }


@router.post("/conversations")
async def create_conversation(request: Request, body: JsonBody, owner: Owner) -> dict[str, Any]:
    store = context(request).store
    metadata = fields.metadata(body.get("metadata"))
    items = _items(body.get("items"), "items")
    row = await asyncio.to_thread(store.create_conversation, owner, metadata)
    if items:
        await asyncio.to_thread(store.add_conversation_items, owner, row["id"], items)
    return conversation_object(row)


@router.get("/conversations/{conversation_id}")
async def retrieve_conversation(request: Request, conversation_id: str, owner: Owner) -> dict[str, Any]:
    row = await asyncio.to_thread(context(request).store.get_conversation, owner, conversation_id)
    return conversation_object(row)


@router.post("/conversations/{conversation_id}")
async def update_conversation(request: Request, conversation_id: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    metadata = fields.metadata(body.get("metadata")) or {}
    row = await asyncio.to_thread(context(request).store.update_conversation, owner, conversation_id, metadata)
    return conversation_object(row)


@router.delete("/conversations/{conversation_id}")
async def delete_conversation(request: Request, conversation_id: str, owner: Owner) -> dict[str, Any]:
    await asyncio.to_thread(context(request).store.delete_conversation, owner, conversation_id)
    return {"id": conversation_id, "object": "conversation.deleted", "deleted": True}


@router.post("/conversations/{conversation_id}/items")
async def add_items(request: Request, conversation_id: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    items = _items(body.get("items"), "items")
    if not items:
        raise ConfigError("items: give at least one item, such as {role: user, content: ...}")
    await asyncio.to_thread(context(request).store.add_conversation_items, owner, conversation_id, items)
    return _item_list(items)


@router.get("/conversations/{conversation_id}/items")
async def list_items(
    request: Request,
    conversation_id: str,
    owner: Owner,
    after: str | None = None,
    limit: int = Query(default=20, ge=1, le=100),
    order: Literal["asc", "desc"] = "desc",
) -> dict[str, Any]:
    store = context(request).store
    found = await asyncio.to_thread(
        store.conversation_items, owner, conversation_id, order=order, after=after, limit=limit + 1
    )
    return _item_list(found[:limit], has_more=len(found) > limit)


@router.get("/conversations/{conversation_id}/items/{item_id}")
async def retrieve_item(request: Request, conversation_id: str, item_id: str, owner: Owner) -> dict[str, Any]:
    return await asyncio.to_thread(context(request).store.conversation_item, owner, conversation_id, item_id)


@router.delete("/conversations/{conversation_id}/items/{item_id}")
async def delete_item(request: Request, conversation_id: str, item_id: str, owner: Owner) -> dict[str, Any]:
    """OpenAI answers with the conversation the item was deleted from."""
    store = context(request).store
    await asyncio.to_thread(store.delete_conversation_item, owner, conversation_id, item_id)
    return conversation_object(await asyncio.to_thread(store.get_conversation, owner, conversation_id))
