"""Limits the provider states: read from its ``x-ratelimit-*`` headers, paced to, and the token
estimate that pacing needs, calibrated on the provider's own counts."""

from __future__ import annotations

import asyncio

import pytest

from assay.llm import Model, ModelConfig
from assay.llm.limits import PACE, Budget, ProviderLimits, duration
from assay.ray.limiter import Limiter


@pytest.fixture(autouse=True)
def fresh(llm):
    llm.reset()


def model(llm, **settings) -> Model:
    config = ModelConfig(name="m", model="gpt-4.1-mini", base_url=llm.base_url, api_key="test", **settings)
    return Model(config)


def calls(m: Model, count: int, **params) -> list[float]:
    """Send ``count`` calls at once; the rates per second of the budgets they were paced by."""

    async def run() -> list[float]:
        try:
            prompts = [[{"role": "user", "content": f"question {i} " + "word " * 40}] for i in range(count)]
            await asyncio.gather(*(m.generate(p, **params) for p in prompts))
            state = m._state()
            return [budget.rate if isinstance(budget, Budget) else 0.0 for budget in (state.requests, state.tokens)]
        finally:
            await m.aclose()

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5), ("", None), ("soon", None)],
)
def test_reset_durations_are_read_as_openai_writes_them(text, seconds):
    assert duration(text) == seconds


def test_stated_limits_are_read_and_azure_s_minus_one_is_no_limit():
    found = ProviderLimits.read(
        {
            "x-ratelimit-limit-requests": "1200",
            "x-ratelimit-limit-tokens": "300000",
            "x-ratelimit-remaining-tokens": "299000",
            "x-ratelimit-reset-tokens": "200ms",
        }
    )
    assert found is not None and found.per_minute == (1200, 300000)
    assert found.remaining_tokens == 299000 and found.reset_tokens == pytest.approx(0.2)
    assert found.describe() == "300k TPM · 1.2k RPM"
    azure_responses = {"x-ratelimit-limit-tokens": "-1", "x-ratelimit-remaining-tokens": "-1"}
    assert ProviderLimits.read(azure_responses) is None
    assert ProviderLimits.read({"content-type": "application/json"}) is None


def test_a_provider_s_stated_limits_become_the_budgets(llm):
    llm.script(default={"content": "ok"}, tpm=600_000, rpm=6_000, limit_headers=True)
    m = model(llm)
    requests, tokens = calls(m, 3, max_tokens=20)
    assert m.provider_limits is not None and m.provider_limits.per_minute == (6_000, 600_000)
    assert requests == pytest.approx(6_000 * PACE / 60) and tokens == pytest.approx(600_000 * PACE / 60)


def test_the_user_s_budget_is_a_ceiling_not_a_requirement(llm):
    llm.script(default={"content": "ok"}, tpm=600_000, limit_headers=True)
    below = model(llm, tpm=120_000)
    assert calls(below, 2, max_tokens=20)[1] == pytest.approx(120_000 / 60)  # the user's lower figure stays
    above = model(llm, tpm=10_000_000)
    assert calls(above, 2, max_tokens=20)[1] == pytest.approx(600_000 * PACE / 60)  # the provider's lower one wins


def test_without_stated_limits_no_budget_is_made(llm):
    llm.script(default={"content": "ok"})
    m = model(llm)
    assert calls(m, 6) == [0.0, 0.0]
    assert m.provider_limits is None and m.answered


def test_the_token_estimate_is_calibrated_on_the_provider_s_counts(llm):
    # The server counts three characters to a token, not assay's first guess of four.
    llm.script(default={"content": "x" * 60}, tpm=6_000_000, limit_headers=True, chars_per_token=3)
    m = model(llm)
    calls(m, 8)
    assert m.tokens_per_char == pytest.approx(1 / 3, rel=0.05)
    assert m.completion_tokens == 20  # the mean completion of calls that set no max_tokens


def test_calls_waiting_when_the_limits_arrive_are_paced_by_them(llm):
    """The first answer states a budget of about ten calls a second: the calls that were waiting for
    a slot then wait their turn in it, rather than going out in one wave the provider refuses."""
    llm.script(default={"content": "ok"}, latency_ms=50, tpm=60 * 2_000, limit_headers=True, chars_per_token=4)
    m = model(llm, max_retries=10)
    calls(m, 24, max_tokens=100)
    stats = llm.stats()
    assert stats["completions"] == 24
    assert stats["by_status"].get("429", 0) <= 2, stats["by_status"]


def test_the_cluster_s_limiter_keeps_a_budget_per_rate_and_caps_to_what_is_left():
    limiter = Limiter()
    assert limiter.reserve("tokens|m", 600.0, 5) == 0  # ten a second, one second's worth held
    limiter.cap("tokens|m", 600.0, 0)
    assert limiter.reserve("tokens|m", 600.0, 5) > 0  # the provider said nothing was left
    assert limiter.reserve("tokens|m", 6000.0, 5) == 0  # a budget at another rate is one of its own
