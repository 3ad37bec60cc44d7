"""Items a judge left undetermined, as the API and the web UI show them (``tests/evaluators/test_undetermined.py``)."""

from __future__ import annotations

import urllib.request

from tests.api.conftest import wait_for
from tests.api.test_content_filter_api import coherence_judge
from tests.evaluators.test_undetermined import REFUSAL


def test_undetermined_items_over_the_api_and_in_the_web_ui(served, llm):
    llm.reset()
    rules = [{"match": f"Answer {i}.", "reply": {"content": REFUSAL}} for i in range(2)]
    llm.script(rules=rules, default={"content": '{"reason": "reads well", "score": 5}'})
    client = served.client()
    criteria = [coherence_judge("{{item.response}}")]
    schema = {"type": "object", "properties": {"query": {"type": "string"}, "response": {"type": "string"}}}
    made = client.evals.create(
        name="undetermined", data_source_config={"type": "custom", "item_schema": schema}, testing_criteria=criteria
    )
    content = [{"item": {"query": f"Question {i}?", "response": f"Answer {i}."}} for i in range(6)]
    source = {"type": "jsonl", "source": {"type": "file_content", "content": content}}
    run = wait_for(client, made.id, client.evals.runs.create(eval_id=made.id, data_source=source).id)
    assert run.status == "completed", run.error
    counts = run.result_counts
    assert (counts.passed, counts.errored, counts.model_extra["undetermined"]) == (4, 0, 2)
    (criterion,) = run.per_testing_criteria_results
    assert criterion.model_extra["undetermined"] == 2 and criterion.model_extra["pass_rate"] == 1.0
    found = client.evals.runs.output_items.list(run_id=run.id, eval_id=made.id, status="undetermined")  # type: ignore[arg-type]
    assert sorted(i.datasource_item_id for i in found) == [0, 1] and {i.status for i in found} == {"undetermined"}
    assert found.data[0].results[0].model_extra["status"] == "undetermined"
    with urllib.request.urlopen(f"{served.url}/ui/runs/{run.id}", timeout=30) as page:
        html = page.read().decode()
    assert "2 undetermined" in html and "?status=undetermined" in html
