"""Agent targets by name: the Responses protocol (with tool calls) and the invocations protocol."""

from __future__ import annotations

import json

import openai
import pytest

from assay.messages import HOSTED_TOOLS
from assay.targets.agents import parse_agents
from tests.api.conftest import wait_for

TOOLS = [
    {
        "name": "lookup_order",
        "description": "Find an order",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    }
]
SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}, "tool_definitions": {"type": "array"}}}


HOSTED_SEARCH = [
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "look it up"}]},
    {
        "type": "file_search_call",
        "id": "fs_1",
        "status": "completed",
        "queries": ["refund policy"],
        "results": [{"file_id": "file_1", "filename": "policy.md", "text": "Refunds within 30 days."}],
    },
]


AGENT_RULES = [  # the judge (every judge prompt has "# Property:"), then the agents
    {"match": "# Property:", "reply": {"content": '{"reason": "right tool, right argument", "score": 5}'}},
    {
        "match": "Where is order 7",
        "reply": {
            "content": "Order 7 has shipped.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup_order", "arguments": '{"order_id": "7"}'},
                }
            ],
        },
    },
    {"match": "intake please", "reply": {"content": "Ticket opened."}},
    {"match": "refund policy", "reply": {"content": "Refunds take 30 days.", "hosted": HOSTED_SEARCH}},
]


@pytest.fixture
def agents(models, llm):
    models.agents.extend(
        parse_agents(
            {
                "support": [
                    {"version": "1", "endpoint": "http://127.0.0.1:9/nowhere"},
                    {"version": "2", "endpoint": llm.base_url, "protocol": "responses"},
                ],
                "intake": {"endpoint": llm.base_url, "protocol": "invocations"},
            }
        )
    )
    llm.script(rules=AGENT_RULES)


def judge_tool_calls_of_support(client, *queries, evaluator="tool_call_accuracy", response="{{sample.output_items}}"):
    """An eval of the support agent's answers to ``queries`` by a judge (tool call accuracy unless
    told), the answer as its Responses items (``response=None``: no data_mapping, the defaults give
    the item's fields, the agent's text and its calls): the eval and its run, done."""
    mapping = {"query": "{{item.query}}", "response": response}
    if evaluator.startswith("tool"):
        mapping["tool_definitions"] = "{{item.tool_definitions}}"
    mapped = {} if response is None else {"data_mapping": mapping}
    created = client.evals.create(
        name="agent",
        data_source_config={"type": "custom", "item_schema": SCHEMA, "include_sample_schema": True},
        testing_criteria=[
            {
                "type": "azure_ai_evaluator",
                "name": evaluator,
                "evaluator_name": f"builtin.{evaluator}",
                "initialization_parameters": {"model": "judge"},
                **mapped,
            }
        ],
    )
    content = [{"item": {"query": query, "tool_definitions": TOOLS}} for query in queries]
    data_source = {
        "type": "azure_ai_target_completions",
        "source": {"type": "file_content", "content": content},
        "target": {"type": "azure_ai_agent", "name": "support"},
    }
    run = wait_for(client, created.id, client.evals.runs.create(eval_id=created.id, data_source=data_source).id)
    return created, run


def test_responses_agent_latest_version_with_tool_calls(served, agents, llm):
    client = served.client()
    created, run = judge_tool_calls_of_support(client, "Where is order 7?")
    assert run.status == "completed" and run.result_counts.passed == 1, run
    item = next(iter(client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)))
    calls = [o for o in item.datasource_item["sample.output_items"] if o["type"] == "function_call"]
    assert calls[0]["name"] == "lookup_order" and item.datasource_item["sample.output_text"] == "Order 7 has shipped."
    assert item.sample.model_extra["agent"] == "support@2"
    assert "[TOOL_CALL] lookup_order(order_id=7)" in llm.stats()["last"]["messages"][1]["content"]


def test_an_agents_hosted_file_search_is_judged_as_one_of_its_tool_calls(served, agents, llm):
    """A Foundry agent searches its files (a tool the platform hosts) and reasons before answering:
    the tool judge reads the search as a call, with file search's bundled definition beside the item's
    own tools, and the reasoning is left out."""
    _, run = judge_tool_calls_of_support(served.client(), "What is the refund policy?")
    assert run.status == "completed" and run.result_counts.passed == 1, run
    prompt = llm.stats()["last"]["messages"][1]["content"]
    assert '[TOOL_CALL] file_search(queries=["refund policy"])' in prompt
    assert "[TOOL_RESULT]" in prompt and "Refunds within 30 days." in prompt
    assert HOSTED_TOOLS["file_search"].description in prompt and "look it up" not in prompt
    # With no data_mapping (the agent's calls as {{sample.output_tools}}), the search is a call too
    _, run = judge_tool_calls_of_support(served.client(), "What is the refund policy?", response=None)
    assert run.status == "completed" and run.result_counts.passed == 1, run
    assert '[TOOL_CALL] file_search(queries=["refund policy"])' in llm.stats()["last"]["messages"][1]["content"]


def test_an_agents_groundedness_rests_on_what_its_file_search_returned(served, agents, llm):
    """With no context column, groundedness judges the agent's answer against what its tools
    returned, as Foundry's agent groundedness does; an answer that used no tool has none to rest on."""
    # The server matches the request's JSON: the context section, as the judge's prompt holds it, escaped
    context = json.dumps('CONTEXT:\n[{"file_id": "file_1"')[1:-1]
    grounded_in_search = {"match": context, "reply": {"content": GROUNDED}}
    llm.script(rules=[grounded_in_search, *AGENT_RULES])
    client = served.client()
    created, run = judge_tool_calls_of_support(
        client, "What is the refund policy?", "intake please", evaluator="groundedness"
    )
    assert run.status == "completed" and run.result_counts.passed == 1 and run.result_counts.errored == 1, run
    grounded, bare = sorted(
        client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id), key=lambda i: i.datasource_item_id
    )
    assert grounded.results[0].score == 5 and grounded.results[0].reason == "grounded in the file search"
    assert bare.results[0].status == "error" and "no tool results" in bare.results[0].reason
    assert bare.results[0].properties["error"]["code"] == "missing_input"


GROUNDED = '{"reason": "grounded in the file search", "score": 5}'

SEARCHED_ANSWER = [  # an agent's answer as Foundry's agent datasets write it
    {
        "role": "assistant",
        "content": [
            {"type": "tool_call", "tool_call_id": "c1", "name": "file_search", "arguments": {"queries": ["refunds"]}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": [{"type": "tool_result", "tool_result": "Refunds in 30 days."}]},
    {"role": "assistant", "content": "Refunds take 30 days."},
]


def test_a_dataset_of_agents_answers_is_judged_for_groundedness_on_their_tool_results(served, llm):
    """Agent answers stored as message lists (no target), with no context column: the eval is
    accepted, as Foundry accepts it, and each answer is judged against what its tools returned;
    where the schema says the answer is a string, the missing context is refused before any run."""
    # The server matches the request's JSON: the context section, as the judge's prompt holds it, escaped
    context = json.dumps("CONTEXT:\nRefunds in 30 days.")[1:-1]
    llm.script(rules=[{"match": context, "reply": {"content": GROUNDED}}])
    client = served.client()
    criterion = {
        "type": "azure_ai_evaluator",
        "name": "groundedness",
        "evaluator_name": "builtin.groundedness",
        "initialization_parameters": {"model": "judge"},
        "data_mapping": {"query": "{{item.query}}", "response": "{{item.response}}"},
    }
    answers = {"type": "object", "properties": {"query": {"type": "array"}, "response": {"type": "array"}}}
    created = client.evals.create(
        name="answers", data_source_config={"type": "custom", "item_schema": answers}, testing_criteria=[criterion]
    )
    query = [{"role": "user", "content": "How long do refunds take?"}]
    content = [
        {"item": {"query": query, "response": SEARCHED_ANSWER}},
        {"item": {"query": query, "response": [{"role": "assistant", "content": "Refunds take 30 days."}]}},
    ]
    data_source = {"type": "jsonl", "source": {"type": "file_content", "content": content}}
    run = wait_for(client, created.id, client.evals.runs.create(eval_id=created.id, data_source=data_source).id)
    grounded, bare = sorted(
        client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id), key=lambda i: i.datasource_item_id
    )
    assert grounded.results[0].score == 5 and grounded.results[0].reason == "grounded in the file search"
    assert bare.results[0].properties["error"]["code"] == "missing_input"

    strings = {"type": "object", "properties": {"query": {"type": "string"}, "response": {"type": "string"}}}
    with pytest.raises(openai.BadRequestError, match="needs input 'context'"):
        client.evals.create(
            name="strings", data_source_config={"type": "custom", "item_schema": strings}, testing_criteria=[criterion]
        )


def test_invocations_agent_with_free_form_input(served, agents, llm):
    client = served.client()
    created = client.evals.create(
        name="intake",
        data_source_config={"type": "custom", "item_schema": SCHEMA, "include_sample_schema": True},
        testing_criteria=[
            {
                "type": "azure_ai_evaluator",
                "name": "coherence",
                "evaluator_name": "builtin.coherence",
                "initialization_parameters": {"model": "judge"},
                "data_mapping": {"query": "{{item.query}}", "response": "{{sample.output_text}}"},
            }
        ],
    )
    data_source = {
        "type": "azure_ai_target_completions",
        "input_messages": {"message": "{{item.query}}", "channel": "web"},
        "source": {"type": "file_content", "content": [{"item": {"query": "intake please"}}]},
        "target": {"type": "azure_ai_agent", "name": "intake", "version": "1"},
    }
    run = wait_for(client, created.id, client.evals.runs.create(eval_id=created.id, data_source=data_source).id)
    assert run.status == "completed" and run.result_counts.passed == 1
    item = next(iter(client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id)))
    assert item.datasource_item["sample.output_text"] == "Ticket opened."
    assert item.sample.input[0].model_extra == {"message": "intake please", "channel": "web"} or item.sample.input


def test_unknown_agent_and_unreachable_version(served, agents):
    client = served.client()
    created = client.evals.create(
        name="a",
        data_source_config={"type": "custom", "item_schema": SCHEMA, "include_sample_schema": True},
        testing_criteria=[
            {
                "type": "string_check",
                "name": "s",
                "input": "{{sample.output_text}}",
                "reference": "shipped",
                "operation": "like",
            }
        ],
    )
    source = {"type": "file_content", "content": [{"item": {"query": "Where is order 7?"}}]}
    with pytest.raises(openai.BadRequestError, match="agent nobody is not configured"):
        client.evals.runs.create(
            eval_id=created.id,
            data_source={
                "type": "azure_ai_target_completions",
                "source": source,
                "target": {"type": "azure_ai_agent", "name": "nobody"},
            },
        )
    run = client.evals.runs.create(
        eval_id=created.id,
        data_source={
            "type": "azure_ai_target_completions",
            "source": source,
            "target": {"type": "azure_ai_agent", "name": "support", "version": "1"},
        },
    )
    # Nothing listens at version 1's endpoint: the run stops before its first item, saying which agent
    # and what to do, as it does for a model nothing answers (not an errored item per row).
    run = wait_for(client, created.id, run.id)
    assert run.status == "failed" and run.error is not None
    assert "agent support@1 at http://127.0.0.1:" in run.error.message and "is unreachable" in run.error.message
    assert not list(client.evals.runs.output_items.list(run_id=run.id, eval_id=created.id))


def test_the_item_page_shows_an_agents_file_search_as_one_of_its_steps(served, agents, llm, browser, tmp_path):
    _, run = judge_tool_calls_of_support(served.client(), "What is the refund policy?")
    page = browser.new_page()
    page.goto(run.report_url)
    assert "1 tool call:" in page.locator("#items td.answer details.tools summary").first.inner_text()
    with page.expect_navigation():
        page.locator("#items a.item-link").first.click()
    assert "1 tool call" in page.locator("#answer details.steps summary").first.inner_text()
    call = page.locator("#answer details.tool-call").first
    call.locator("summary").click()
    shown = call.inner_text()
    assert "file_search" in shown and "refund policy" in shown and "Refunds within 30 days." in shown
    page.screenshot(path=str(tmp_path / "hosted-search.png"), full_page=True)
