"""The model-call cache as an event loop sees it: lookups and writes gathered into batches.

A run with a hundred calls in flight asks the cache a hundred times within a few milliseconds. One
query and one transaction per call would spend more client CPU than the calls themselves (a thread
hop and a store round trip each); gathered, a wave of calls costs one of each. Nothing waits on a
timer: while one batch is in the store, the next one gathers.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any, Protocol

log = logging.getLogger(__name__)

WRITE_GATHER_SECONDS = 0.1
"""Writes wait this long for company: nobody waits on them, and a transaction per call is not free."""


class CallCache(Protocol):
    """Where cached answers live (``assay.store.Store``): many keys per query, many rows per write."""

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]: ...
    def put_many(self, entries: list[tuple[str, str, dict[str, Any]]], *, replace: bool = False) -> None: ...


class BatchedCache:
    """One event loop's reads and writes of a ``CallCache``; ``replace`` overwrites what is there
    (``--cache refresh``) instead of keeping the first answer."""

    def __init__(self, cache: CallCache, *, replace: bool = False) -> None:
        self.cache = cache
        self.replace = replace
        self._reads: dict[str, list[asyncio.Future[dict[str, Any] | None]]] = {}
        self._writes: list[tuple[str, str, dict[str, Any]]] = []
        self._reader: asyncio.Task[None] | None = None
        self._writer: asyncio.Task[None] | None = None

    async def get(self, key: str) -> dict[str, Any] | None:
        waiter: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._reads.setdefault(key, []).append(waiter)
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._read())
        return await waiter

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        """Queue an answer for the store; ``flush`` waits until everything queued is written."""
        self._writes.append((key, model, response))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write())

    async def flush(self) -> None:
        while self._writer is not None and not self._writer.done():
            await self._writer

    async def _read(self) -> None:
        while self._reads:
            batch, self._reads = self._reads, {}
            try:
                found = await asyncio.to_thread(self.cache.get_many, list(batch))
            except Exception as exc:  # noqa: BLE001 - every waiter of this batch sees the store's error
                for waiters in batch.values():
                    for waiter in waiters:
                        if not waiter.done():
                            waiter.set_exception(exc)
                continue
            for key, waiters in batch.items():
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_result(found.get(key))

    async def _write(self) -> None:
        await asyncio.sleep(WRITE_GATHER_SECONDS)
        while self._writes:
            batch, self._writes = self._writes, []
            try:
                await asyncio.to_thread(functools.partial(self.cache.put_many, batch, replace=self.replace))
            except Exception:  # noqa: BLE001 - a cache that cannot be written costs reruns, not this run
                log.warning("could not write %d answers to the model-call cache", len(batch), exc_info=True)
