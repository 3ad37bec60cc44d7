"""The circuit breaker: a refused connection or key, five times in a row, makes every call to that
model fail at once (no more retries); a busy endpoint (5xx, 429) keeps its retries."""

from __future__ import annotations

import asyncio

import pytest

from assay.errors import ModelUnreachable
from assay.llm import Model, ModelConfig, ModelError, ModelRegistry
from assay.llm.breaker import CONSECUTIVE_FAILURES, unreachable
from assay.llm.model import EndpointUnavailable, watch_outages
from tests.support.fixtures import free_port


def dead_model(**settings) -> Model:
    base_url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    return Model(ModelConfig(name="judge", model="m", base_url=base_url, api_key="t", max_retries=8, **settings))


async def ask_many(model: Model, count: int) -> tuple[list[BaseException | object], list[Model]]:
    async def one(i: int):
        seen = watch_outages()
        try:
            return await model.generate([{"role": "user", "content": f"q{i}"}]), seen
        except ModelError as exc:
            return exc, seen

    try:
        answers = await asyncio.gather(*(one(i) for i in range(count)))
    finally:
        await model.aclose()
    return [a for a, _ in answers], [m for _, seen in answers for m in seen]


def test_refused_connections_trip_the_breaker_and_every_call_then_fails_at_once():
    model = dead_model()
    results, outages = asyncio.run(ask_many(model, 12))
    assert all(isinstance(r, EndpointUnavailable) for r in results), results
    assert "model 'judge' at http://127.0.0.1:" in str(results[0]) and "unreachable" in str(results[0])
    assert model.breaker.tripped is not None
    assert outages == [model] * 12  # each call's task saw the outage: the engine keeps those items back
    # Not eight retries with backoff for each of the twelve: the breaker's failures and no more.
    assert model.breaker.failures <= CONSECUTIVE_FAILURES + 12


def test_a_busy_endpoint_keeps_its_retries_and_trips_nothing(llm):
    llm.reset()
    llm.script(default={"status": 500})
    model = Model(ModelConfig(name="judge", model="m", base_url=llm.base_url, api_key="t", max_retries=1))
    results, outages = asyncio.run(ask_many(model, CONSECUTIVE_FAILURES + 2))
    assert all(isinstance(r, ModelError) and not isinstance(r, EndpointUnavailable) for r in results)
    assert model.breaker.tripped is None and outages == []
    assert llm.stats()["requests"] == 2 * (CONSECUTIVE_FAILURES + 2)  # each call retried once


def test_the_pre_flight_names_a_dead_endpoint_and_skips_replayed_models(llm):
    registry = ModelRegistry([dead_model().config]).for_run()
    registry.get("judge")
    with pytest.raises(ModelUnreachable, match="model 'judge' at http://127.0.0.1:.*cannot connect"):
        asyncio.run(registry.check_reachable())
    replaying = ModelRegistry([dead_model().config], cache_mode="replay").for_run()
    replaying.get("judge")
    asyncio.run(replaying.check_reachable())  # answers come from the cache: no endpoint needed
    live = ModelConfig(name="up", model="m", base_url=llm.base_url, api_key="t")
    assert asyncio.run(unreachable(live)) is None


def test_a_run_counts_only_the_models_it_uses():
    shared = ModelRegistry([dead_model().config, ModelConfig(name="other", model="m", api_key="t")])
    shared.get("judge")  # another run used it
    mine = shared.for_run()
    mine.get("other")
    assert [m.name for m in mine.used()] == ["other"] and mine.get("judge") is shared.get("judge")


def test_the_progress_bar_shows_calls_waiting_to_be_retried():
    from assay.cli.run import progress_bar

    registry = ModelRegistry([ModelConfig(name="judge", model="m", base_url="http://127.0.0.1:9/v1", api_key="t")])
    run_models = registry.for_run()
    judge = run_models.get("judge")
    progress = progress_bar(run_models)
    added = progress.add_task("evaluating", total=20)
    task = next(t for t in progress.tasks if t.id == added)
    assert progress.columns[-1].render(task).plain == ""  # nothing waiting: nothing shown
    judge.retrying, judge.last_failure = 3, "model 'judge': 503 Service Unavailable"
    assert progress.columns[-1].render(task).plain.startswith("retrying 3: model 'judge': 503")
