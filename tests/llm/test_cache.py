"""The batched model-call cache over a real store: one query per wave of lookups, writes flushed."""

from __future__ import annotations

import asyncio
import logging

import pytest

from assay.llm.cache import BatchedCache, KeyIndex
from tests.conftest import PG_URL, postgres_database


class Counting:
    """A store that counts the batches it is asked for, and can be told to fail."""

    def __init__(self, store, fail: str = "") -> None:
        self.store, self.fail = store, fail
        self.reads: list[int] = []
        self.writes: list[int] = []

    def get_many(self, keys):
        self.reads.append(len(keys))
        if self.fail == "read":
            raise OSError("disk gone")
        return self.store.get_many(keys)

    def cached_keys(self):
        if self.fail == "index":
            raise OSError("disk gone")
        return self.store.cached_keys()

    def put_many(self, entries, *, replace=False):
        self.writes.append(len(entries))
        if self.fail == "write":
            raise OSError("disk full")
        self.store.put_many(entries, replace=replace)


def test_a_wave_of_lookups_is_a_few_queries_and_each_gets_its_own_answer(store):
    store.put_many([(f"k{i}", "m", {"answer": i}) for i in range(0, 60, 2)])
    counting = Counting(store)

    async def wave():
        cache = BatchedCache(counting)
        return await asyncio.gather(*(cache.get(f"k{i}") for i in range(60)))

    found = asyncio.run(wave())
    assert found == [{"answer": i} if i % 2 == 0 else None for i in range(60)]
    assert sum(counting.reads) == 60 and len(counting.reads) <= 3


def test_writes_are_gathered_and_all_stored_by_flush(store):
    counting = Counting(store)

    async def write():
        cache = BatchedCache(counting)
        for i in range(40):
            cache.put(f"w{i}", "m", {"answer": i})
            await asyncio.sleep(0)
        await cache.flush()

    asyncio.run(write())
    assert sum(counting.writes) == 40 and len(counting.writes) <= 2
    assert store.get_many([f"w{i}" for i in range(40)]) == {f"w{i}": {"answer": i} for i in range(40)}


def test_a_store_that_cannot_write_costs_reruns_not_the_run(store, caplog):
    async def write():
        cache = BatchedCache(Counting(store, fail="write"))
        cache.put("x", "m", {"answer": 1})
        await cache.flush()

    with caplog.at_level(logging.WARNING, logger="assay.llm.cache"):
        asyncio.run(write())
    assert "could not write 1 answers" in caplog.text


def test_a_store_that_cannot_read_fails_every_waiter(store):
    async def read():
        cache = BatchedCache(Counting(store, fail="read"))
        return await asyncio.gather(cache.get("a"), cache.get("b"), return_exceptions=True)

    assert [type(r) for r in asyncio.run(read())] == [OSError, OSError]


@pytest.mark.parametrize("transport", ["fast", "sdk"])
def test_rerun_of_the_same_calls_is_served_from_the_store(llm, store, transport):
    from assay.llm import Model, ModelConfig

    llm.reset()
    llm.script(default={"content": "cached answer"})
    config = ModelConfig(name="m", model="gpt-4.1-mini", base_url=llm.base_url, api_key="t", transport=transport)

    async def ask_all():
        model = Model(config, cache=store)
        try:
            return await asyncio.gather(*(model.generate([{"role": "user", "content": f"q{i}"}]) for i in range(20)))
        finally:
            await model.aclose()

    first, second = asyncio.run(ask_all()), asyncio.run(ask_all())
    assert [c.text for c in second] == [c.text for c in first] == ["cached answer"] * 20
    assert not any(c.cached for c in first) and all(c.cached for c in second)
    assert llm.stats()["completions"] == 20


def test_refresh_replaces_the_cached_answer_for_later_runs(llm, store):
    from assay.llm import Model, ModelConfig

    llm.reset()
    config = ModelConfig(name="m", model="gpt-4.1-mini", base_url=llm.base_url, api_key="t")

    def ask(mode):
        async def once():
            model = Model(config, cache=store, cache_mode=mode)
            try:
                return (await model.generate([{"role": "user", "content": "same question"}])).text
            finally:
                await model.aclose()

        return asyncio.run(once())

    llm.script(default={"content": "old answer"})
    assert ask("use") == "old answer"
    llm.script(default={"content": "new answer"})
    assert ask("use") == "old answer"  # cached
    assert ask("refresh") == "new answer"  # called again...
    assert ask("use") == "new answer"  # ...and what later runs are given
    assert llm.stats()["completions"] == 2


def test_with_presence_only_keys_the_store_holds_are_looked_up(store):
    store.put_many([(f"k{i}", "m", {"answer": i}) for i in range(0, 60, 3)])
    counting = Counting(store)

    async def wave():
        cache = BatchedCache(counting, presence=True)
        found = await asyncio.gather(*(cache.get(f"k{i}") for i in range(60)))
        cache.put("new", "m", {"answer": "new"})
        await cache.flush()
        return found, await cache.get("new")

    found, again = asyncio.run(wave())
    assert found == [{"answer": i} if i % 3 == 0 else None for i in range(60)]
    assert again == {"answer": "new"}  # written during the run: looked up, not taken for absent
    assert sum(counting.reads) == 20 + 1


def test_an_index_past_its_limit_or_unreadable_leaves_every_key_looked_up(store, caplog):
    store.put_many([(f"k{i}", "m", {"answer": i}) for i in range(5)])
    assert KeyIndex.read(store, limit=4) is None
    index = KeyIndex.read(store, limit=5)
    assert index is not None and "k4" in index and "k5" not in index
    counting = Counting(store, fail="index")

    async def lookups():
        cache = BatchedCache(counting, presence=True)
        return await asyncio.gather(*(cache.get(f"k{i}") for i in range(8)))

    with caplog.at_level(logging.WARNING, logger="assay.llm.cache"):
        found = asyncio.run(lookups())
    assert found == [{"answer": i} for i in range(5)] + [None] * 3
    assert sum(counting.reads) == 8 and "could not read which answers" in caplog.text


@pytest.mark.skipif(not PG_URL, reason="needs ASSAY_TEST_DATABASE_URL (SQLite has one writer at a time)")
def test_a_cache_write_does_not_wait_long_for_a_stalled_writer_of_the_same_key(monkeypatch):
    # A stopped process that was writing the same answers holds their row locks: the write gives
    # up (the run loses a cached answer, not its time) instead of waiting for that process.
    import sqlalchemy as sa

    from assay.store import Store, assets

    monkeypatch.setattr(assets, "CACHE_LOCK_TIMEOUT_MS", 200)
    with postgres_database() as url:
        store = Store(url)
        stalled = store.engine.connect()
        try:
            transaction = stalled.begin()
            stalled.execute(
                sa.text("INSERT INTO llm_cache (key, model, response, created_at) VALUES ('k', 'm', '{}', 0)")
            )
            with pytest.raises(sa.exc.OperationalError, match="lock timeout"):
                store.put_many([("k", "m", {"answer": 1})])
            transaction.rollback()
        finally:
            stalled.close()
        store.put_many([("k", "m", {"answer": 2})])
        assert store.get_many(["k"]) == {"k": {"answer": 2}}
        store.close()
