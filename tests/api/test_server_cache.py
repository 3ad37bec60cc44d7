"""`assay serve` caches model calls like `assay run`: a rerun of the same eval through the API
makes no model call and gives identical results; a run's metadata can turn the cache off."""

from __future__ import annotations

import contextlib

import openai
import pytest

from tests.api.conftest import wait_for
from tests.conftest import BACKENDS, postgres_database
from tests.support.fixtures import start_llm_server
from tests.support.servers import RELEVANCE, start_assay_server

ROWS = [{"item": {"query": f"question {i}", "response": f"answer {i}"}} for i in range(16)]


@pytest.fixture
def provider():
    """A scripted provider of this test's own: no other test's traffic moves its request count."""
    server = start_llm_server()
    server.script(default={"content": '{"reason": "on topic", "score": 4}'})
    yield server
    server.stop()


@pytest.fixture(params=BACKENDS)
def server(request, tmp_path, provider):
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  judge: {{model: m, base_url: '{provider.base_url}', api_key: t}}\n")
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(postgres_database()) if request.param == "postgresql" else None
        process, client = start_assay_server(tmp_path, models, database_url=url)
        stack.callback(process.wait, timeout=20)
        stack.callback(process.terminate)
        stack.callback(client.close)
        yield client


def run_once(client, eval_id, metadata=None):
    source = {"type": "jsonl", "source": {"type": "file_content", "content": ROWS}}
    run = client.evals.runs.create(eval_id, data_source=source, metadata=metadata or {})
    run = wait_for(client, eval_id, run.id, seconds=60)
    assert run.status == "completed", run.error
    items = client.evals.runs.output_items.list(run.id, eval_id=eval_id, limit=100)
    return run, [[(r.name, r.score, r.passed, r.model_extra.get("reason")) for r in i.results] for i in items]


def test_a_rerun_through_the_api_makes_no_model_call(server, provider):
    created = server.evals.create(
        name="cached",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=RELEVANCE,
    )
    first, first_results = run_once(server, created.id)
    calls = provider.stats()["completions"]
    assert calls == len(ROWS)
    (usage,) = first.per_model_usage
    assert (usage.invocation_count, usage.model_extra["cache_hits"]) == (len(ROWS), 0)

    second, second_results = run_once(server, created.id)
    assert provider.stats()["completions"] == calls  # zero model calls
    assert second_results == first_results
    (usage,) = second.per_model_usage
    assert (usage.invocation_count, usage.model_extra["cache_hits"]) == (0, len(ROWS))

    uncached, uncached_results = run_once(server, created.id, metadata={"assay.cache": "off"})
    assert provider.stats()["completions"] == calls + len(ROWS)
    assert uncached.per_model_usage[0].invocation_count == len(ROWS) and uncached_results == first_results


def test_a_bad_cache_mode_in_metadata_is_refused(server):
    created = server.evals.create(
        data_source_config={"type": "custom", "item_schema": {"type": "object"}}, testing_criteria=RELEVANCE
    )
    source = {"type": "jsonl", "source": {"type": "file_content", "content": ROWS}}
    with pytest.raises(openai.BadRequestError, match="metadata.assay.cache: 'sometimes' is not a cache mode"):
        server.evals.runs.create(created.id, data_source=source, metadata={"assay.cache": "sometimes"})
