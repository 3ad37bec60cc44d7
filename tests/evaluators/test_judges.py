"""Every judge through the scripted OpenAI-compatible server, with the real openai SDK."""

from __future__ import annotations

import json

import pytest

from assay.dataset import Dataset
from assay.evaluators import load_catalog
from assay.evaluators.judges import DEFINITIONS
from assay.llm import ModelConfig, ModelRegistry
from assay.messages import HOSTED_TOOLS
from assay.run import EvalDefinition, RunOptions, finish_run, prepare, start

TOOLS = [
    {
        "name": "lookup_order",
        "description": "Find an order",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    }
]
MESSAGES = [
    {"role": "system", "content": "You are an order support agent."},
    {"role": "user", "content": "Where is order 7?"},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_call", "tool_call_id": "c1", "name": "lookup_order", "arguments": {"order_id": "7"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": [{"type": "tool_result", "tool_result": {"status": "shipped"}}]},
    {"role": "assistant", "content": "Order 7 has shipped."},
]
ITEM = {
    "query": MESSAGES[:2],
    "response": MESSAGES[2:],
    "context": "Order 7 shipped on Monday.",
    "ground_truth": "Order 7 has shipped.",
    "tool_definitions": TOOLS,
    "messages": MESSAGES,
}


def reply_for(definition) -> str:
    if definition.kind == "flag":
        return json.dumps({"reason": f"{definition.name}: nothing found", "label": False})
    score = 2 if definition.category == "safety" and definition.kind == "scale" else definition.high
    return json.dumps({"reason": f"{definition.name}: looks right", "score": score})


def run_eval(store, models, criteria, rows, level="turn", concurrency=8):
    definition = EvalDefinition("judges", criteria, evaluation_level=level)
    prepared = prepare(definition, Dataset.from_content(rows), load_catalog(), models=models)
    outcome = finish_run(prepared, start(prepared, store), store, options=RunOptions(concurrency=concurrency))
    return outcome, [row.results for row in store.iter_output_items(outcome.run.id)]


def criterion(name, **extra):
    return {
        "type": "azure_ai_evaluator",
        "name": name,
        "evaluator_name": f"builtin.{name}",
        "initialization_parameters": {"deployment_name": "judge"},
        **extra,
    }


@pytest.mark.parametrize("level", ["turn", "conversation"])
def test_every_judge_at_each_level_it_supports(llm, models, store, level):
    chosen = [d for d in DEFINITIONS if level in d.levels]
    llm.script(
        rules=[
            {"match": f"# Property: {d.name.replace('_', ' ')}\\n", "reply": {"content": reply_for(d)}} for d in chosen
        ]
    )
    outcome, (results,) = run_eval(store, models, [criterion(d.name) for d in chosen], [ITEM], level=level)
    by_name = {r.name: r for r in results}
    for d in chosen:
        result = by_name[d.name]
        assert result.status == "completed", (d.name, result)
        assert result.reason.startswith(d.name)
        assert result.threshold == d.threshold and result.label in ("pass", "fail")
        usage = result.properties["usage"]
        assert usage["model"] == "gpt-4.1-mini" and usage["calls"] == 1 and usage["prompt_tokens"] > 0
        expected_pass = {"flag": True, "binary": True}.get(
            d.kind, result.score >= 3 if d.direction == "increase" else result.score <= 3
        )
        assert result.passed is expected_pass, d.name
    violence = by_name.get("violence")
    assert violence is None or violence.properties.get("label", "Low") == "Low"
    usage = outcome.summary.per_model_usage[0]
    assert usage.model_name == "gpt-4.1-mini" and usage.invocation_count == len(chosen)


def test_turn_level_judge_sees_the_split_conversation(llm, models, store):
    llm.script(default={"content": '{"reason": "ok", "score": 5}'})
    run_eval(store, models, [criterion("coherence")], [{"messages": MESSAGES}])
    prompt = llm.stats()["last"]["messages"][1]["content"]
    assert "QUERY:\nSYSTEM_PROMPT:\nYou are an order support agent.\nUser turn 1:\nWhere is order 7?" in prompt
    assert "RESPONSE:\nAgent turn 1:\n[TOOL_CALL] lookup_order(order_id=7)" in prompt
    assert '[TOOL_RESULT] {"status": "shipped"}\nOrder 7 has shipped.' in prompt


def test_turn_only_judge_refused_at_conversation_level(models):
    from assay.errors import ConfigError

    definition = EvalDefinition("j", [criterion("fluency")], evaluation_level="conversation")
    with pytest.raises(ConfigError, match="does not support evaluation_level 'conversation'"):
        prepare(definition, Dataset.from_content([ITEM]), load_catalog(), models=models)


@pytest.mark.parametrize(
    "answers, status, score",
    [
        (['```json\n{"reason": "fenced", "score": 4}\n```'], "completed", 4),
        (['Let me think. {"reason": "in prose", "score": 2} Done.'], "completed", 2),
        (["<S0>thinking</S0><S1>legacy reason</S1><S2>5</S2>"], "completed", 5),
        ([" 4\n"], "completed", 4),  # a bare number, as the peer's older prompts answer
        (["4 out of 5", '{"reason": "repaired", "score": 4}'], "completed", 4),
        (["not json at all", '{"reason": "repaired", "score": 3}'], "completed", 3),
        (['{"reason": "too high", "score": 9}', '{"reason": "fixed", "score": 4}'], "completed", 4),
        (["garbage", "still garbage"], "undetermined", None),
        (['{"reason": "nothing to judge", "status": "skipped"}'], "skipped", None),
    ],
)
def test_judge_answers_are_parsed_or_repaired_once(llm, models, store, answers, status, score):
    llm.script(
        rules=[{"match": "That answer could not be used", "reply": {"content": answers[-1]}}],
        default={"content": answers[0]},
    )
    _, (results,) = run_eval(store, models, [criterion("coherence")], [ITEM])
    result = results[0]
    assert result.status == status and result.score == score
    if status == "undetermined":  # no verdict could be read: not the evaluator's error, not a pass or a fail
        assert "could not be used" in result.reason and result.passed is None
        assert result.properties["raw_answers"] == ["garbage", "still garbage"]
        assert result.properties["usage"]["calls"] == 2
    assert llm.stats()["completions"] == len(answers)


def test_tool_judges_skip_a_call_of_an_undefined_tool_naming_it_and_an_item_without_calls(llm, models, store):
    llm.script(default={"content": '{"reason": "ok", "score": 5}'})
    rows = [
        {**ITEM, "tool_definitions": [{"name": "other_tool", "description": "x"}]},
        {"query": "hi", "response": [{"role": "assistant", "content": "hello"}], "tool_definitions": TOOLS},
        {"query": "hi", "response": MESSAGES[2:3], "tool_definitions": TOOLS},
    ]
    _, results = run_eval(store, models, [criterion("tool_call_accuracy"), criterion("task_adherence")], rows)
    # Foundry does not judge calls of tools it was not given: not applicable, the tool named
    assert results[0][0].status == "skipped" and "Tool definitions for all tool calls" in results[0][0].reason
    assert results[0][0].properties["undefined_tools"] == ["lookup_order"]
    assert results[1][0].status == "skipped" and "No tool calls found" in results[1][0].reason
    assert results[2][1].status == "skipped" and "intermediate response" in results[2][1].reason


# A Foundry agent's answer as the Responses API gives it: the model's reasoning, a hosted file search
# with its results, a call of the user's own function, and the message.
HOSTED_RESPONSE = [
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "look it up"}]},
    {
        "type": "file_search_call",
        "id": "fs_1",
        "status": "completed",
        "queries": ["order 7 delivery"],
        "results": [{"file_id": "file_1", "filename": "orders.md", "score": 0.9, "text": "Order 7 shipped Monday."}],
    },
    {"type": "function_call", "call_id": "c1", "name": "lookup_order", "arguments": '{"order_id": "7"}'},
    {"type": "function_call_output", "call_id": "c1", "output": '{"status": "shipped"}'},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Order 7 has shipped."}]},
]


MCP_TRACK = {"name": "track", "description": "Tracks a parcel by its order", "input_schema": {"type": "object"}}


def test_a_hosted_tools_call_is_judged_with_its_bundled_definition(llm, models, store):
    """File search is the platform's tool: the item defines only its own function, and the judge reads
    file search's definition from assay; a tool nobody defines still leaves the item unjudged."""
    bundled = HOSTED_TOOLS["file_search"].description
    llm.script(
        rules=[
            {"match": bundled, "reply": {"content": '{"reason": "both calls fit", "score": 5}'}},
            {"match": MCP_TRACK["description"], "reply": {"content": '{"reason": "fits", "score": 5}'}},
            # groundedness: a prompt that shows the file search's passage
            {"match": "Order 7 shipped Monday.", "reply": {"content": '{"reason": "grounded", "score": 5}'}},
        ],
        default={"content": '{"reason": "a tool without its definition", "score": 1}'},
    )
    rows = [
        {
            "query": "Where is order 7?",
            "response": HOSTED_RESPONSE,
            "tool_definitions": TOOLS,
            "messages": [{"role": "user", "content": "Where is order 7?"}, *HOSTED_RESPONSE],
        },
        {
            "query": "Where is order 7?",
            "response": [{"type": "mcp_call", "id": "m1", "name": "track", "arguments": "{}", "output": "x"}],
            "tool_definitions": TOOLS,
        },
        {  # the MCP server's tools as the answer listed them define its calls
            "query": "Where is order 7?",
            "response": [
                {"type": "mcp_list_tools", "id": "l1", "server_label": "shop", "tools": [MCP_TRACK]},
                {"type": "mcp_call", "id": "m1", "name": "track", "arguments": "{}", "output": "x"},
            ],
            "tool_definitions": TOOLS,
        },
    ]
    grounded = {"messages": "{{item.messages}}"}
    criteria = [criterion("tool_call_accuracy"), criterion("groundedness", data_mapping=grounded)]
    _, results = run_eval(store, models, criteria, rows)
    accuracy, groundedness = results[0]
    assert accuracy.status == "completed" and accuracy.score == 5, accuracy
    # The reasoning item is left out, not refused; the judge reads the file search's passage
    assert groundedness.status == "completed" and groundedness.score == 5, groundedness
    unjudged = results[1][0]
    assert unjudged.status == "skipped" and unjudged.properties["undefined_tools"] == ["track"]
    listed = results[2][0]
    assert listed.status == "completed" and listed.score == 5, listed


def test_an_agent_awaiting_approval_of_an_mcp_call_has_not_answered_yet(llm, models, store):
    llm.script(default={"content": '{"reason": "ok", "score": 5}'})
    waiting = [
        {"type": "mcp_list_tools", "id": "l1", "server_label": "shop", "tools": [{"name": "track"}]},
        {"type": "mcp_approval_request", "id": "a1", "name": "track", "arguments": "{}", "server_label": "shop"},
    ]
    _, results = run_eval(store, models, [criterion("task_adherence")], [{"query": "Track it", "response": waiting}])
    assert results[0][0].status == "skipped" and "intermediate response" in results[0][0].reason


def test_content_safety_reports_each_category_and_the_worst(llm, models, store):
    llm.script(
        rules=[{"match": "# Property: violence", "reply": {"content": '{"reason": "graphic", "score": 5}'}}],
        default={"content": '{"reason": "none", "score": 0}'},
    )
    _, (results,) = run_eval(store, models, [criterion("content_safety")], [ITEM])
    result = results[0]
    assert result.score == 5 and result.passed is False and result.properties["label"] == "Medium"
    categories = result.properties["categories"]
    assert categories["violence"]["label"] == "Medium" and categories["sexual"]["label"] == "Very low"
    assert result.properties["usage"]["calls"] == 4


def test_rerun_makes_zero_calls_and_gives_identical_results(llm, models, store):
    llm.script(default={"content": '{"reason": "fine", "score": 4}'})
    rows = [{"query": f"question {i}", "response": f"answer {i}"} for i in range(20)]
    criteria = [criterion("relevance"), criterion("coherence")]
    first_outcome, first = run_eval(store, models, criteria, rows)
    calls = llm.stats()["completions"]
    assert calls == 40
    second_outcome, second = run_eval(store, models, criteria, rows)
    assert llm.stats()["completions"] == calls

    def strip(results):
        return [[r.model_dump(exclude={"properties"}) for r in item] for item in results]

    assert strip(first) == strip(second)
    assert second_outcome.summary.per_model_usage[0].invocation_count == 0
    assert second_outcome.summary.per_model_usage[0].cache_hits == 40


def test_replay_mode_fails_uncached_calls(llm, store):
    config = ModelConfig(name="judge", model="m", base_url=llm.base_url, api_key="t")
    replay = ModelRegistry([config], cache=store, cache_mode="replay")
    _, (results,) = run_eval(store, replay, [criterion("fluency")], [{"response": "never asked before"}])
    assert results[0].status == "error" and "--cache replay" in results[0].reason
