import pytest

from assay.errors import NotFoundError
from assay.results import OutputItem, Result


def item(index, passed=True, status="completed", score=0.5):
    results = [
        Result(
            name="f1", metric="f1_score", score=score, passed=passed, status=status, label="pass" if passed else "fail"
        ),
        Result(name="exact", metric="string_check", score=1.0, passed=True, label="pass"),
    ]
    return OutputItem(
        datasource_item_id=index, datasource_item={"q": index}, results=results, status=OutputItem.status_of(results)
    )


def new_run(store):
    stored_eval = store.create_eval(name="e", data_source_config={"type": "custom"}, testing_criteria=[])
    return store.create_run(eval_id=stored_eval.id, data_source={"type": "jsonl"})


def test_output_items_are_written_once_and_paged_by_keyset(store):
    run = new_run(store)
    store.add_output_items(run.id, [item(i) for i in range(0, 250)])
    store.add_output_items(run.id, [item(i, passed=False) for i in range(200, 300)])  # 200..249 already there
    assert store.done_item_ids(run.id) == set(range(300))
    ids = [row.datasource_item_id for row in store.iter_output_items(run.id, batch=64)]
    assert ids == list(range(300))
    assert [r.datasource_item_id for r in store.iter_output_items(run.id, after=290, limit=5)] == [
        291,
        292,
        293,
        294,
        295,
    ]
    assert [r.datasource_item_id for r in store.iter_output_items(run.id, descending=True, limit=2)] == [299, 298]
    failed = list(store.iter_output_items(run.id, status="fail"))
    assert [r.datasource_item_id for r in failed] == list(range(250, 300))
    assert failed[0].results[0].metric == "f1_score"


def test_summary_counts_and_means_come_from_the_database(store):
    run = new_run(store)
    store.add_output_items(
        run.id,
        [item(0, score=1.0), item(1, passed=False, score=0.0), item(2, passed=None, status="error", score=None)],
    )
    summary = store.summarize(run.id, [("f1", "f1_score"), ("exact", "string_check")])
    counts = summary.result_counts
    assert (counts.total, counts.passed, counts.failed, counts.errored) == (3, 1, 1, 1)
    f1, exact = summary.per_testing_criteria_results
    assert (f1.passed, f1.failed, f1.errored, f1.pass_rate, f1.mean_score) == (1, 1, 1, 0.5, 0.5)
    assert (exact.passed, exact.pass_rate) == (3, 1.0)


def test_runs_update_list_and_delete_items(store):
    run = new_run(store)
    store.update_run(run.id, status="completed", summary={"result_counts": {"total": 0}})
    stored = store.get_run(run.id)
    assert stored.status == "completed" and stored.finished_at is not None
    assert [r.id for r in store.list_runs(status="completed")] == [run.id]
    store.add_output_items(run.id, [item(0), item(1)])
    store.delete_output_items(run.id, [1])
    assert store.done_item_ids(run.id) == {0}
    with pytest.raises(NotFoundError):
        store.get_run("evalrun_missing")


def test_a_run_reads_back_typed_and_keeps_what_its_version_did_not_name(store):

    from assay.results import RunSummary
    from assay.results.stored import RunSettings
    from assay.store import tables as t

    run = store.create_run(
        eval_id=store.create_eval(name="e", data_source_config={}, testing_criteria=[]).id,
        data_source={"type": "jsonl"},
        options=RunSettings(repeats=3, cluster_by="doc"),
    )
    assert (run.status, run.options.repeats, run.options.cluster_by, run.summary) == ("queued", 3, "doc", None)
    store.update_run(run.id, summary=RunSummary().model_dump())
    assert isinstance(store.get_run(run.id).summary, RunSummary)
    written_elsewhere = {"repeats": 0, "judge_panel": ["a", "b"]}  # invalid here, and a key this version lacks
    with store.engine.begin() as conn:
        conn.execute(t.runs.update().where(t.runs.c.id == run.id).values(options=written_elsewhere))
    read = store.get_run(run.id)
    assert read.options.stored() == written_elsewhere  # shown as it is, not refused
    store.update_run(run.id, options=read.options)  # and written back whole
    assert store.get_run(run.id).as_dict()["options"] == written_elsewhere


def test_datasets_by_name_and_version(store):
    store.register_dataset(name="qa", version="1", uri="/a.jsonl")
    store.register_dataset(name="qa", version="2", uri="/b.jsonl")
    assert store.get_dataset("qa", "1")["uri"] == "/a.jsonl"
    assert store.get_dataset("qa")["version"] in {"1", "2"}
    with pytest.raises(NotFoundError, match="qa@3"):
        store.get_dataset("qa", "3")


@pytest.mark.parametrize(
    "properties, reason",
    [
        ({}, None),
        ({"nested": {"none": None, "list": [None, 1]}}, "a reason"),
        ({"ratio": float("nan"), "upper": float("inf")}, None),
        ({"text": "null and void"}, "null"),
        ({"nul": "a\x00b", "lone": "\ud800"}, "é ✓"),
        ({"big": 2**70, "when": None}, None),
    ],
)
def test_results_read_back_as_written_whatever_they_hold(store, properties, reason):
    """Results are encoded straight from their fields, with their nulls counted: a NaN (which orjson
    writes as null), a text holding "null", NUL, a lone surrogate or an integer past 64 bits all read
    back as they were."""
    run = new_run(store)
    result = Result(name="f1", metric="f1_score", score=float("nan"), reason=reason, properties=properties)
    item = OutputItem.checked(0, {"q": None, "answer": "null"}, {"output_text": "x", "none": None}, [result])
    store.add_output_items(run.id, [item])
    (back,) = store.iter_output_items(run.id)
    expected = result.model_dump()
    got = back.results[0].model_dump()
    assert str(got.pop("score")) == "nan" and str(expected.pop("score")) == "nan"
    if "ratio" in properties:
        assert str(got["properties"].pop("ratio")) == "nan" and str(expected["properties"].pop("ratio")) == "nan"
    assert got == expected
    assert back.datasource_item == {"q": None, "answer": "null"}
    assert back.sample == {"output_text": "x", "none": None}


def test_a_text_column_still_refuses_what_it_cannot_hold(store):
    run = new_run(store)
    result = Result(name="bad\x00name", metric="f1_score", score=0.5)
    with pytest.raises(Exception, match="NUL character"):
        store.add_output_items(run.id, [OutputItem.checked(0, {"q": 1}, None, [result])])
    assert store.done_item_ids(run.id) == set()


def test_versions_saved_at_once_each_get_their_own_number(store):
    """Foundry's samples, run side by side, create versions of one agent at once: each save takes
    the next free number (one lost a race on the unique key and answered 500)."""
    from concurrent.futures import ThreadPoolExecutor

    body = {"definition": {"kind": "prompt", "model": "m", "instructions": "hi"}}
    with ThreadPoolExecutor(8) as pool:
        saved = list(pool.map(lambda _: store.save_prompt_agent("p", "racer", body)["version"], range(16)))
    assert sorted(saved) == list(range(1, 17))
