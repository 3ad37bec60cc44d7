"""A run created over the API in batch mode (``"batch": true``, an assay extension of the run request)."""

from __future__ import annotations

import openai
import pytest

from tests.api.conftest import wait_for
from tests.api.test_content_filter_api import coherence_judge
from tests.llm.test_batch_runs import ITEMS, judge_scores
from tests.support.fixtures import poll


def batch_run(client, name: str):
    """An eval judging coherence and a run of it in batch mode: the eval, the run's data source, the run."""
    schema = {"type": "object", "properties": {"query": {"type": "string"}, "response": {"type": "string"}}}
    made = client.evals.create(
        name=name,
        data_source_config={"type": "custom", "item_schema": schema},
        testing_criteria=[coherence_judge("{{item.response}}")],
    )
    content = [{"item": {"query": f"On topic {i}?", "response": f"An answer on topic {i}."}} for i in range(ITEMS)]
    source = {"type": "jsonl", "source": {"type": "file_content", "content": content}}
    return made, source, client.evals.runs.create(eval_id=made.id, data_source=source, extra_body={"batch": True})


def test_a_run_created_over_the_api_in_batch_mode_is_batched(served, llm):
    llm.reset()
    judge_scores(llm)
    client = served.client()
    made, source, created = batch_run(client, "batched over the api")
    run = wait_for(client, made.id, created.id)
    assert run.status == "completed", run.error
    assert run.result_counts.total == ITEMS and run.result_counts.errored == 0
    stats = llm.stats()
    assert stats["batches_created"] >= 1 and stats["batched_requests"] == ITEMS
    with pytest.raises(openai.BadRequestError, match="batch must be true or false"):
        client.evals.runs.create(eval_id=made.id, data_source=source, extra_body={"batch": "yes"})


def test_canceling_a_batch_run_cancels_its_batch(served, llm):
    llm.reset()
    judge_scores(llm, batch_hold=True)  # the provider keeps the batch in progress
    client = served.client()
    made, source, created = batch_run(client, "canceled batch")
    out = poll(lambda: llm.stats()["batch_statuses"], lambda found: "in_progress" in found.values(), seconds=60)
    assert list(out.values()) == ["in_progress"], out
    client.evals.runs.cancel(run_id=created.id, eval_id=made.id)
    statuses = poll(lambda: llm.stats()["batch_statuses"], lambda found: "cancelled" in found.values(), seconds=60)
    assert list(statuses.values()) == ["cancelled"]
    assert wait_for(client, made.id, created.id).status == "canceled"
