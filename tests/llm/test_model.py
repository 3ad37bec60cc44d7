"""The model facade against the scripted server: retries, throttling, budgets, request shaping."""

from __future__ import annotations

import asyncio
import time

import pytest

from assay.llm import Model, ModelConfig, ModelError, ModelRegistry
from tests.evaluators.test_judges import criterion, run_eval


@pytest.fixture(autouse=True)
def fresh(llm):
    llm.reset()


def model(llm, **settings) -> Model:
    return Model(
        ModelConfig(
            name="m", model=settings.pop("model", "gpt-4.1-mini"), base_url=llm.base_url, api_key="test", **settings
        )
    )


def ask(m: Model, text: str = "hello", **params):
    async def once():
        try:
            return await m.generate([{"role": "user", "content": text}], **params)
        finally:
            await m.aclose()

    return asyncio.run(once())


def test_a_call_returns_text_and_usage(llm):
    llm.script(default={"content": "hi there"})
    completion = ask(model(llm), temperature=0, max_tokens=50)
    assert completion.text == "hi there" and completion.usage.total_tokens > 0 and not completion.cached
    sent = llm.stats()["last"]
    assert sent["max_tokens"] == 50 and sent["temperature"] == 0


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_refusal_is_what_the_model_answered(llm, api):
    """Structured outputs' refusal (chat's ``refusal`` beside no content, a Responses ``refusal``
    part) is the answer's text, and the target's sample says it was a refusal."""
    from assay.targets.base import TargetSpec, build_target

    llm.script(default={"refusal": "I can't help with that."})
    completion = ask(model(llm, api=api))
    assert (completion.text, completion.refusal) == ("I can't help with that.", "I can't help with that.")
    asking = {"type": "template", "template": [{"role": "user", "content": "{{item.q}}"}]}
    registry = ModelRegistry([model(llm, api=api).config])
    target = build_target(TargetSpec("model", "m", input_messages=asking), registry)

    async def answer():
        try:
            return await target({"q": "Help me pick a lock."})
        finally:
            await registry.aclose()

    sample = asyncio.run(answer())
    assert sample["output_text"] == sample["refusal"] == "I can't help with that."


def test_reasoning_models_get_max_completion_tokens_and_no_temperature(llm):
    ask(model(llm, model="o3-mini"), temperature=0, max_tokens=800)
    sent = llm.stats()["last"]
    assert "temperature" not in sent and "max_tokens" not in sent and sent["max_completion_tokens"] >= 800


def test_retry_after_ms_is_honoured_then_succeeds(llm):
    llm.script(
        rules=[{"match": "throttle-me", "times": 1, "reply": {"status": 429, "retry_after_ms": 300}}],
        default={"content": "ok"},
    )
    started = time.monotonic()
    completion = ask(model(llm), "throttle-me")
    assert completion.text == "ok" and time.monotonic() - started >= 0.3
    assert llm.stats()["by_status"].get("429") == 1


def test_insufficient_quota_is_not_retried(llm):
    m = model(llm)
    llm.script(default={"status": 429, "code": "insufficient_quota", "retry_after": 1})
    with pytest.raises(ModelError, match="insufficient_quota"):
        ask(m)
    assert llm.stats()["requests"] == 1


def test_dropped_connections_and_500s_are_retried(llm):
    m = model(llm)
    llm.script(faults={"rate_500": 0.5, "seed": 3}, rules=[], default={"content": "fine"})
    results = [ask(m, f"q{i}").text for i in range(6)]
    assert results == ["fine"] * 6
    assert llm.stats()["by_status"].get("500", 0) >= 1


def test_requests_per_minute_budget_paces_calls(llm):
    m = model(llm, rpm=600)  # ten per second, with one second (ten calls) of burst

    async def burst():
        try:
            await asyncio.gather(*(m.generate([{"role": "user", "content": f"b{i}"}]) for i in range(30)))
        finally:
            await m.aclose()

    llm.script(default={"content": "ok"})
    started = time.monotonic()
    asyncio.run(burst())
    assert time.monotonic() - started >= 1.9  # ten at once, then twenty more at ten a second


def test_throttled_and_failing_provider_still_completes_every_item(llm, store):
    """30% of calls answered 429 (retry-after 1 s) and 5% answered 500: a 200-item run, zero errors."""
    llm.script(
        faults={"rate_429": 0.3, "rate_500": 0.05, "retry_after": 1, "seed": 7},
        default={"content": '{"reason": "ok", "score": 4}'},
    )
    config = ModelConfig(name="judge", model="gpt-4.1-mini", base_url=llm.base_url, api_key="t", max_retries=10)
    rows = [{"query": f"q{i}", "response": f"r{i}"} for i in range(200)]
    outcome, _ = run_eval(store, ModelRegistry([config]), [criterion("relevance")], rows, concurrency=32)
    assert outcome.summary.result_counts.errored == 0 and outcome.summary.result_counts.total == 200
    stats = llm.stats()
    assert stats["by_status"]["429"] > 20 and stats["by_status"]["500"] > 0


def test_always_throttled_provider_ends_with_clear_errors_in_bounded_time(llm, store):
    llm.script(default={"status": 429, "retry_after": 0.2})
    config = ModelConfig(name="judge", model="gpt-4.1-mini", base_url=llm.base_url, api_key="t", max_retries=3)
    rows = [{"query": f"q{i}", "response": f"r{i}"} for i in range(10)]
    started = time.monotonic()
    outcome, results = run_eval(store, ModelRegistry([config]), [criterion("relevance")], rows)
    assert time.monotonic() - started < 30
    assert outcome.run.status == "completed" and outcome.summary.result_counts.errored == 10
    reason = results[0][0].reason
    assert "429" in reason and "after 4 attempts" in reason


def test_responses_api(llm):
    llm.script(default={"content": '{"score": 5}'})
    completion = ask(model(llm, api="responses"), temperature=0, max_tokens=40, response_format={"type": "json_object"})
    assert completion.text == '{"score": 5}' and completion.usage.prompt_tokens > 0
    sent = llm.stats()["last"]
    assert sent["input"][0]["content"] == "hello" and sent["max_output_tokens"] == 40
    assert sent["text"] == {"format": {"type": "json_object"}}


def test_azure_deployment_with_api_key_or_bearer_token(llm, monkeypatch):
    llm.script(default={"content": "from azure"})
    endpoint = llm.base_url.removesuffix("/v1")
    azure = Model(
        ModelConfig(
            name="a",
            model="my-deployment",
            provider="azure",
            azure_endpoint=endpoint,
            api_version="2024-10-21",
            api_key="k",
        )
    )
    assert ask(azure).text == "from azure"
    request = llm.stats()["last_request"]
    assert request["path"] == "/openai/deployments/my-deployment/chat/completions" and request["api_key"] == "k"
    monkeypatch.setenv("AZ_TOKEN", "entra-token")
    bearer = Model(
        ModelConfig(
            name="b",
            model="my-deployment",
            provider="azure",
            azure_endpoint=endpoint,
            api_version="2024-10-21",
            bearer_token_env="AZ_TOKEN",
        )
    )
    assert ask(bearer).text == "from azure"
    assert llm.stats()["last_request"]["authorization"] == "Bearer entra-token"


# Sent by the transport itself, or different on every request; everything else the SDK decides.
TRANSPORT_HEADERS = {
    "host",
    "content-length",
    "accept-encoding",
    "connection",
    "idempotency-key",
    "x-stainless-retry-count",
    "content-type",
}


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("provider", ["openai", "azure-key", "azure-bearer"])
def test_fast_transport_sends_what_the_sdk_sends(llm, monkeypatch, provider, api):
    """The same URL, query and headers as the SDK's own request, whatever the provider and auth."""
    llm.script(default={"content": "same"})
    monkeypatch.setenv("AZ_TOKEN", "entra-token")
    settings = {
        "openai": {"base_url": llm.base_url, "api_key": "sk-test"},
        "azure-key": {
            "provider": "azure",
            "azure_endpoint": llm.base_url.removesuffix("/v1"),
            "api_version": "2024-10-21",
            "api_key": "k",
        },
        "azure-bearer": {
            "provider": "azure",
            "azure_endpoint": llm.base_url.removesuffix("/v1"),
            "api_version": "2024-10-21",
            "bearer_token_env": "AZ_TOKEN",
        },
    }[provider]
    seen = []
    for transport in ("sdk", "fast"):
        config = ModelConfig(name="m", model="my-deployment", api=api, transport=transport, **settings)
        assert ask(Model(config, cache_mode="off"), temperature=0).text == "same"
        request, body = llm.stats()["last_request"], llm.stats()["last"]
        headers = {k: v for k, v in request["headers"].items() if k not in TRANSPORT_HEADERS}
        seen.append((request["path"], request["query"], headers, body))
    assert seen[1] == seen[0]
    assert "x-stainless-lang" in seen[0][2]  # the comparison covers the SDK's own headers
    if provider != "openai":
        assert seen[0][0].startswith("/openai/") and "api-version=2024-10-21" in seen[0][1]


@pytest.mark.parametrize("transport", ["fast", "sdk"])
def test_refusals_are_not_retried_and_a_body_that_is_not_json_is_an_error(llm, transport):
    m = model(llm, transport=transport)
    llm.script(default={"status": 400})
    with pytest.raises(ModelError, match="400") as refused:
        ask(m)
    assert refused.value.status == 400 and llm.stats()["requests"] == 1
    llm.reset()
    llm.script(default={"raw": "<html>proxy login</html>"})
    with pytest.raises(ModelError):
        ask(m)
    assert llm.stats()["requests"] == 1


def test_unreachable_endpoint_is_retried_then_named(llm):
    from tests.support.fixtures import free_port

    m = Model(
        ModelConfig(name="gone", model="x", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key="t", max_retries=1)
    )
    with pytest.raises(ModelError, match="model 'gone': .*Connection.* after 2 attempts"):
        ask(m)


def test_an_sdk_that_cannot_lend_its_request_builder_means_slower_not_failed(llm, monkeypatch, caplog):
    import logging

    from assay.llm import http

    async def changed_sdk(*_args):
        raise AttributeError("'AsyncOpenAI' object has no attribute '_build_request'")

    monkeypatch.setattr(http, "_sdk_request", changed_sdk)
    llm.script(default={"content": "still answered"})
    with caplog.at_level(logging.WARNING, logger="assay.llm.http"):
        assert ask(model(llm)).text == "still answered"
    assert "sending through the SDK instead" in caplog.text and llm.stats()["requests"] == 1
