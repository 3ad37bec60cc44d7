"""``/files``: upload (multipart), retrieve, list, content, delete."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from fastapi.responses import Response

from assay.api import fields
from assay.api.context import Owner, context
from assay.api.ratelimit import limited
from assay.api.wire import file_object, page

router = APIRouter()


@router.post("/files", dependencies=[limited("uploads")])
async def create_file(
    request: Request, file: Annotated[UploadFile, File()], purpose: Annotated[str, Form()], owner: Owner
) -> dict[str, Any]:
    fields.purpose(purpose)
    content = await file.read()  # the body limit (assay.api.limits) was enforced while it arrived
    name = file.filename or "upload.jsonl"
    row = context(request).store.create_file(project=owner, filename=name, purpose=purpose, content=content)
    return file_object(row)


@router.get("/files")
def list_files(
    request: Request,
    owner: Owner,
    purpose: str | None = None,
    after: str | None = None,
    limit: int = Query(10000, ge=1, le=10000),
    order: Literal["asc", "desc"] = "desc",
) -> dict[str, Any]:
    rows = context(request).store.list_files(owner, purpose=purpose, after=after, limit=limit + 1, order=order)
    return page([file_object(r) for r in rows], limit)


@router.get("/files/{file_id}")
def retrieve_file(request: Request, file_id: str, owner: Owner) -> dict[str, Any]:
    return file_object(context(request).store.get_file(owner, file_id))


@router.get("/files/{file_id}/content")
def file_content(request: Request, file_id: str, owner: Owner) -> Response:
    """The bytes as uploaded; the spec declares the body ``application/json`` (a string), and a
    JSONL or JSON file is served as such."""
    row = context(request).store.get_file(owner, file_id, content=True)
    return Response(bytes(row["content"]), media_type=_content_type(row["filename"]))


def _content_type(filename: str) -> str:
    if filename.lower().endswith((".jsonl", ".json")):
        return "application/json"
    return "text/csv" if filename.lower().endswith(".csv") else "application/octet-stream"


@router.delete("/files/{file_id}")
def delete_file(request: Request, file_id: str, owner: Owner) -> dict[str, Any]:
    context(request).store.delete_file(owner, file_id)
    return {"id": file_id, "object": "file", "deleted": True}
