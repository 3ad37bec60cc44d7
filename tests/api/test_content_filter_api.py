"""Items a content filter stopped, as the API and the web UI show them (``tests/llm/test_content_filter.py``)."""

from __future__ import annotations

import urllib.request

from tests.api.conftest import wait_for
from tests.llm.test_content_filter import QUERIES, RULES


def coherence_judge(response: str) -> dict:
    """The server's judge rating coherence, reading ``response`` from where the test keeps it."""
    return {
        "type": "azure_ai_evaluator",
        "name": "coherence",
        "evaluator_name": "builtin.coherence",
        "initialization_parameters": {"deployment_name": "judge"},
        "data_mapping": {"query": "{{item.query}}", "response": response},
    }


def test_filtered_items_over_the_api_and_in_the_web_ui(served, llm):
    llm.reset()
    llm.script(rules=RULES)
    client = served.client()
    criteria = [coherence_judge("{{sample.output_text}}")]
    schema = {"type": "object", "properties": {"query": {"type": "string"}}}
    made = client.evals.create(
        name="filtered",
        data_source_config={"type": "custom", "item_schema": schema, "include_sample_schema": True},
        testing_criteria=criteria,
    )
    source = {"type": "file_content", "content": [{"item": {"query": q}} for q in QUERIES]}
    template = {"type": "template", "template": [{"role": "user", "content": "{{item.query}}"}]}
    data_source = {"type": "completions", "source": source, "input_messages": template, "model": "judge"}
    run = wait_for(client, made.id, client.evals.runs.create(eval_id=made.id, data_source=data_source).id)
    assert run.status == "completed", run.error
    assert (
        run.result_counts.model_extra["filtered"] == 3
        and run.result_counts.passed == 1
        and run.result_counts.errored == 0
    )
    (criterion,) = run.per_testing_criteria_results
    assert criterion.model_extra["filtered"] == 3 and criterion.failed == 0
    filtered = client.evals.runs.output_items.list(run_id=run.id, eval_id=made.id, status="filtered")  # type: ignore[arg-type]
    assert sorted(i.datasource_item_id for i in filtered) == [0, 1, 2]
    assert {i.status for i in filtered} == {"filtered"}
    first = next(i for i in filtered if i.datasource_item_id == 0)
    assert (
        first.results[0].model_extra["status"] == "filtered"
        and first.results[0].model_extra["properties"]["content_filter"]["stage"] == "prompt"
    )
    with urllib.request.urlopen(f"{served.url}/ui/runs/{run.id}", timeout=30) as page:
        html = page.read().decode()
    assert "3 filtered" in html
    with urllib.request.urlopen(f"{served.url}/ui/runs/{run.id}?status=filtered", timeout=30) as page:
        shown = page.read().decode()
    assert shown.count('class="filtered">filtered<') == 2 * 3  # each item's status, and its criterion's
