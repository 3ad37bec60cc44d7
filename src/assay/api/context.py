"""What every request handler needs: the store, the catalog, the models, and who is calling."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request

from assay.api.buckets import Buckets
from assay.api.credentials import presented
from assay.api.errors import AuthError
from assay.api.readcache import ReadCache
from assay.dataset.readers import parse_json
from assay.errors import UserError
from assay.evaluators.catalog import Catalog
from assay.llm import ModelRegistry
from assay.store import DEFAULT_PROJECT, Store


@dataclass
class ApiContext:
    store: Store
    catalog: Callable[[str], Catalog]
    """The evaluators of a project: built-ins, plugins and the project's custom evaluators."""
    models: Callable[[], ModelRegistry]
    max_pending_ingest: int = 8
    """OTLP bodies being written at once; beyond it the receiver answers 429 so exporters back off."""
    ingest_pending: int = 0
    rate_limits: Buckets = field(default_factory=Buckets)
    """Per-key token buckets for run creation and uploads (``assay.api.ratelimit``)."""
    reads: ReadCache = field(default_factory=ReadCache)
    """The one-second cache of run reads."""
    form_secret: bytes = field(default_factory=lambda: os.urandom(32), repr=False)
    """Signs the web UI's form tokens (``assay.api.ui.access.form_token``); a restart makes open forms stale."""
    _scratch: Store | None = field(default=None, repr=False)
    _scratch_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _keys_checked: float = field(default=0.0, repr=False)
    _keys_exist: bool = field(default=False, repr=False)
    _owners: dict[str, tuple[str | None, float]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.reads.inline = self.store.works_in_process

    def scratch(self) -> Store:
        """A store of the server's own, for runs no project keeps (a grader tried on one sample:
        ``routes_graders``): SQLite in a folder of its own, made on first use, removed by ``close``."""
        with self._scratch_lock:
            if self._scratch is None:
                folder = Path(tempfile.mkdtemp(prefix="assay-scratch-"))
                self._scratch = Store(f"sqlite:///{folder / 'scratch.db'}")
            return self._scratch

    def close(self) -> None:
        """What the server holds beside its store: the cache of reads, the scratch store."""
        self.reads.close()
        with self._scratch_lock:
            scratch, self._scratch = self._scratch, None
        if scratch is not None:
            scratch.close()
            folder = Path(scratch.engine.url.database or "").parent
            shutil.rmtree(folder, ignore_errors=True)

    def keys_exist(self) -> bool:
        """Whether any API key is configured (checked at most once a second)."""
        if time.monotonic() - self._keys_checked > 1.0:
            self._keys_exist = self.store.has_keys()
            self._keys_checked = time.monotonic()
        return self._keys_exist

    def owner_of(self, key: str) -> str | None:
        """The project of an API key (None: no such key), looked up at most once a second per key:
        a key created or removed takes effect within a second, and reads cost no query."""
        known = self._owners.get(key)
        if known is not None and time.monotonic() - known[1] <= KEY_TTL_SECONDS:
            return known[0]
        if len(self._owners) >= MAX_CACHED_KEYS:
            self._owners.clear()  # bounded, whatever keys callers invent
        owner = self.store.project_for_key(key)
        self._owners[key] = (owner, time.monotonic())
        return owner


KEY_TTL_SECONDS = 1.0
MAX_CACHED_KEYS = 10_000


def context(request: Request) -> ApiContext:
    ctx: ApiContext = request.app.state.assay
    return ctx


def presented_key(request: Request) -> str:
    """The API key the caller sent: ``Authorization: Bearer KEY`` or ``api-key: KEY`` (else "")."""
    return presented(request.headers)


async def project(request: Request) -> str:
    """The caller's project: from its key when keys exist, else from the path (or ``default``)."""
    ctx = context(request)
    in_path = request.path_params.get("project")
    if not ctx.keys_exist():
        return str(in_path or DEFAULT_PROJECT)
    key = presented_key(request)
    if not key:
        raise AuthError("Missing API key: send 'Authorization: Bearer <key>' or an 'api-key' header.")
    owner = ctx.owner_of(key)
    if owner is None:
        raise AuthError("Incorrect API key provided.")
    if in_path and in_path != owner:
        raise AuthError(f"This key belongs to another project, not '{in_path}'.", status=403)
    return owner


def is_json_type(content_type: str) -> bool:
    """``application/json`` or a ``+json`` type (``application/merge-patch+json``), parameters aside."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object, parsed with the dataset reader's bounds (nesting, number length).
    Only a JSON content type is read as JSON: a form or ``text/plain`` body is what a web page can
    send without the browser asking the server first (``assay.api.guard``)."""
    raw = await request.body()
    content_type = request.headers.get("content-type", "")
    if raw and not is_json_type(content_type):
        raise UserError(
            f"request body: the content type is {content_type or 'not given'!r}, not JSON",
            hint="send the body with 'Content-Type: application/json'",
        )
    value, problem = parse_json(raw or b"null")
    if problem is not None:
        raise UserError(f"request body: {problem}", hint="send a JSON object")
    if not isinstance(value, dict):
        raise UserError(f"request body: expected a JSON object, got {type(value).__name__}")
    return value


async def optional_json_body(request: Request) -> dict[str, Any]:
    """``json_body``, or ``{}`` for a request sent without one."""
    return await json_body(request) if await request.body() else {}


Owner = Annotated[str, Depends(project)]
JsonBody = Annotated[dict[str, Any], Depends(json_body)]
OptionalJsonBody = Annotated[dict[str, Any], Depends(optional_json_body)]
