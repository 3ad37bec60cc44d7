"""``assay import openai-evals``: evals, runs and output items dumped with the openai SDK from one
server are imported into a fresh store with their ids, counts and verdicts."""

from __future__ import annotations

import json

from assay.store import Store
from tests.api.conftest import wait_for
from tests.cli.test_cli import assay
from tests.support.servers import start_assay_server

CRITERIA = [
    {
        "type": "string_check",
        "name": "exact",
        "input": "{{sample.output_text}}",
        "reference": "{{item.answer}}",
        "operation": "eq",
    },
    {
        "type": "text_similarity",
        "name": "close",
        "input": "{{sample.output_text}}",
        "reference": "{{item.answer}}",
        "evaluation_metric": "fuzzy_match",
        "pass_threshold": 0.5,
    },
]
ROWS = [
    {"item": {"answer": "Paris"}, "sample": {"output_text": "Paris"}},
    {"item": {"answer": "Rome"}, "sample": {"output_text": "Roma"}},
    {"item": {"answer": "Oslo"}, "sample": {"output_text": "Madrid"}},
]


def test_objects_dumped_with_the_sdk_import_with_their_counts_and_verdicts(tmp_path):
    models = tmp_path / "models.yaml"
    models.write_text("models: {}\n")
    server, client = start_assay_server(tmp_path / "source", models, workers=1)
    try:
        created = client.evals.create(
            name="capitals",
            data_source_config={"type": "custom", "item_schema": {"type": "object"}, "include_sample_schema": True},
            testing_criteria=CRITERIA,
        )
        run = client.evals.runs.create(
            eval_id=created.id,
            name="baseline",
            data_source={"type": "jsonl", "source": {"type": "file_content", "content": ROWS}},
        )
        finished = wait_for(client, created.id, run.id, seconds=60)
        assert finished.status == "completed"
        items = client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)
        (tmp_path / "eval.json").write_text(client.evals.retrieve(created.id).model_dump_json())
        runs_page = client.evals.runs.list(eval_id=created.id)
        (tmp_path / "runs.json").write_text(json.dumps({"object": "list", "data": [r.model_dump() for r in runs_page]}))
        (tmp_path / "items.jsonl").write_text("".join(item.model_dump_json() + "\n" for item in items))
    finally:
        server.terminate()
        server.wait(timeout=30)
        client.close()

    fresh = tmp_path / "fresh"
    files = [tmp_path / "eval.json", tmp_path / "runs.json", tmp_path / "items.jsonl"]
    done = assay("import", "openai-evals", *files, home=fresh)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "imported 1 evals, 1 runs, 3 output items" in done.stdout
    again = assay("import", "openai-evals", *files, home=fresh, check=True)  # a second import changes nothing
    assert "imported 0 evals, 0 runs, 0 output items" in again.stdout

    store = Store(f"sqlite:///{fresh / 'assay.db'}")
    try:
        imported = store.get_run(run.id)
        assert imported.eval_id == created.id and imported.status == "completed"
        counts = imported.summary.result_counts
        source = finished.result_counts
        assert (counts.total, counts.passed, counts.failed, counts.errored) == (
            source.total,
            source.passed,
            source.failed,
            source.errored,
        )
        per_criterion = {
            c.testing_criteria: (c.passed, c.failed) for c in imported.summary.per_testing_criteria_results
        }
        assert per_criterion == {c.name: (c.passed, c.failed) for c in finished.per_testing_criteria_results}
        stored = {row.datasource_item_id: row for row in store.iter_output_items(run.id)}
        for item in items:
            assert stored[item.datasource_item_id].status == item.status
            assert [r.passed for r in stored[item.datasource_item_id].results] == [r.passed for r in item.results]
        assert store.get_eval(created.id).testing_criteria[0]["name"] == "exact"
    finally:
        store.close()
    # the imported run is served as the source served it
    server, client = start_assay_server(fresh, models, workers=1)
    try:
        served = client.evals.runs.retrieve(run_id=run.id, eval_id=created.id)
        assert served.result_counts == finished.result_counts and served.name == "baseline"
        served_items = client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)
        assert sorted((i.datasource_item_id, i.status) for i in served_items) == sorted(
            (i.datasource_item_id, i.status) for i in items
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
        client.close()


EVAL = {"object": "eval", "id": "eval_abc", "name": "old", "created_at": 1700000000, "testing_criteria": []}
RUN = {
    "object": "eval.run",
    "id": "evalrun_abc",
    "eval_id": "eval_abc",
    "status": "completed",
    "created_at": 1700000100,
    "result_counts": {"total": 10, "passed": 7, "failed": 2, "errored": 1},
    "per_testing_criteria_results": [{"testing_criteria": "exact-1", "passed": 7, "failed": 2}],
}


def test_a_run_exported_without_its_items_keeps_its_own_counts(tmp_path):
    (tmp_path / "export.jsonl").write_text(json.dumps(EVAL) + "\n" + json.dumps(RUN) + "\n")
    assay("import", "openai-evals", tmp_path / "export.jsonl", home=tmp_path, check=True)
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        summary = store.get_run("evalrun_abc").summary
        assert summary.result_counts.model_dump() == {
            "total": 10,
            "passed": 7,
            "failed": 2,
            "errored": 1,
            "skipped": 0,
            "undetermined": 0,
            "filtered": 0,
        }
        assert summary.per_testing_criteria_results[0].pass_rate == 7 / 9
        assert store.get_run("evalrun_abc").created_at == 1700000100
    finally:
        store.close()


def test_bad_exports_are_refused_naming_the_file_and_line(tmp_path):
    (tmp_path / "bad.jsonl").write_text(json.dumps(EVAL) + "\n{not json\n")
    done = assay("import", "openai-evals", tmp_path / "bad.jsonl", home=tmp_path)
    assert done.returncode != 0 and "bad.jsonl:2: not JSON" in done.stderr
    (tmp_path / "other.json").write_text(json.dumps({"object": "file", "id": "file_1"}))
    done = assay("import", "openai-evals", tmp_path / "other.json", home=tmp_path)
    assert "other.json:1: 'file' is not an OpenAI Evals object" in done.stderr
    (tmp_path / "orphan.json").write_text(json.dumps(RUN))
    done = assay("import", "openai-evals", tmp_path / "orphan.json", home=tmp_path)
    assert "belongs to eval 'eval_abc', in neither the files nor the store" in done.stderr
