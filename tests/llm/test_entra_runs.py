"""Entra ID tokens that expire every few seconds, through a whole run of the CLI, a run over the
API and a schedule's firings: every call authenticated, none failed, the token refreshed on the way.
Each run lasts longer than several token lifetimes because the scripted server answers slowly, not
because of any timer in the test."""

from __future__ import annotations

import json

import pytest

from assay.api import create_app, schedules
from assay.api.background import for_workers
from assay.evaluators import load_catalog
from assay.llm import ModelConfig, ModelRegistry
from assay.run.worker import start_workers
from tests.api.conftest import Served, wait_for
from tests.cli.test_cli import assay
from tests.support.entra import fake_az, no_cached_tokens  # noqa: F401 - an autouse fixture
from tests.support.fixtures import stored_runs
from tests.support.servers import uvicorn_in_thread

AUDIENCE = "https://cognitiveservices.azure.com"
LIFETIME = 3
JUDGED = '{"reason": "reads well", "score": 5}'


@pytest.fixture(autouse=True)
def fresh(llm):
    llm.reset()


def azure_judge(llm) -> dict:
    endpoint = llm.base_url.removesuffix("/v1")
    return {"model": "gpt-4.1-mini", "provider": "azure", "azure_endpoint": endpoint, "api_version": "2024-10-21"}


def test_a_cli_run_outlives_many_tokens_and_no_call_fails(tmp_path, llm):
    az = fake_az(tmp_path / "az")
    llm.script(default={"content": JUDGED}, entra={"audience": AUDIENCE}, latency_ms=500)
    items = 40  # 2 at a time, half a second each: at least 10 s, three token lifetimes and more
    (tmp_path / "data.jsonl").write_text(
        "".join(json.dumps({"query": f"Question {i}?", "response": f"Answer {i}."}) + "\n" for i in range(items))
    )
    judge = ", ".join(f"{k}: '{v}'" for k, v in azure_judge(llm).items())
    (tmp_path / "eval.yaml").write_text(
        "name: entra\ndataset: {local_uri: data.jsonl}\n"
        f"models:\n  judge: {{{judge}}}\n"  # no key: Entra ID
        "evaluators:\n  - name: coherence\n    evaluator_name: builtin.coherence\n"
        "    initialization_parameters: {model: judge}\n"
    )
    environment = az.environment(lifetime=LIFETIME)
    done = assay("run", "eval.yaml", "--concurrency", "2", home=tmp_path / "home", cwd=tmp_path, env_extra=environment)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    (run,) = stored_runs(tmp_path / "home")
    counts = run.summary.result_counts
    assert counts.total == items and counts.passed == items and counts.errored == 0
    assert len(az.minted()) >= 3, "tokens were refreshed as they expired"
    assert not any(token in said for token in az.minted())  # no secret printed


@pytest.fixture
def entra_served(store, llm, tmp_path, monkeypatch):
    """A server (and its workers) whose judge authenticates with Entra ID through the fake ``az``."""
    az = fake_az(tmp_path / "az")
    for name, value in az.environment(lifetime=LIFETIME).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ASSAY_RATE_RUNS_PER_MINUTE", "0")
    # Two calls at a time, so that a run of a few items lasts several seconds on the slow server.
    judge = ModelConfig(name="judge", max_concurrency=2, **azure_judge(llm))
    models = ModelRegistry([judge], cache=store, cache_mode="off")
    catalog = lambda project: load_catalog(store, project)  # noqa: E731
    app = create_app(store, catalog=catalog, models=lambda: models)
    with uvicorn_in_thread(app) as url:
        background = for_workers(store, catalog, lambda: models)
        stop, workers = start_workers(store, catalog, lambda: models, 2, background=background)
        served = Served(url, store, app.state.assay)
        yield served, az
        for client in served.clients:
            client.close()
        stop.set()
        for worker in workers:
            worker.join(timeout=10)


EVAL = {
    "name": "entra",
    "data_source_config": {
        "type": "custom",
        "item_schema": {"type": "object", "properties": {"query": {"type": "string"}, "response": {"type": "string"}}},
    },
    "testing_criteria": [
        {
            "type": "azure_ai_evaluator",
            "name": "coherence",
            "evaluator_name": "builtin.coherence",
            "initialization_parameters": {"deployment_name": "judge"},
            "data_mapping": {"query": "{{item.query}}", "response": "{{item.response}}"},
        }
    ],
}


def source(items: int) -> dict:
    content = [{"item": {"query": f"Question {i}?", "response": f"Answer {i}."}} for i in range(items)]
    return {"type": "jsonl", "source": {"type": "file_content", "content": content}}


def test_a_run_over_the_api_outlives_many_tokens(entra_served, llm):
    served, az = entra_served
    llm.script(default={"content": JUDGED}, entra={"audience": AUDIENCE}, latency_ms=1000)
    client = served.client()
    made = client.evals.create(**EVAL)  # 12 items, 2 calls of a second at a time: 6 s, two token lifetimes
    run = client.evals.runs.create(eval_id=made.id, data_source=source(12))
    finished = wait_for(client, made.id, run.id, seconds=240)
    assert finished.status == "completed", finished
    assert finished.result_counts.passed == 12 and finished.result_counts.errored == 0
    assert len(az.minted()) >= 2 and llm.stats()["tokens_seen"] >= 2
    assert llm.stats()["completions"] == 12


def test_a_schedule_fires_runs_after_the_first_token_expired(entra_served, llm):
    """Two firings a token lifetime apart on the wall clock: the second's calls carry a new token."""
    served, az = entra_served
    llm.script(default={"content": JUDGED}, entra={"audience": AUDIENCE}, latency_ms=1000)
    client = served.client()
    made = client.evals.create(**EVAL)  # each run lasts at least 3 s: a token lifetime
    task = {"type": "Evaluation", "evalId": made.id, "evalRun": {"data_source": source(6)}}
    body = {"trigger": {"type": "Cron", "expression": "0 * * * *"}, "task": task, "enabled": True}
    first = 1_800_000_000.0  # an hour boundary: the injected clock decides when it is due
    served.store.put_schedule("default", "hourly", body, first)
    runs = []
    for hour in range(2):
        (fired,) = schedules.fire_due(served.app_state, clock=first + hour * 3600 + 1)
        assert fired["eval_run_id"], fired
        runs.append(wait_for(client, made.id, fired["eval_run_id"], seconds=240))
    assert [run.status for run in runs] == ["completed", "completed"]
    assert all(run.result_counts.passed == 6 and run.result_counts.errored == 0 for run in runs)
    assert len(set(az.minted())) >= 2 and llm.stats()["auth_refused"] <= 1
