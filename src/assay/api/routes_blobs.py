"""The part of Azure Blob Storage's REST API that ``azure-storage-blob`` uses to upload a dataset
and read it back: Put Blob, Put Block, Put Block List, Get Blob and List Blobs, under
``/blobs/{container}/{blob}``. The SAS token ``startPendingUpload`` handed out is the credential:
its ``sig`` signs the container and its expiry (``se``, ``SAS_SECONDS`` after it was handed out)
under the container's secret; no API key is involved, as with a real SAS URL."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import xml.etree.ElementTree as ElementTree
from email.utils import formatdate
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from assay.api.context import context
from assay.errors import UserError

router = APIRouter()
API_VERSION = "2025-11-05"
SAS_VERSION = "2025-11-05"
SAS_SECONDS = 2 * 3600
"""How long a SAS URL lasts: an upload or a read, not a standing credential."""


def storage_error(status: int, code: str, message: str) -> Response:
    body = (
        f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{code}</Code><Message>{_escape(message)}</Message></Error>'
    )
    return Response(
        body,
        status_code=status,
        media_type="application/xml",
        headers={"x-ms-error-code": code, "x-ms-version": API_VERSION},
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _headers(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        "x-ms-version": API_VERSION,
        "x-ms-request-server-encrypted": "false",
        "Date": formatdate(usegmt=True),
        "ETag": '"0x1"',
        "Last-Modified": formatdate(usegmt=True),
        **(extra or {}),
    }


def sas_query(container: dict[str, Any], now: float | None = None) -> str:
    """A SAS token for the container, expiring ``SAS_SECONDS`` from ``now``."""
    moment = dt.datetime.now(dt.UTC) if now is None else dt.datetime.fromtimestamp(now, dt.UTC)
    expiry = (moment + dt.timedelta(seconds=SAS_SECONDS)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"sv={SAS_VERSION}&sr=c&sp=racwl&se={expiry}&sig={_signed(container, expiry)}"


def _signed(container: dict[str, Any], expiry: str) -> str:
    message = f"{container['id']}\n{expiry}".encode()
    return hmac.new(container["signature"].encode(), message, hashlib.sha256).hexdigest()


def _authorized(request: Request, container_id: str) -> dict[str, Any] | Response:
    container = context(request).store.container(container_id)
    if container is None:
        return storage_error(404, "ContainerNotFound", "The specified container does not exist.")
    expiry = request.query_params.get("se", "")
    given = request.query_params.get("sig", "").encode("utf-8", errors="surrogatepass")
    # bytes: any text a caller sends compares
    if not expiry or not hmac.compare_digest(given, _signed(container, expiry).encode()):
        return storage_error(403, "AuthenticationFailed", "The SAS signature is missing or does not match.")
    try:
        expired = dt.datetime.strptime(expiry, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC) < dt.datetime.now(dt.UTC)
    except ValueError:
        expired = True
    if expired:
        return storage_error(403, "AuthenticationFailed", f"The SAS token expired at {expiry}; ask for a new one.")
    return container


@router.put("/blobs/{container_id}/{blob:path}", include_in_schema=False)
async def put(request: Request, container_id: str, blob: str) -> Response:
    container = _authorized(request, container_id)
    if isinstance(container, Response):
        return container
    store, body, comp = context(request).store, await request.body(), request.query_params.get("comp")
    try:
        if comp == "block":
            block_id = request.query_params.get("blockid", "")
            if not block_id or len(block_id) > 128:
                return storage_error(400, "InvalidQueryParameterValue", "blockid must be 1 to 128 characters.")
            store.stage_block(container, blob, block_id, body)
            return Response(status_code=201, headers=_headers())
        if comp == "blocklist":
            store.commit_blocks(container, blob, _block_ids(body))
            return Response(status_code=201, headers=_headers())
        if comp is not None:
            return storage_error(400, "UnsupportedQueryParameter", f"comp={comp} is not supported here.")
        if request.headers.get("x-ms-blob-type", "BlockBlob") != "BlockBlob":
            return storage_error(400, "InvalidHeaderValue", "only block blobs can be uploaded.")
        if request.headers.get("if-none-match") == "*" and store.blob_file(container_id, blob) is not None:
            return storage_error(409, "BlobAlreadyExists", "The specified blob already exists.")
        store.put_blob(container, blob, body)
    except UserError as exc:
        return storage_error(400, "InvalidBlockList", exc.message)
    return Response(status_code=201, headers=_headers())


def _block_ids(body: bytes) -> list[str]:
    """The ids of a Put Block List body: ``<BlockList><Latest>id</Latest>...</BlockList>``."""
    try:
        root = ElementTree.fromstring(body)  # noqa: S314 - stdlib expat: no external entities, bounded body
    except ElementTree.ParseError as exc:
        raise UserError(f"the block list is not XML ({exc})") from None
    return [(element.text or "").strip() for element in root if element.tag in ("Latest", "Committed", "Uncommitted")]


@router.get("/blobs/{container_id}", include_in_schema=False)
def list_blobs(request: Request, container_id: str) -> Response:
    """List Blobs (``?restype=container&comp=list``, ``prefix``, ``maxresults``), in one page:
    what ``ContainerClient.list_blobs`` and ``list_blob_names`` read."""
    container = _authorized(request, container_id)
    if isinstance(container, Response):
        return container
    query = request.query_params
    if query.get("restype") != "container" or query.get("comp") != "list":
        return storage_error(400, "UnsupportedQueryParameter", "a container answers only ?restype=container&comp=list")
    prefix = query.get("prefix", "")
    found = context(request).store.list_blobs(container_id, prefix)
    root = ElementTree.Element("EnumerationResults", ContainerName=str(request.url).split("?")[0])
    ElementTree.SubElement(root, "Prefix").text = prefix
    listed = ElementTree.SubElement(root, "Blobs")
    for name, size, created in found:
        entry = ElementTree.SubElement(listed, "Blob")
        ElementTree.SubElement(entry, "Name").text = name
        properties = ElementTree.SubElement(entry, "Properties")
        stamp = formatdate(created, usegmt=True)
        for tag, value in (
            ("Creation-Time", stamp),
            ("Last-Modified", stamp),
            ("Etag", "0x1"),
            ("Content-Length", str(size)),
            ("Content-Type", "application/octet-stream"),
            ("BlobType", "BlockBlob"),
        ):
            ElementTree.SubElement(properties, tag).text = value
    ElementTree.SubElement(root, "NextMarker")
    body = b'<?xml version="1.0" encoding="utf-8"?>' + ElementTree.tostring(root)
    return Response(body, headers=_headers(), media_type="application/xml")


@router.get("/blobs/{container_id}/{blob:path}", include_in_schema=False)
def get(request: Request, container_id: str, blob: str) -> Response:
    container = _authorized(request, container_id)
    if isinstance(container, Response):
        return container
    store = context(request).store
    file_id = store.blob_file(container_id, blob)
    if file_id is None:
        return storage_error(404, "BlobNotFound", "The specified blob does not exist.")
    content = bytes(store.get_file(container["project"], file_id, content=True)["content"])
    headers = _headers({"x-ms-blob-type": "BlockBlob", "Accept-Ranges": "bytes"})
    wanted = request.headers.get("x-ms-range") or request.headers.get("range")
    if not wanted:
        return Response(content, headers=headers, media_type="application/octet-stream")
    span = _range(wanted, len(content))
    if span is None:
        return storage_error(416, "InvalidRange", "The range specified is invalid for the current size of the blob.")
    start, end = span
    headers["Content-Range"] = f"bytes {start}-{end}/{len(content)}"
    return Response(content[start : end + 1], status_code=206, headers=headers, media_type="application/octet-stream")


def _range(header: str, size: int) -> tuple[int, int] | None:
    """``bytes=START-END`` (END optional) within a blob of ``size`` bytes, else None."""
    start_text, dash, end_text = header.removeprefix("bytes=").partition("-")
    if not dash or not start_text.isdigit() or (end_text and not end_text.isdigit()):
        return None
    start = int(start_text)
    end = min(int(end_text) if end_text else size - 1, size - 1)
    return (start, end) if start <= end else None
