"""A page of output items spliced from stored JSON text reads exactly as the decoded path writes it,
on both databases, whatever the store had to tag (NaN, NUL, lone surrogates) or orjson cannot hold."""

from __future__ import annotations

import json
import math

import pytest

from assay.api.responses import WireJSON
from assay.api.wire import output_item_object, output_item_page, page
from assay.results import OutputItem, Result
from tests.conftest import PG_URL, postgres_database

ITEMS = {
    "plain": {"query": "what is 2+2", "context": "arithmetic " * 200},
    "big integer": {"query": "id", "n": 123456789012345678901234567890},
    "nan": {"query": "x", "score": math.nan},
    "nul": {"query": "a\x00b"},
    "surrogate": {"query": "\ud800"},
}


def _stored(store, item: dict, sample: dict | None) -> tuple[str, str]:
    stored = store.create_eval(name="page", data_source_config={"type": "custom"}, testing_criteria=[])
    run = store.create_run(eval_id=stored.id, data_source={"type": "jsonl"})
    result = Result(name="exact", metric="string_check", score=1.0, passed=True, label="pass")
    skipped = Result(name="judge", metric="coherence", status="skipped", reason="Not applicable")
    items = [
        OutputItem(datasource_item_id=i, datasource_item=item, sample=sample, results=[result, skipped], status="pass")
        for i in range(3)
    ]
    store.add_output_items(run.id, items)
    return stored.id, run.id


def _decoded_page(store, eval_id: str, run_id: str, limit: int, foundry: bool) -> object:
    outputs = list(store.iter_output_items(run_id, limit=limit + 1))
    listed = [output_item_object(o.model_dump(), eval_id, {"exact": "exact-1"}, foundry=foundry) for o in outputs]
    return json.loads(WireJSON(page(listed, limit)).body)


@pytest.mark.parametrize("kind", list(ITEMS))
@pytest.mark.parametrize("sample", [None, {"output_text": "4", "model": "m"}])
@pytest.mark.parametrize("foundry", [False, True])
def test_a_spliced_page_reads_as_the_decoded_one(store, kind, sample, foundry):
    eval_id, run_id = _stored(store, ITEMS[kind], sample)
    texts = store.output_item_texts(run_id, after=None, limit=3)
    body = output_item_page(texts, eval_id, 2, {"exact": "exact-1"}, foundry=foundry)
    got = json.loads(body)
    assert got == _decoded_page(store, eval_id, run_id, 2, foundry)
    assert got["has_more"] is True and len(got["data"]) == 2
    first = got["data"][0]
    assert first["results"][0]["name"] == "exact-1"
    if kind == "big integer":
        assert first["datasource_item"]["n"] == 123456789012345678901234567890
    if sample is not None:
        assert first["datasource_item"]["sample.output_text"] == "4"
    else:
        assert "sample.output_text" not in first["datasource_item"]


def test_a_bare_nan_an_older_store_wrote_goes_out_as_valid_json(store):
    eval_id, run_id = _stored(store, ITEMS["plain"], None)
    texts = store.output_item_texts(run_id, after=None, limit=1)
    texts[0]["datasource_item"] = '{"query": "x", "score": NaN}'  # json.dumps' default, before the tags
    got = json.loads(output_item_page(texts, eval_id, 1), parse_constant=_refuse)
    assert got["data"][0]["datasource_item"] == {"query": "x", "score": "NaN"}


def _refuse(name: str) -> None:
    raise AssertionError(f"{name} is not JSON")


def test_pages_follow_the_keyset_both_ways(store):
    eval_id, run_id = _stored(store, ITEMS["plain"], None)
    ascending = store.output_item_texts(run_id, after=0, limit=5)
    descending = store.output_item_texts(run_id, after=2, limit=5, descending=True)
    assert [r["datasource_item_id"] for r in ascending] == [1, 2]
    assert [r["datasource_item_id"] for r in descending] == [1, 0]
    assert store.output_item_texts(run_id, after=None, limit=5, status="fail") == []


def test_a_page_is_read_with_its_run_status_and_criteria_within_the_project_only(store):
    from assay.errors import NotFoundError

    stored = store.create_eval(
        name="page", data_source_config={"type": "custom"}, testing_criteria=[{"name": "exact", "id": "exact-1"}]
    )
    run = store.create_run(eval_id=stored.id, data_source={"type": "jsonl"})
    result = Result(name="exact", metric="string_check", score=1.0, passed=True, label="pass")
    store.add_output_items(
        run.id,
        [OutputItem(datasource_item_id=i, datasource_item={"q": i}, results=[result], status="pass") for i in range(4)],
    )
    status, criteria = store.status_and_criteria("default", stored.id, run.id)
    texts = store.output_item_texts(run.id, after=1, limit=5)
    assert status == "queued" and criteria == [{"name": "exact", "id": "exact-1"}]
    assert [row["datasource_item_id"] for row in texts] == [2, 3]
    for project, eval_id, run_id in (
        ("other", stored.id, run.id),
        ("default", "eval_x", run.id),
        ("default", stored.id, "run_x"),
    ):
        with pytest.raises(NotFoundError, match=f"No run found with id '{run_id}'"):
            store.status_and_criteria(project, eval_id, run_id)


@pytest.mark.skipif(not PG_URL, reason="needs ASSAY_TEST_DATABASE_URL (the read path without a ping is PostgreSQL's)")
def test_a_read_on_a_connection_the_database_dropped_is_made_again():
    # Reads skip the pool's ping: a connection PostgreSQL closed since (a restart, an idle timeout)
    # fails the read, which is then made on a new connection instead of reaching the caller.
    import sqlalchemy as sa

    from assay.store import Store

    with postgres_database() as url:
        store = Store(url)
        try:
            stored = store.create_eval(name="page", data_source_config={"type": "custom"}, testing_criteria=[])
            run = store.create_run(eval_id=stored.id, data_source={"type": "jsonl"})
            assert store.status_and_criteria("default", stored.id, run.id) == ("queued", [])
            admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
            with admin.connect() as conn:
                dropped = conn.execute(
                    sa.text(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
                ).scalar()
            admin.dispose()
            assert dropped >= 1  # the read pool's connection among them
            assert store.status_and_criteria("default", stored.id, run.id) == ("queued", [])
            assert store.output_item_texts(run.id, after=None, limit=5) == []
        finally:
            store.close()
