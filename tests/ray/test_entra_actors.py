"""A two-actor Ray run whose judge authenticates with Entra ID tokens living 3 seconds: each actor
obtains its own tokens (none is shipped from the driver), refreshes them, and no call fails."""

from __future__ import annotations

import os

import pytest

from assay.llm import ModelConfig, ModelRegistry, entra
from assay.ray.executor import RayExecutor
from tests.ray.test_executor import ROWS, run
from tests.support.entra import fake_az

AUDIENCE = "https://cognitiveservices.azure.com"


@pytest.mark.usefixtures("ray_cluster")
def test_each_actor_obtains_and_refreshes_its_own_token(tmp_path, llm, monkeypatch):
    from assay.store import Store

    entra.forget()
    llm.reset()
    az = fake_az(tmp_path / "az")
    environment = az.environment(lifetime=3)
    for name, value in environment.items():  # the driver's pre-flight obtains a token too
        monkeypatch.setenv(name, value)
    llm.script(default={"content": '{"reason": "fine", "score": 4}'}, entra={"audience": AUDIENCE}, latency_ms=500)
    endpoint = llm.base_url.removesuffix("/v1")
    judge = ModelConfig(
        name="judge",
        model="gpt-4.1-mini",
        provider="azure",
        azure_endpoint=endpoint,
        api_version="2024-10-21",
        max_concurrency=2,  # 2 calls of half a second at a time per actor: 40 items last 5 s or more
    )
    store = Store(f"sqlite:///{tmp_path / 'assay.db'}")
    try:
        criteria = [
            {
                "type": "azure_ai_evaluator",
                "name": "relevance",
                "evaluator_name": "builtin.relevance",
                "initialization_parameters": {"model": "judge"},
            }
        ]
        models = ModelRegistry([judge], cache_mode="off")
        outcome, items = run(store, models, RayExecutor(actors=2, env=environment), rows=ROWS[:40], criteria=criteria)
    finally:
        store.close()
        entra.forget()
    assert len(items) == 40 and all(item.status == "pass" for item in items)
    assert outcome.run.summary.result_counts.errored == 0
    by_process: dict[int, int] = {}
    for pid, _ in az.minted_by():
        by_process[pid] = by_process.get(pid, 0) + 1
    actors = {pid: count for pid, count in by_process.items() if pid != os.getpid()}
    assert len(actors) == 2, by_process  # each actor asked for its own tokens
    assert sum(actors.values()) >= 3, by_process  # and renewed them as they expired
    assert llm.stats()["tokens_seen"] >= 3 and llm.stats()["auth_refused"] <= 2
