"""Foundry's datasets REST: named, versioned datasets that point at an uploaded file or a URI."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from assay.api.context import JsonBody, Owner, context
from assay.errors import ConfigError

router = APIRouter()


def dataset_object(row: dict[str, Any]) -> dict[str, Any]:
    uri = row["uri"] or (f"file://{row['file_id']}" if row["file_id"] else None)
    return {
        "id": row["id"], "name": row["name"], "version": row["version"], "type": "uri_file", "dataUri": uri,
        "description": row["description"], "isReference": False,
    }  # fmt: skip


@router.get("/datasets/{name}/versions")
def list_versions(request: Request, name: str, owner: Owner) -> dict[str, Any]:
    rows = [r for r in context(request).store.list_datasets(owner) if r["name"] == name]
    return {"value": [dataset_object(r) for r in rows], "nextLink": None}


@router.get("/datasets/{name}/versions/{version}")
def get_version(request: Request, name: str, version: str, owner: Owner) -> dict[str, Any]:
    return dataset_object(context(request).store.get_dataset(name, version, project=owner))


@router.patch("/datasets/{name}/versions/{version}")
@router.put("/datasets/{name}/versions/{version}")
def create_version(request: Request, name: str, version: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    """Register ``name@version`` for ``dataUri``: an uploaded file's id (``file-...``) or a path or URL."""
    uri = body.get("dataUri") or body.get("data_uri")
    if not isinstance(uri, str) or not uri:
        raise ConfigError("a dataset version needs dataUri: an uploaded file id, a path or a URL")
    store = context(request).store
    if uri.startswith("file_") or uri.startswith("file-"):
        store.get_file(owner, uri)
    row = store.register_dataset(name=name, version=version, uri=uri, project=owner, replace=True)
    return dataset_object(row)
