"""Run creation and uploads are limited per API key: 429 with retry-after, other callers unaffected."""

from __future__ import annotations

import io

import openai
import pytest

from assay.api.buckets import Buckets
from tests.api.test_bad_input import EVAL


def test_runs_past_the_budget_get_429_with_retry_after_and_other_projects_go_on(served, monkeypatch):
    monkeypatch.setenv("ASSAY_RATE_RUNS_PER_MINUTE", "2")
    alpha = served.client(key="key-a", prefix="/api/projects/alpha/openai/v1")
    beta = served.client(key="key-b", prefix="/api/projects/beta/openai/v1")
    source = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": {"a": "x"}}]}}
    created = alpha.evals.create(**EVAL)
    for _ in range(2):
        alpha.evals.runs.create(eval_id=created.id, data_source=source)
    with pytest.raises(openai.RateLimitError) as refused:
        alpha.evals.runs.create(eval_id=created.id, data_source=source)
    assert refused.value.status_code == 429
    assert int(refused.value.response.headers["retry-after"]) >= 1
    assert refused.value.body["code"] == "rate_limit_exceeded"
    assert len(alpha.evals.runs.list(eval_id=created.id).data) == 2  # the refused one created nothing
    other = beta.evals.create(**EVAL)
    beta.evals.runs.create(eval_id=other.id, data_source=source)  # another caller's budget is its own


def test_uploads_are_limited_too(served, monkeypatch):
    monkeypatch.setenv("ASSAY_RATE_UPLOADS_PER_MINUTE", "1")
    client = served.client()
    client.files.create(file=("a.jsonl", io.BytesIO(b'{"a": 1}\n')), purpose="evals")
    with pytest.raises(openai.RateLimitError):
        client.files.create(file=("b.jsonl", io.BytesIO(b'{"a": 1}\n')), purpose="evals")


def test_a_bucket_refills_at_its_rate():
    now = [0.0]
    buckets = Buckets(clock=lambda: now[0])
    assert [buckets.take("k", "runs", 60) for _ in range(60)] == [0.0] * 60
    wait = buckets.take("k", "runs", 60)
    assert wait == pytest.approx(1.0)
    now[0] += 1.0
    assert buckets.take("k", "runs", 60) == 0.0
    assert buckets.take("k", "runs", 0) == 0.0  # 0 turns the limit off
