"""The model-call cache as an event loop sees it: lookups and writes gathered into batches.

A run with a hundred calls in flight asks the cache a hundred times within a few milliseconds. One
query and one transaction per call would spend more client CPU than the calls themselves (a thread
hop and a store round trip each); gathered, a wave of calls costs one of each. Nothing waits on a
timer: while one batch is in the store, the next one gathers.

Most calls of a run are new, so most lookups miss. With ``presence`` the cache first reads which
keys the store holds (a sorted array of their hashes, 8 bytes a key) and answers a key it does not
hold at once, without the store: a lookup that waits for the store delays the call behind it by a
turn of the event loop at least, and on a busy loop (a wave of judge answers) by many milliseconds,
which at 128 calls in flight cost a tenth of the throughput. A key written since (by this run or
another process) is at worst a call made once more; the first answer stored is kept.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)

WRITE_GATHER_SECONDS = 0.1
"""Writes wait this long for company: nobody waits on them, and a transaction per call is not free."""

MAX_INDEXED_KEYS = 4_000_000
"""Past this many cached answers (32 MB of hashes, seconds to read) every key is looked up."""


class CallCache(Protocol):
    """Where cached answers live (``assay.store.Store``): many keys per query, many rows per write."""

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]: ...
    def put_many(self, entries: list[tuple[str, str, dict[str, Any]]], *, replace: bool = False) -> None: ...
    def cached_keys(self) -> Iterator[str]: ...


class BatchedCache:
    """One event loop's reads and writes of a ``CallCache``; ``replace`` overwrites what is there
    (``--cache refresh``) instead of keeping the first answer; ``presence`` answers keys the store
    does not hold without asking it (see the module's docstring)."""

    def __init__(self, cache: CallCache, *, replace: bool = False, presence: bool = False) -> None:
        self.cache = cache
        self.replace = replace
        self._reads: dict[str, list[asyncio.Future[dict[str, Any] | None]]] = {}
        self._writes: list[tuple[str, str, dict[str, Any]]] = []
        self._reader: asyncio.Task[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._presence: asyncio.Task[KeyIndex | None] | None = None
        if presence:
            self._presence = asyncio.get_running_loop().create_task(asyncio.to_thread(_index_of, cache))

    async def get(self, key: str) -> dict[str, Any] | None:
        if self._presence is not None:
            index = self._presence.result() if self._presence.done() else await self._presence
            if index is not None and key not in index:
                return None
        waiter: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._reads.setdefault(key, []).append(waiter)
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._read())
        return await waiter

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        """Queue an answer for the store; ``flush`` waits until everything queued is written."""
        self._writes.append((key, model, response))
        index = self._presence.result() if self._presence is not None and self._presence.done() else None
        if index is not None:
            index.add(key)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write())

    async def flush(self) -> None:
        if self._presence is not None and not self._presence.done():
            self._presence.cancel()  # never needed (no lookup came): the loop is closing
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


def _index_of(cache: CallCache) -> KeyIndex | None:
    try:
        return KeyIndex.read(cache)
    except Exception:  # noqa: BLE001 - without the index every key is looked up, as before it
        log.warning("could not read which answers the model-call cache holds", exc_info=True)
        return None


class KeyIndex:
    """Which keys a cache held when it was read: their hashes, sorted, and the keys added since.
    A hash shared by two keys makes one of them a lookup for nothing, never a miss for a key held."""

    def __init__(self, hashes: npt.NDArray[np.int64]) -> None:
        self._hashes = hashes
        self._added: set[str] = set()

    @classmethod
    def read(cls, cache: CallCache, limit: int | None = None) -> KeyIndex | None:
        """The index of every key ``cache`` holds; None past ``limit`` keys (default ``MAX_INDEXED_KEYS``)."""
        import numpy as np  # here, in the thread reading the index: the CLI's --help does not load it

        limit = MAX_INDEXED_KEYS if limit is None else limit
        keys = cache.cached_keys()
        try:  # eight bytes a key, sorted in place: no list of millions of Python ints on the way
            hashes = np.fromiter(itertools.islice((hash(key) for key in keys), limit + 1), dtype=np.int64)
        finally:
            close = getattr(keys, "close", None)
            if close is not None:  # a reading left early releases its cursor now, not when collected
                close()
        if len(hashes) > limit:
            return None
        hashes.sort()
        return cls(hashes)

    def add(self, key: str) -> None:
        self._added.add(key)

    def __contains__(self, key: str) -> bool:
        value = hash(key)
        at = int(self._hashes.searchsorted(value))
        return (at < len(self._hashes) and int(self._hashes[at]) == value) or key in self._added
