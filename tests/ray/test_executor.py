"""``--executor ray`` on a local 2-CPU cluster: the same output items as the local executor, nothing
lost or doubled when an actor dies mid-run, one budget shared by every actor, the CLI and worker paths."""

from __future__ import annotations

import json
import sys
import threading

import pytest

from assay.dataset import Dataset
from assay.errors import ConfigError, ExecutorError
from assay.evaluators import load_catalog
from assay.llm import ModelConfig, ModelRegistry
from assay.ray import require_ray
from assay.ray.executor import RayExecutor
from assay.run import EvalDefinition, RunOptions, finish_run, prepare, start
from tests.support.fixtures import poll

ROWS = [
    {"query": f"question {i}", "response": f"the cat sat on mat {i}", "ground_truth": f"a cat sat on the mat {i % 7}"}
    for i in range(240)
]
CRITERIA = [
    {"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"},
    {"type": "azure_ai_evaluator", "name": "bleu", "evaluator_name": "builtin.bleu_score"},
    {
        "type": "azure_ai_evaluator",
        "name": "relevance",
        "evaluator_name": "builtin.relevance",
        "initialization_parameters": {"model": "judge"},
    },
]
VARYING = {"latency_ms", "duration_ms", "span_id", "start_ms", "end_ms"}
"""What differs between two runs of the same items however they are executed (the spans' ids and
times; their names, statuses and attributes are compared)."""


def script_judge(llm) -> None:
    llm.script(rules=llm_rules())


def run(store, models, executor=None, rows=ROWS, criteria=CRITERIA):
    prepared = prepare(EvalDefinition("ray", criteria), Dataset.from_content(rows), load_catalog(), models=models)
    outcome = finish_run(prepared, start(prepared, store), store, options=RunOptions(executor=executor))
    return outcome, list(store.iter_output_items(outcome.run.id))


def comparable(items: list[dict]) -> list[dict]:
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VARYING}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    keep = ("datasource_item_id", "datasource_item", "sample", "status", "results")
    return sorted((strip(item.model_dump(include=set(keep))) for item in items), key=lambda i: i["datasource_item_id"])


@pytest.mark.usefixtures("ray_cluster")
def test_ray_gives_the_local_executors_output_items(store, models, llm):
    script_judge(llm)
    models = models.with_cache_mode("off")  # both runs call the judge for every item
    local, local_items = run(store, models)
    ray_run, ray_items = run(store, models, RayExecutor(actors=2))
    assert len(ray_items) == len(ROWS) and comparable(ray_items) == comparable(local_items)
    assert {r.score for item in ray_items for r in item.results if r.name == "relevance"} == {1, 2, 3, 4, 5}
    assert (
        ray_run.summary.model_dump()["per_testing_criteria_results"]
        == local.summary.model_dump()["per_testing_criteria_results"]
    )
    assert llm.stats()["requests"] == 2 * len(ROWS)


@pytest.mark.usefixtures("ray_cluster")
def test_an_actor_killed_mid_run_loses_and_doubles_nothing(tmp_path, llm, ray_cluster):
    from assay.store import Store

    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    llm.reset()
    llm.script(rules=llm_rules(), hold_after=60)  # answers 60 calls, then holds the rest unanswered
    config = ModelConfig(name="judge", model="gpt-4.1-mini", base_url=llm.base_url, api_key="test", max_retries=4)
    models = ModelRegistry([config], cache=store, cache_mode="off")
    executor = RayExecutor(actors=2)

    def kill_one_then_release() -> None:
        poll(llm.stats, lambda s: s["requests"] > 60, seconds=60)
        ray_cluster.kill(executor.handles[0], no_restart=False)  # Ray restarts it and retries its batches
        llm.script(rules=llm_rules())

    killer = threading.Thread(target=kill_one_then_release)
    killer.start()
    outcome, items = run(store, models, executor, criteria=CRITERIA[2:])  # the judge alone: actors start faster
    killer.join()
    ids = [item.datasource_item_id for item in items]
    assert sorted(ids) == list(range(len(ROWS))) and outcome.run.status == "completed"
    assert outcome.summary.result_counts.errored == 0
    assert llm.stats()["requests"] > len(ROWS)  # the killed actor's calls were made again
    store.close()


def llm_rules() -> list[dict]:
    """Each item's verdict follows from its own text, so any order of execution gives the same answers."""
    return [
        {"match": f"mat {i}\\n", "reply": {"content": f'{{"reason": "r{i}", "score": {1 + i % 5}}}'}}
        for i in range(len(ROWS))
    ]


@pytest.mark.usefixtures("ray_cluster")
def test_every_actor_draws_on_one_budget(tmp_path, llm):
    from assay.store import Store

    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    llm.reset()
    script_judge(llm)
    config = ModelConfig(name="judge", model="gpt-4.1-mini", base_url=llm.base_url, api_key="test", rpm=60_000)
    models = ModelRegistry([config], cache=store, cache_mode="off")
    executor = RayExecutor(actors=4)
    outcome, items = run(store, models, executor, rows=ROWS[:120], criteria=CRITERIA[2:])
    assert outcome.summary.result_counts.errored == 0 and len(items) == 120
    ((key, reserved),) = executor.limiter_stats.items()
    assert key.startswith("requests|") and key.endswith("|gpt-4.1-mini") and "test" not in key
    assert reserved == llm.stats()["requests"] == 120
    store.close()


def test_a_missing_ray_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ConfigError) as caught:
        require_ray()
    assert caught.value.hint == "pip install 'assay[ray]'"


@pytest.mark.usefixtures("ray_cluster")
def test_assay_run_with_executor_ray_joins_the_cluster(tmp_path, ray_cluster):
    from tests.cli.test_cli import assay, write_eval

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS[:40]), encoding="utf-8")
    config = write_eval(tmp_path, str(data), "  - builtin.f1_score\n  - builtin.bleu_score\n")
    address = ray_cluster.get_runtime_context().gcs_address
    # A process of its own (cwd= makes the helper spawn one): it joins the cluster by its address.
    done = assay(
        "run",
        str(config),
        "--executor",
        "ray",
        "--actors",
        "2",
        home=tmp_path / "home",
        cwd=tmp_path,
        env_extra={"RAY_ADDRESS": address, "RAY_AUTH_MODE": "disabled"},
    )
    assert done.returncode == 0, done.stderr
    assert "40 items" in done.stdout and "f1_score" in done.stdout
    shown = assay("runs", "list", "--json", home=tmp_path / "home", check=True)
    (listed,) = json.loads(shown.stdout)
    assert listed["status"] == "completed" and listed["summary"]["result_counts"]["total"] == 40


@pytest.mark.usefixtures("ray_cluster")
def test_a_worker_runs_a_claimed_run_on_ray_actors(store, models, llm):
    from assay.run.worker import Worker

    script_judge(llm)
    prepared = prepare(
        EvalDefinition("queued", CRITERIA), Dataset.from_content(ROWS[:50]), load_catalog(), models=models
    )
    source = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": row} for row in ROWS[:50]]}}
    run_id = start(prepared, store, source, queued=True).id
    executors: list[RayExecutor] = []

    def executor() -> RayExecutor:
        executors.append(RayExecutor(actors=2))
        return executors[-1]

    worker = Worker(store, lambda project: load_catalog(), lambda: models, executor=executor)
    assert worker.work_once() is True
    run = store.get_run(run_id)
    assert run.status == "completed", run.error
    assert len(executors) == 1 and len(executors[0].handles) == 4  # 2 actors calling the judge, 2 for the metrics
    assert sorted(i.datasource_item_id for i in store.iter_output_items(run_id)) == list(range(50))


@pytest.mark.usefixtures("ray_cluster")
def test_an_actor_lost_for_good_fails_the_run_and_a_resume_finishes_it(tmp_path, llm, ray_cluster):
    from assay.store import Store

    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    llm.reset()
    llm.script(rules=llm_rules(), hold_after=40)
    config = ModelConfig(name="judge", model="gpt-4.1-mini", base_url=llm.base_url, api_key="test", max_retries=0)
    models = ModelRegistry([config], cache=store, cache_mode="off")
    executor = RayExecutor(actors=2)
    prepared = prepare(EvalDefinition("ray", CRITERIA[2:]), Dataset.from_content(ROWS), load_catalog(), models=models)
    run = start(prepared, store)

    def kill_one_for_good() -> None:
        poll(llm.stats, lambda s: s["requests"] > 40, seconds=60)
        ray_cluster.kill(executor.handles[0], no_restart=True)
        llm.script(rules=llm_rules())

    killer = threading.Thread(target=kill_one_for_good)
    killer.start()
    with pytest.raises(ExecutorError, match="a Ray actor failed and could not be restarted"):
        finish_run(prepared, run, store, options=RunOptions(executor=executor))
    killer.join()
    assert store.get_run(run.id).status == "failed"
    resumed = finish_run(
        prepare(EvalDefinition("ray", CRITERIA[2:]), Dataset.from_content(ROWS), load_catalog(), models=models),
        store.get_run(run.id),
        store,
    )
    assert resumed.run.status == "completed"
    assert sorted(i.datasource_item_id for i in store.iter_output_items(run.id)) == list(range(len(ROWS)))
    store.close()


@pytest.mark.usefixtures("ray_cluster")
def test_a_target_then_cpu_metrics_in_two_stages_gives_the_local_items(tmp_path, llm):
    from assay.store import Store
    from assay.targets import TargetSpec

    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    llm.reset()
    # A rule per item (the quote ends "question 1" apart from "question 10"): any order, the same answers.
    llm.script(rules=[{"match": f'question {i}"', "reply": {"content": f"the cat sat on mat {i}"}} for i in range(40)])
    config = ModelConfig(name="judge", model="gpt-4.1-mini", base_url=llm.base_url, api_key="test")
    models = ModelRegistry([config], cache=store, cache_mode="off")
    target = TargetSpec(kind="model", model="judge")
    rows = [{"query": row["query"], "ground_truth": row["ground_truth"]} for row in ROWS[:40]]
    found = []
    for executor in (None, RayExecutor(actors=2)):
        prepared = prepare(
            EvalDefinition("staged", CRITERIA[:2]),
            Dataset.from_content(rows),
            load_catalog(),
            models=models,
            target=target,
        )
        outcome = finish_run(prepared, start(prepared, store), store, options=RunOptions(executor=executor))
        found.append(comparable(list(store.iter_output_items(outcome.run.id))))
    local, spread = found
    assert spread == local and len(spread) == 40
    assert {r["name"] for item in spread for r in item["results"]} == {"f1", "bleu"}
    assert all(item["sample"]["output_text"].startswith("the cat sat") for item in spread)
    store.close()


@pytest.mark.usefixtures("ray_cluster")
def test_actors_that_only_compute_send_the_rows_the_local_run_stores(tmp_path):
    from assay.store import Store

    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    # OpenAI's {item, sample} rows: graded on their sample, whose model's calls the summary counts.
    usage = {"prompt_tokens": 9, "completion_tokens": 4}
    rows = [
        {
            "item": {"query": row["query"], "ground_truth": row["ground_truth"]},
            "sample": {"output_text": row["response"], "model": "gpt-4.1-mini", "usage": usage},
        }
        for row in ROWS[:150]
    ]
    criteria = [
        {**CRITERIA[0], "data_mapping": {"response": "{{sample.output_text}}"}},
        {
            "type": "string_check",
            "name": "cat",
            "input": "{{sample.output_text}}",
            "operation": "ilike",
            "reference": "%cat%",
        },
    ]
    found = []
    for executor in (None, RayExecutor(actors=2)):
        outcome, items = run(store, None, executor, rows=rows, criteria=criteria)
        found.append((outcome.summary, comparable(items), {item.created_at > 0 for item in items}))
    (local_summary, local_items, _), (summary, items, stamped) = found
    assert items == local_items and len(items) == 150 and stamped == {True}
    assert {r["status"] for item in items for r in item["results"]} == {"completed"}
    assert summary == local_summary
    assert summary.result_counts.total == 150 and summary.per_model_usage[0].invocation_count == 150
    store.close()
