"""Foundry's datasets REST: named, versioned datasets that point at an uploaded file or a URI,
and the upload flow ``project_client.datasets.upload_file()`` drives: ``startPendingUpload`` (a
container on assay's own blob endpoint, ``assay.api.routes_blobs``, and its SAS URL), the blob
upload, then ``PATCH .../versions/{v}`` with the blob's URL as ``dataUri``. A version's ``id``
(``azureai://accounts/assay/projects/<p>/data/<name>/versions/<v>``) is accepted as a run's
``file_id``."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from fastapi import APIRouter, Request

from assay.api.context import JsonBody, Owner, context
from assay.api.routes_blobs import sas_query
from assay.config.settings import settings
from assay.dataset.ids import dataset_id
from assay.errors import ConfigError
from assay.store import Store

router = APIRouter()


def dataset_object(row: dict[str, Any]) -> dict[str, Any]:
    uri = row["uri"] or (f"file://{row['file_id']}" if row["file_id"] else None)
    return {
        "id": dataset_id(row["project"], row["name"], row["version"]),
        "name": row["name"],
        "version": row["version"],
        "type": "uri_file",
        "dataUri": uri,
        "description": row["description"],
        "isReference": False,
        "tags": {},
    }


@router.get("/datasets")
def list_latest(request: Request, owner: Owner) -> dict[str, Any]:
    latest: dict[str, dict[str, Any]] = {}
    for row in context(request).store.list_datasets(owner):
        if row["name"] not in latest or row["created_at"] >= latest[row["name"]]["created_at"]:
            latest[row["name"]] = row
    return {"value": [dataset_object(r) for r in latest.values()], "nextLink": None}


@router.get("/datasets/{name}/versions")
def list_versions(request: Request, name: str, owner: Owner) -> dict[str, Any]:
    rows = [r for r in context(request).store.list_datasets(owner) if r["name"] == name]
    return {"value": [dataset_object(r) for r in rows], "nextLink": None}


@router.get("/datasets/{name}/versions/{version}")
def get_version(request: Request, name: str, version: str, owner: Owner) -> dict[str, Any]:
    return dataset_object(context(request).store.get_dataset(name, version, project=owner))


@router.delete("/datasets/{name}/versions/{version}", status_code=204)
def delete_version(request: Request, name: str, version: str, owner: Owner) -> None:
    context(request).store.delete_dataset(name, version, project=owner)


@router.patch("/datasets/{name}/versions/{version}")
@router.put("/datasets/{name}/versions/{version}")
def create_version(request: Request, name: str, version: str, body: JsonBody, owner: Owner) -> dict[str, Any]:
    """Register ``name@version`` for ``dataUri``: a blob uploaded through ``startPendingUpload``,
    an uploaded file's id (``file-...``), or a path or URL."""
    uri = body.get("dataUri") or body.get("data_uri")
    if not isinstance(uri, str) or not uri:
        raise ConfigError("a dataset version needs dataUri: an uploaded blob's URL, a file id, a path or a URL")
    store = context(request).store
    file_id = _uploaded_file(store, owner, uri)
    row = store.register_dataset(name=name, version=version, uri=uri, project=owner, replace=True, file_id=file_id)
    return dataset_object(row)


def _uploaded_file(store: Store, owner: str, uri: str) -> str | None:
    """The file a ``dataUri`` names: one of our blobs, or a file id; None for a path or URL."""
    if uri.startswith(("file_", "file-")):
        return str(store.get_file(owner, uri)["id"])
    path = urlsplit(uri).path
    if "/blobs/" not in path:
        return None
    container_id, _, blob = path.split("/blobs/", 1)[1].partition("/")
    container = store.container(container_id)
    file_id = store.blob_file(container_id, unquote(blob)) if container and container["project"] == owner else None
    if file_id is None:
        raise ConfigError(f"dataUri: no blob was uploaded at {uri}", hint="upload it first (startPendingUpload)")
    return file_id


@router.post("/datasets/{name}/versions/{version}/startPendingUpload")
def start_pending_upload(request: Request, name: str, version: str, owner: Owner) -> dict[str, Any]:
    container = context(request).store.open_container(owner)
    return {
        "blobReference": _blob_reference(request, container),
        "pendingUploadId": container["id"],
        "version": version,
        "pendingUploadType": "BlobReference",
    }


@router.post("/datasets/{name}/versions/{version}/credentials")
def get_credentials(request: Request, name: str, version: str, owner: Owner) -> dict[str, Any]:
    """A SAS URL to read the dataset's blob container."""
    store = context(request).store
    row = store.get_dataset(name, version, project=owner)
    if not row["file_id"]:
        raise ConfigError(f"dataset {name}@{version} points at {row['uri']}, not at an uploaded file")
    container, _ = store.expose_file(owner, row["file_id"])
    return {"blobReference": _blob_reference(request, container)}


def _blob_reference(request: Request, container: dict[str, Any]) -> dict[str, Any]:
    """Where the client puts or reads the blobs: the operator's ``ASSAY_PUBLIC_URL`` when set, else
    the address the request reached (whose ``Host`` the guard checked, ``assay.api.guard``)."""
    base = settings().public_url or str(request.base_url)
    blob_uri = f"{base.rstrip('/')}/blobs/{container['id']}"
    return {
        "blobUri": blob_uri,
        "storageAccountArmId": f"assay/projects/{container['project']}",
        "credential": {"sasUri": f"{blob_uri}?{sas_query(container)}", "type": "SAS"},
    }
