"""`assay run` holds its run's lease: a server's workers on the same store never claim the run
the CLI is executing (they used to take it over, fail it for its local file, and be overwritten)."""

from __future__ import annotations

import json

from assay.evaluators import load_catalog
from assay.llm import ModelRegistry
from assay.run.worker import start_workers
from assay.store import Store
from tests.cli.test_cli import assay


def test_a_server_on_the_same_store_leaves_the_cli_run_alone(tmp_path, llm):
    llm.reset()
    llm.script(default={"content": '{"reason": "fine", "score": 4}'}, latency_ms=150)
    (tmp_path / "data.jsonl").write_text(
        "".join(json.dumps({"query": f"q{i}", "response": "a"}) + "\n" for i in range(24))
    )
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: local\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  judge: {{model: m, base_url: '{llm.base_url}', api_key: t}}\n"
        "evaluators:\n  - {name: coherence, evaluator_name: builtin.coherence, initialization_parameters: {model: judge}}\n"
    )
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    claimed: list[str] = []
    claim = store.claim_run

    def recording(worker: str):
        run = claim(worker)
        if run is not None:
            claimed.append(run.id)
        return run

    store.claim_run = recording  # type: ignore[method-assign]
    stop, workers = start_workers(store, lambda project: load_catalog(store, project), ModelRegistry, 2)
    try:
        done = assay("run", config, "--concurrency", "2", home=tmp_path)  # ~2 s: the workers poll every 0.5 s
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=10)
    try:
        assert done.returncode == 0, done.stdout + done.stderr
        (run,) = store.list_runs()
        assert run.status == "completed" and run.error is None and run.worker.startswith("local:")
        assert claimed == []
        assert llm.stats()["completions"] == 24  # the judge saw each item once
    finally:
        store.close()


def test_a_run_left_without_its_inputs_waits_for_its_own_process(store):
    created = store.create_eval(name="e", data_source_config={"type": "custom"}, testing_criteria=[])
    run = store.create_run(eval_id=created.id, data_source={"type": "jsonl"}, held_by="local:laptop:1:1")
    assert run.status == "in_progress" and store.claim_run("server:1") is None  # its lease is live
    store.update_run(run.id, lease_until=0.0)  # the process was killed: its lease ran out
    # Its target or items were Python objects (assay.evaluate): no worker could finish it.
    assert store.claim_run("server:1") is None
    store.hold_run(run.id, "local:laptop:2:1")  # a local process may take it
    assert store.get_run(run.id).worker == "local:laptop:2:1"
    stored = store.create_run(
        eval_id=created.id, data_source={"type": "jsonl"}, held_by="local:laptop:3:1", inputs={"models": []}
    )
    store.update_run(stored.id, lease_until=0.0)
    assert store.claim_run("server:1").id == stored.id  # stored whole: any worker finishes it


def test_resume_takes_over_at_once_from_a_killed_local_process_but_not_from_a_live_one(store):
    import os
    import socket
    import subprocess
    import sys

    import pytest

    from assay.errors import ConfigError
    from assay.run import RunOptions
    from assay.run.runner import held_locally

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = socket.gethostname()
    created = store.create_eval(name="e", data_source_config={"type": "custom"}, testing_criteria=[])
    killed = store.create_run(eval_id=created.id, data_source={}, held_by=f"local:{host}:{gone.stdout.strip()}:1")
    options = held_locally(store, killed, RunOptions())  # its lease is still live, its process is not
    assert store.get_run(killed.id).worker == options.worker
    alive = store.create_run(eval_id=created.id, data_source={}, held_by=f"local:{host}:{os.getppid()}:1")
    with pytest.raises(ConfigError, match="is being executed by local:"):
        held_locally(store, alive, RunOptions())


def test_a_run_this_process_started_is_not_taken_again_and_a_cancel_since_stands(store):
    """``start`` makes the run held by this process; ``finish_run`` goes on under that lease with no
    second write to take it. A cancel that came in between stops the run rather than being undone."""
    from assay.dataset import Dataset
    from assay.run import EvalDefinition, RunOptions, finish_run, prepare, start
    from assay.run.runner import held_locally, local_worker

    criteria = [{"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"}]
    data = Dataset.from_content([{"response": "a b", "ground_truth": "a"} for _ in range(3)])
    prepared = prepare(EvalDefinition("e", criteria), data, load_catalog())
    run = start(prepared, store)
    assert run.worker == local_worker() and run.status == "in_progress"

    def taken(*args, **kwargs):
        raise AssertionError("the run was taken again")

    hold_run, store.hold_run = store.hold_run, taken  # type: ignore[method-assign]
    try:
        assert held_locally(store, run, RunOptions()).worker == local_worker()
    finally:
        store.hold_run = hold_run  # type: ignore[method-assign]

    canceled = start(prepared, store)
    store.update_run(canceled.id, status="canceled")
    outcome = finish_run(prepared, canceled, store, options=RunOptions(check_seconds=0.01))
    assert outcome.run.status == "canceled" and store.get_run(canceled.id).status == "canceled"
    store.update_run(run.id, lease_until=0.0)  # a run whose lease ran out is taken again, as before
    assert finish_run(prepared, store.get_run(run.id), store).run.status == "completed"
