"""A one-second cache of encoded run reads: the run object and its output-item pages.

Dashboards and SDK polling loops read the same few URLs over and over (a hundred clients on one
run); each answer costs a few queries and the encoding of a page of items. Here an answer is
computed in a worker thread, concurrent misses for one URL share that computation, and when the
run has finished (completed, failed, canceled: nothing changes it any more) every request for the
same URL within ``TTL_SECONDS`` gets the same bytes; the run's status and criteria, read beside
each page, are kept as long (clients reading different pages share them). Answers about a run
still going are never kept. A run deleted through this server drops its entries at once; one
reopened elsewhere (``assay run --resume`` on a finished run, another server) is seen within a
second.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from assay.api.credentials import presented
from assay.api.responses import WireJSON
from assay.results.criterion import Criterion

TTL_SECONDS = 1.0
MAX_ENTRIES = 4096
COMPUTE_THREADS = 4
"""Reads computed at once in threads (a database across the network). More only queue at the
interpreter: under 100 clients, the framework's 40 threads answered uncached pages at 0.55 of what
four did (``bench/api_load.py``)."""

Key = tuple[str, str]
"""(the API key the caller presented, path and query): the same key string always resolves to
the same project, so an answer kept for it is that caller's to see again."""


@dataclass
class Entry:
    at: float
    body: bytes
    eval_id: str
    run_id: str


@dataclass
class Header:
    """What every page of a run's output items is read beside: its status and its eval's criteria."""

    at: float
    status: str
    criteria: list[Criterion]


@dataclass
class ReadCache:
    ttl: float = TTL_SECONDS
    entries: dict[Key, Entry] = field(default_factory=dict)
    headers: dict[tuple[str, str, str], Header] = field(default_factory=dict)
    """A finished run's header by (project, eval, run), kept as its answers are: each page of a
    hundred clients reading different pages would read the same header again."""
    pending: dict[Key, asyncio.Future[bytes]] = field(default_factory=dict)
    inline: bool = False
    """Compute on the event loop (``Store.works_in_process``) rather than in a thread."""
    _threads: ThreadPoolExecutor | None = None

    def fresh(self, key: Key) -> bytes | None:
        found = self.entries.get(key)
        return found.body if found is not None and time.monotonic() - found.at <= self.ttl else None

    async def answer(
        self, request: Request, eval_id: str, run_id: str, compute: Callable[[], tuple[Any, bool]]
    ) -> Response:
        """The kept bytes for this request, or ``compute()`` (sync, run in a thread: the answer, or
        its bytes, and whether the run has finished) encoded, and kept if it has."""
        key = key_of(request.scope)
        kept = self.fresh(key)
        if kept is not None:
            return Response(kept, media_type="application/json")
        waiting = self.pending.get(key)
        if waiting is not None:
            return Response(await asyncio.shield(waiting), media_type="application/json")
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.pending[key] = future
        try:
            body, final = _encoded(compute()) if self.inline else await self._in_thread(compute)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here, so a miss nobody shared does not warn
            raise
        finally:
            self.pending.pop(key, None)
        future.set_result(body)
        if final:
            self._keep(key, Entry(time.monotonic(), body, eval_id, run_id))
        return Response(body, media_type="application/json")

    async def _in_thread(self, compute: Callable[[], tuple[Any, bool]]) -> tuple[bytes, bool]:
        # A pool of its own rather than anyio's threads: handing work to those cost a tenth of an
        # uncached page (backend detection, a limiter, a task per call).
        if self._threads is None:
            self._threads = ThreadPoolExecutor(COMPUTE_THREADS, thread_name_prefix="assay-read")
        context = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(self._threads, context.run, _encoded_answer, compute)

    def close(self) -> None:
        """Let the read threads end (the server is shutting down; a read still running finishes)."""
        if self._threads is not None:
            self._threads.shutdown(wait=False)
            self._threads = None

    def _keep(self, key: Key, entry: Entry) -> None:
        _make_room(self.entries)
        self.entries[key] = entry

    def run_header(
        self, project: str, eval_id: str, run_id: str, read: Callable[[], tuple[str, list[Criterion]]]
    ) -> tuple[str, list[Criterion]]:
        """The run's status and criteria: ``read()``, or, for a run that had finished when it was
        read less than ``ttl`` ago, what it gave then."""
        key = (project, eval_id, run_id)
        found = self.headers.get(key)
        if found is not None and time.monotonic() - found.at <= self.ttl:
            return found.status, found.criteria
        status, criteria = read()
        if status in FINAL_STATUSES:
            _make_room(self.headers)
            self.headers[key] = Header(time.monotonic(), status, criteria)
        return status, criteria

    def forget(self, *, eval_id: str, run_id: str | None = None) -> None:
        """Drop what is kept for a run (or every run of an eval) this server just changed."""
        gone = [k for k, e in self.entries.items() if e.eval_id == eval_id and (run_id is None or e.run_id == run_id)]
        for key in gone:
            self.entries.pop(key, None)
        # Copied first: compute threads may add a header meanwhile.
        for run in [k for k in list(self.headers) if k[1] == eval_id and (run_id is None or k[2] == run_id)]:
            self.headers.pop(run, None)


FINAL_STATUSES = frozenset({"completed", "failed", "canceled"})


def _make_room(kept: dict[Any, Any]) -> None:
    """At ``MAX_ENTRIES``, drop the oldest quarter (dicts keep their insertion order). Copied first
    and popped: compute threads may add to ``headers`` meanwhile."""
    if len(kept) >= MAX_ENTRIES:
        for old in list(kept)[: MAX_ENTRIES // 4]:
            kept.pop(old, None)


def _encoded_answer(compute: Callable[[], tuple[Any, bool]]) -> tuple[bytes, bool]:
    return _encoded(compute())


def _encoded(answer: tuple[Any, bool]) -> tuple[bytes, bool]:
    """The answer's bytes: encoded here, or already (a page of output items splices stored JSON)."""
    body = answer[0] if isinstance(answer[0], bytes) else bytes(WireJSON(answer[0]).body)
    return body, answer[1]


def key_of(scope: Scope) -> Key:
    query = scope.get("query_string", b"").decode("latin-1")
    return presented(Headers(scope=scope)), scope["path"] + (f"?{query}" if query else "")


class CachedReads:
    """Answers a GET the cache holds a fresh answer for before routing: the hit path of a hundred
    pollers costs about what serving bytes from memory does. Everything else passes through."""

    def __init__(self, app: ASGIApp, cache: ReadCache) -> None:
        self.app = app
        self.cache = cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and "/runs/" in scope["path"]:
            body = self.cache.fresh(key_of(scope))
            if body is not None:
                await Response(body, media_type="application/json")(scope, receive, send)
                return
        await self.app(scope, receive, send)
