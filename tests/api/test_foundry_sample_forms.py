"""The forms Microsoft's azure-ai-projects 2.10 samples send, each as a sample sends it, through the
openai SDK on a Foundry project route (``/api/projects/{p}/openai/v1``): rows that break the eval's
item_schema in ways Foundry scores anyway, optional inputs a row lacks, the catalog's input names
and placeholders, and custom evaluators written as the catalog samples write them."""

from __future__ import annotations

import httpx2 as httpx
import openai
import pytest

from tests.api.conftest import wait_for
from tests.support.sandbox import needs_bwrap

FOUNDRY = "/api/projects/default/openai/v1"
F1 = {
    "type": "azure_ai_evaluator",
    "name": "f1",
    "evaluator_name": "builtin.f1_score",
    "data_mapping": {"response": "{{item.response}}", "ground_truth": "{{item.ground_truth}}"},
}
SCHEMA = {
    "type": "object",
    "properties": {"response": {"type": "string"}, "ground_truth": {"type": "string"}, "query": {"type": "string"}},
    "required": ["response", "ground_truth", "context"],
}


def run(client, criteria, rows, schema=None, **extra):
    evaluation = client.evals.create(
        name="sample forms",
        data_source_config={"type": "custom", "item_schema": schema or {"type": "object"}},
        testing_criteria=criteria,
    )
    source = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": row} for row in rows]}}
    created = client.evals.runs.create(eval_id=evaluation.id, data_source=source, **extra)
    finished = wait_for(client, evaluation.id, created.id)
    items = list(client.evals.runs.output_items.list(run_id=created.id, eval_id=evaluation.id))
    return finished, sorted(items, key=lambda item: item.datasource_item_id)


def test_a_foundry_route_scores_rows_that_break_the_schema_and_openais_refuses_them(served):
    rows = [{"response": "paris", "ground_truth": "paris", "query": None}]  # no context, a null query
    finished, (item,) = run(served.client(prefix=FOUNDRY), [F1], rows, SCHEMA)
    assert finished.status == "completed" and item.results[0].score == 1.0
    stored = served.store.get_run(finished.id)
    assert any("'context' is required" in warning for warning in stored.options.warnings)
    with pytest.raises(openai.BadRequestError, match="'context' is required by the item_schema"):
        run(served.client(), [F1], rows, SCHEMA)
    # A null for a field the schema does not require reads as absent on every route.
    lenient = {**SCHEMA, "required": ["response", "ground_truth"]}
    finished, _ = run(served.client(), [F1], rows, lenient)
    assert finished.status == "completed" and finished.result_counts.passed == 1


def test_an_optional_input_a_row_lacks_is_left_out_and_similarity_needs_no_query(served, llm):
    llm.script(default={"content": '{"reason": "same meaning", "score": 5}'})
    similarity = {
        "type": "azure_ai_evaluator",
        "name": "similarity",
        "evaluator_name": "builtin.similarity",
        "initialization_parameters": {"model": "judge"},
        "data_mapping": {"response": "{{item.response}}", "ground_truth": "{{item.ground_truth}}"},
    }
    groundedness = {
        "type": "azure_ai_evaluator",
        "name": "groundedness",
        "evaluator_name": "builtin.groundedness",
        "initialization_parameters": {"model": "judge"},
        "data_mapping": {"response": "{{item.response}}", "context": "{{item.context}}", "query": "{{item.query}}"},
    }
    rows = [
        {"response": "Paris", "ground_truth": "Paris", "context": "Paris is France's capital."},
        {"response": "Rome", "ground_truth": "Rome", "context": "Rome is Italy's capital.", "query": "Italy?"},
    ]
    fields = ("query", "response", "ground_truth", "context")
    schema = {"type": "object", "properties": {name: {"type": "string"} for name in fields}}
    finished, items = run(served.client(prefix=FOUNDRY), [similarity, groundedness], rows, schema)
    assert finished.result_counts.errored == 0 and finished.result_counts.passed == 2
    assert all(result.status == "completed" for item in items for result in item.results)


def test_task_navigation_takes_foundrys_actions_and_expected_actions(served):
    call = {
        "role": "assistant",
        "content": [{"type": "tool_call", "tool_call_id": "c1", "name": "search", "arguments": {}}],
    }
    criterion = {
        "type": "azure_ai_evaluator",
        "name": "navigation",
        "evaluator_name": "builtin.task_navigation_efficiency",
        "initialization_parameters": {"matching_mode": "exact_match"},
        "data_mapping": {"actions": "{{item.actions}}", "expected_actions": "{{item.expected_actions}}"},
    }
    rows = [{"actions": [call], "expected_actions": ["search"]}, {"actions": [call], "expected_actions": ["book"]}]
    finished, items = run(served.client(prefix=FOUNDRY), [criterion], rows)
    assert [item.results[0].passed for item in items] == [True, False]


def test_deflection_rate_judges_a_whole_conversation(served, llm):
    llm.script(default={"content": '{"reason": "it helped", "label": false}'})
    criterion = {
        "type": "azure_ai_evaluator",
        "name": "deflection",
        "evaluator_name": "builtin.deflection_rate",
        "initialization_parameters": {"model": "judge"},
        "data_mapping": {"messages": "{{item.messages}}"},
    }
    messages = [{"role": "user", "content": "Refund order 7"}, {"role": "assistant", "content": "Done: refunded."}]
    finished, (item,) = run(
        served.client(prefix=FOUNDRY),
        [criterion],
        [{"messages": messages}],
        extra_body={"evaluation_level": "conversation"},
    )
    assert finished.status == "completed" and item.results[0].status == "completed"
    assert "Refund order 7" in llm.stats()["last"]["messages"][-1]["content"]


def test_a_prompt_evaluator_may_write_its_placeholders_with_single_braces(served, llm):
    prompt = 'Rate the answer.\nQuery:\n{query}\nResponse:\n{response}\nReturn {"score": int}.'
    body = {"definition": {"type": "prompt", "prompt_text": prompt}}
    reply = httpx.post(f"{served.url}/api/projects/default/evaluators/curly/versions", json=body, timeout=10)
    assert reply.status_code == 201, reply.text
    llm.script(default={"content": '{"reason": "fine", "score": 5}'})
    criterion = {
        "type": "azure_ai_evaluator",
        "name": "curly",
        "evaluator_name": "curly",
        "initialization_parameters": {"model": "judge"},
    }
    finished, (item,) = run(served.client(prefix=FOUNDRY), [criterion], [{"query": "Capital?", "response": "Paris"}])
    assert item.results[0].status == "completed", item.results[0]
    shown = llm.stats()["last"]["messages"][-1]["content"]
    assert "Query:\nCapital?" in shown and "Response:\nParis" in shown


@needs_bwrap
def test_a_code_evaluator_may_be_a_grade_of_sample_and_item_with_a_pass_threshold(served):
    code = 'def grade(sample, item):\n    return 1.0 if item.get("response") == item.get("ground_truth") else 0.2\n'
    reply = httpx.post(
        f"{served.url}/api/projects/default/evaluators/matcher/versions",
        json={"definition": {"type": "code", "code_text": code}},
        timeout=10,
    )
    assert reply.status_code == 201, reply.text
    criterion = {
        "type": "azure_ai_evaluator",
        "name": "matcher",
        "evaluator_name": "matcher",
        "initialization_parameters": {"deployment_name": "judge", "pass_threshold": 0.5},
    }
    rows = [{"response": "a", "ground_truth": "a"}, {"response": "a", "ground_truth": "b"}]
    finished, items = run(served.client(prefix=FOUNDRY), [criterion], rows)
    assert [(item.results[0].score, item.results[0].passed) for item in items] == [(1.0, True), (0.2, False)]
    assert items[0].results[0].threshold == 0.5
