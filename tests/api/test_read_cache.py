"""The server's read cache: a finished run's reads are answered from memory, to the caller they
were computed for only; a run still going is never served stale; a delete is seen at once."""

from __future__ import annotations

import openai
import pytest

from tests.api.conftest import wait_for
from tests.api.test_evals_api import ROWS, make_eval
from tests.support.servers import RELEVANCE

INLINE = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in ROWS]}}


def finished_run(client):
    created = make_eval(client)
    run = client.evals.runs.create(eval_id=created.id, data_source=INLINE)
    assert wait_for(client, created.id, run.id).status == "completed"
    return created, run


def test_a_finished_runs_reads_are_kept_and_a_delete_drops_them(served):
    client = served.client()
    reads = served.app_state.reads
    reads.ttl = 3600.0  # no race with the clock: what is kept stays kept for this test
    created, run = finished_run(client)
    first = client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id).model_dump()
    assert any(key[1].endswith("/output_items") for key in reads.entries)
    served.store.delete_run("default", created.id, run.id)  # behind the server's back: the answer is kept
    again = client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id).model_dump()
    assert again == first
    response = client.evals.runs.output_items.with_raw_response.list(run_id=run.id, eval_id=created.id)
    assert response.headers["x-request-id"].startswith("req_")  # served from memory, still with its id

    other_eval, other = finished_run(client)
    client.evals.runs.retrieve(run_id=other.id, eval_id=other_eval.id)  # kept
    client.evals.runs.delete(run_id=other.id, eval_id=other_eval.id)  # through the API: forgotten at once
    with pytest.raises(openai.NotFoundError):
        client.evals.runs.retrieve(run_id=other.id, eval_id=other_eval.id)


def test_a_running_run_is_never_served_stale(served, llm):
    llm.script(default={"content": '{"reason": "ok", "score": 4}'}, hold_after=0)  # the judge holds every call
    client = served.client()
    created = client.evals.create(
        data_source_config={"type": "custom", "item_schema": {"type": "object"}}, testing_criteria=RELEVANCE
    )
    run = client.evals.runs.create(eval_id=created.id, data_source=INLINE)
    for _ in range(3):
        assert client.evals.runs.retrieve(run_id=run.id, eval_id=created.id).status in ("queued", "in_progress")
        client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)
    assert not served.app_state.reads.entries  # nothing about a run still going is kept
    assert not served.app_state.reads.headers
    llm.script(default={"content": '{"reason": "ok", "score": 4}'})  # released
    assert wait_for(client, created.id, run.id).status == "completed"
    assert client.evals.runs.retrieve(run_id=run.id, eval_id=created.id).status == "completed"


def test_a_cached_answer_is_only_for_the_key_it_was_computed_for(served):
    alpha, beta = served.store.create_key("alpha"), served.store.create_key("beta")
    served.app_state._keys_checked = 0.0  # the keys exist now
    a, b = served.client(alpha), served.client(beta)
    created, run = finished_run(a)
    a.evals.runs.retrieve(run_id=run.id, eval_id=created.id)
    a.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)
    with pytest.raises(openai.NotFoundError):
        b.evals.runs.retrieve(run_id=run.id, eval_id=created.id)
    with pytest.raises(openai.NotFoundError):
        b.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)
    with pytest.raises(openai.AuthenticationError):
        served.client("assay-wrong").evals.runs.retrieve(run_id=run.id, eval_id=created.id)


def test_pages_of_a_finished_run_read_its_status_and_criteria_once(served, monkeypatch):
    # A hundred clients reading different pages of one finished run: each page is its own answer,
    # but the run's status and criteria beside them are read once per TTL, and forgotten on a delete.
    client = served.client()
    reads = served.app_state.reads
    reads.ttl = 3600.0
    created, run = finished_run(client)
    header_reads = []
    status_and_criteria = served.store.status_and_criteria
    monkeypatch.setattr(
        served.store, "status_and_criteria", lambda *args: header_reads.append(args) or status_and_criteria(*args)
    )
    first = client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id, limit=1)
    second = client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id, limit=1, after=first.data[0].id)
    assert [item.datasource_item_id for item in first.data + second.data] == [0, 1]
    assert len(header_reads) == 1
    assert len([key for key in reads.entries if "/output_items?" in key[1]]) == 2  # two answers
    client.evals.runs.delete(run_id=run.id, eval_id=created.id)
    assert not reads.headers
    with pytest.raises(openai.NotFoundError):
        client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id, limit=2)


def test_the_read_threads_end_with_the_server():
    import asyncio

    from assay.api.readcache import ReadCache

    cache = ReadCache()

    async def read() -> tuple[bytes, bool]:
        return await cache._in_thread(lambda: (b"{}", True))

    assert asyncio.run(read()) == (b"{}", True)
    threads = cache._threads
    assert threads is not None
    cache.close()
    assert cache._threads is None
    with pytest.raises(RuntimeError, match="shutdown"):
        threads.submit(print)
