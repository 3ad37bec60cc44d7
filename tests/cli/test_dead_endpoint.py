"""A judge whose endpoint is down stops the run at once, naming the model and the endpoint; what
was stored is kept, and ``--resume`` finishes the run once the endpoint is back."""

from __future__ import annotations

import json
import re

from assay.llm.breaker import CONSECUTIVE_FAILURES
from assay.store import Store
from tests.cli.test_cli import assay
from tests.support.fixtures import free_port, start_llm_server

JUDGED = '{"reason": "reads well", "score": 5}'
ITEMS = 20


def write_eval(folder, port: int):
    (folder / "data.jsonl").write_text(
        "".join(json.dumps({"query": f"Question {i}?", "response": f"Answer {i}."}) + "\n" for i in range(ITEMS))
    )
    config = folder / "eval.yaml"
    config.write_text(
        "name: dead-judge\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  judge: {{model: gpt-4.1-mini, base_url: 'http://127.0.0.1:{port}/v1', api_key: t}}\n"
        "evaluators:\n  - name: coherence\n    evaluator_name: builtin.coherence\n"
        "    initialization_parameters: {model: judge}\n"
    )
    return config


def run_id_in(text: str) -> str:
    found = re.search(r"--resume (\S+)", text)
    assert found, text
    return found.group(1)


def test_a_refused_connection_stops_the_run_before_any_item_and_resume_finishes_it(tmp_path):
    port = free_port()  # nothing listens here
    config = write_eval(tmp_path, port)
    stopped = assay("run", config, home=tmp_path)
    said = stopped.stdout + stopped.stderr
    assert stopped.returncode != 0
    assert "model 'judge'" in said and f"127.0.0.1:{port}" in said and "unreachable" in said, said
    assert "Traceback" not in said
    run_id = run_id_in(said)
    server = start_llm_server(port)  # the endpoint comes up
    try:
        server.script(default={"content": JUDGED})
        resumed = assay("run", config, "--resume", run_id, home=tmp_path)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        items = [json.loads(line) for line in assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()]
        assert sorted(i["datasource_item_id"] for i in items) == list(range(ITEMS))
        assert all(i["results"][0]["status"] == "completed" and i["results"][0]["score"] == 5 for i in items)
    finally:
        server.stop()


def test_a_refused_key_trips_the_breaker_mid_run_and_nothing_is_lost(tmp_path, llm):
    llm.reset()
    llm.script(default={"status": 401})  # the endpoint is there (the pre-flight connects) but refuses the key
    config = write_eval(tmp_path, llm.port)
    stopped = assay("run", config, "--concurrency", "2", home=tmp_path)
    said = stopped.stdout + stopped.stderr
    assert stopped.returncode != 0
    assert "model 'judge'" in said and llm.base_url in said and "401" in said, said
    # It stopped calling: the refusals that tripped the breaker and the calls then in flight.
    assert llm.stats()["requests"] <= CONSECUTIVE_FAILURES + 2
    run_id = run_id_in(said)
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        run = store.get_run(run_id)
        assert run.status == "failed" and "unreachable" in run.error["message"]
        assert store.done_item_ids(run_id) == set()  # no item was stored with the outage's errors
    finally:
        store.close()
    llm.script(default={"content": JUDGED})  # the key works again
    assay("run", config, "--resume", run_id, home=tmp_path, check=True)
    items = [json.loads(line) for line in assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()]
    assert len(items) == ITEMS and all(i["results"][0]["status"] == "completed" for i in items)
