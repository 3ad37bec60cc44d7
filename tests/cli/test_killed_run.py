"""A run `assay run` started is stored whole (its data source, options and the models, target and
evaluators eval.yaml brought): killed with SIGKILL, it is finished by `assay run --resume` or,
separately, by `assay worker`, each item stored once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from assay.store import Store
from tests.cli.test_cli import assay
from tests.support.fixtures import poll

ITEMS = 30
KEY_ENV = "ASSAY_TEST_JUDGE_KEY"


def write_eval(tmp_path: Path, base_url: str) -> Path:
    (tmp_path / "data.jsonl").write_text(
        "".join(json.dumps({"query": f"q{i}", "response": f"a{i}"}) + "\n" for i in range(ITEMS))
    )
    config = tmp_path / "eval.yaml"
    config.write_text(
        "name: killed\ndataset: {local_uri: data.jsonl}\n"
        # The key is named, not written: a stored run never holds a key, so a worker reads the same variable.
        f"models:\n  judge: {{model: m, base_url: '{base_url}', api_key_env: {KEY_ENV}}}\n"
        "evaluators:\n"
        "  - {name: coherence, evaluator_name: builtin.coherence, initialization_parameters: {model: judge}}\n"
        "  - {type: string_check, name: echoed, input: '{{item.response}}', reference: 'a1', operation: eq}\n"
    )
    return config


def environment(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "ASSAY_HOME": str(tmp_path), KEY_ENV: "test", "ASSAY_LEASE_SECONDS": "2"}
    env.pop("ASSAY_DATABASE_URL", None)
    return env


def kill_part_way(tmp_path: Path, config: Path, store: Store) -> str:
    """Start `assay run` in a process of its own and SIGKILL it once some items are stored."""
    cli = subprocess.Popen(
        [sys.executable, "-m", "assay", "run", str(config), "--concurrency", "2"],
        env=environment(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        runs = poll(store.list_runs, lambda found: bool(found) and found[0].status == "in_progress", seconds=60)
        run_id = runs[0].id
        poll(lambda: len(store.done_item_ids(run_id)), lambda done: done >= 4, seconds=60)
        cli.send_signal(signal.SIGKILL)
    finally:
        cli.kill()
        cli.wait(timeout=30)
    stored = store.get_run(run_id)
    assert stored.status == "in_progress" and len(store.done_item_ids(run_id)) < ITEMS
    assert stored.inputs["models"][0]["api_key_env"] == KEY_ENV and "api_key" not in stored.inputs["models"][0]
    return run_id


def assert_finished_once(store: Store, run_id: str) -> None:
    run = store.get_run(run_id)
    assert run.status == "completed", run.error
    items = list(store.iter_output_items(run_id))
    ids = [item.datasource_item_id for item in items]
    assert sorted(ids) == list(range(ITEMS))  # every item, each once
    assert all(item.status != "error" and len(item.results) == 2 for item in items)
    summary = run.summary
    echoed = next(r for r in summary.per_testing_criteria_results if r.testing_criteria == "echoed")
    assert (echoed.passed, echoed.failed) == (1, ITEMS - 1)


@pytest.fixture
def slow_judge(llm):
    llm.reset()
    llm.script(default={"content": '{"reason": "fine", "score": 4}'}, latency_ms=150)
    return llm


def test_a_killed_cli_run_is_finished_by_assay_run_resume(tmp_path, slow_judge):
    config = write_eval(tmp_path, slow_judge.base_url)
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        run_id = kill_part_way(tmp_path, config, store)
        resumed = assay("run", config, "--resume", run_id, home=tmp_path, env_extra={KEY_ENV: "test"})
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "resuming" in resumed.stdout
        assert_finished_once(store, run_id)
    finally:
        store.close()


def test_a_killed_cli_run_is_finished_by_assay_worker(tmp_path, slow_judge):
    config = write_eval(tmp_path, slow_judge.base_url)
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    worker = None
    try:
        run_id = kill_part_way(tmp_path, config, store)
        worker = subprocess.Popen(
            [sys.executable, "-m", "assay", "worker", "--threads", "1"],
            env=environment(tmp_path),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        poll(lambda: store.get_run(run_id).status, lambda status: status != "in_progress", seconds=120)
        run = store.get_run(run_id)
        assert not run.worker.startswith("local:")  # the worker took it over once its lease ran out
        assert_finished_once(store, run_id)
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=30)
        store.close()


def test_a_worker_refuses_a_local_file_that_changed_since_the_run_started(tmp_path, slow_judge):
    config = write_eval(tmp_path, slow_judge.base_url)
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        run_id = kill_part_way(tmp_path, config, store)
        with (tmp_path / "data.jsonl").open("a") as data:
            data.write(json.dumps({"query": "new", "response": "new"}) + "\n")
        from assay.evaluators import load_catalog
        from assay.llm import ModelRegistry
        from assay.run.worker import Worker

        store.update_run(run_id, lease_until=0.0)
        assert Worker(store, lambda project: load_catalog(store, project), ModelRegistry).work_once()
        run = store.get_run(run_id)
        assert run.status == "failed" and "data.jsonl changed since the run started" in run.error["message"]
    finally:
        store.close()
