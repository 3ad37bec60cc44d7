"""Foundry's composite judges: several qualities in one judge call per item, each component
reported as ``<c>_score/_result/_reason/_status``, the item passing only when every applicable
component passes (through the scripted server, counted there)."""

from __future__ import annotations

import json

import pytest

from tests.evaluators.test_judges import ITEM, MESSAGES, TOOLS, criterion, run_eval

ROWS = [
    {"query": "How do I reset my password?", "response": "Open Settings, choose Security, then Reset password."},
    {"query": "Cancel order 12", "response": "Bananas are yellow."},
    {"query": "What is the refund window?", "response": "30 days.", "context": "Refunds within 30 days."},
]


def verdict(scores: dict[str, object]) -> str:
    return json.dumps({name: {"reason": f"{name} judged", "score": score} for name, score in scores.items()})


GOOD = {"fluency": 5, "coherence": 4, "intent_resolution": 5, "task_adherence": 1, "task_completion": 1}
BAD = {**GOOD, "intent_resolution": 1, "task_completion": 0}


def test_output_quality_makes_one_judge_call_per_item_and_reports_each_component(llm, models, store):
    llm.reset()
    llm.script(
        rules=[
            {"match": "Bananas", "reply": {"content": verdict(BAD)}},
            {"match": "30 days", "reply": {"content": verdict({**GOOD, "groundedness": 5})}},
        ],
        default={"content": verdict(GOOD)},
    )
    outcome, results = run_eval(store, models, [criterion("output_quality")], ROWS)
    assert llm.stats()["completions"] == len(ROWS)  # one call per item, six qualities in each
    first, second, third = (r[0] for r in results)
    assert first.passed is True and first.score == 1.0
    props = first.properties
    assert props["fluency_score"] == 5 and props["fluency_result"] == "pass" and props["fluency_status"] == "completed"
    assert props["fluency_reason"] == "fluency judged"
    # no context and no tool results: groundedness is not asked for, and does not count
    assert props["groundedness_status"] == "not_applicable" and props["groundedness_score"] is None
    assert second.passed is False and second.score == pytest.approx(3 / 5)
    assert second.properties["intent_resolution_result"] == "fail" and "intent_resolution" in second.reason
    assert third.properties["groundedness_status"] == "completed" and third.properties["groundedness_score"] == 5
    summary = outcome.summary.per_testing_criteria_results[0]
    assert (summary.passed, summary.failed) == (2, 1)


def test_a_component_the_judge_finds_not_applicable_does_not_count(llm, models, store):
    llm.reset()
    answer = {name: {"reason": "x", "score": s} for name, s in GOOD.items()}
    answer["task_adherence"] = {"status": "not_applicable", "reason": "no instructions given"}
    llm.script(default={"content": json.dumps(answer)})
    _, (results,) = run_eval(store, models, [criterion("output_quality")], ROWS[:1])
    props = results[0].properties
    assert props["task_adherence_status"] == "not_applicable" and results[0].passed is True


def test_tool_use_quality_on_a_tool_calling_conversation(llm, models, store):
    llm.reset()
    scores = {"tool_call_accuracy": 5, "tool_call_success": 1, "tool_input_accuracy": 1}
    scores |= {"tool_output_utilization": 0, "tool_selection": 1}
    llm.script(default={"content": verdict(scores)})
    rows = [ITEM, {"query": "hi", "response": [{"role": "assistant", "content": "hello"}], "tool_definitions": TOOLS}]
    _, results = run_eval(store, models, [criterion("tool_use_quality")], rows)
    assert llm.stats()["completions"] == 1  # the conversation without tool calls is not sent
    judged, no_calls = (r[0] for r in results)
    assert judged.passed is False and judged.score == pytest.approx(4 / 5)
    assert judged.properties["tool_output_utilization_result"] == "fail"
    assert judged.properties["tool_call_accuracy_score"] == 5
    assert no_calls.status == "skipped"
    sent = llm.stats()["last"]["messages"][-1]["content"]
    assert "lookup_order" in sent and "shipped" in sent and MESSAGES[1]["content"] in sent


def test_quality_grader_asks_for_context_coverage_only_with_context(llm, models, store):
    llm.reset()
    base = {"relevance": 5, "abstention": 1, "answer_completeness": 4}
    llm.script(
        rules=[
            {
                "match": "Refunds within",
                "reply": {"content": verdict({**base, "groundedness": 5, "context_coverage": 2})},
            }
        ],
        default={"content": verdict(base)},
    )
    _, results = run_eval(store, models, [criterion("quality_grader")], [ROWS[0], ROWS[2]])
    plain, with_context = (r[0] for r in results)
    assert plain.passed is True and plain.properties["context_coverage_status"] == "not_applicable"
    assert with_context.passed is False and with_context.properties["context_coverage_result"] == "fail"


def test_tool_use_quality_finds_the_tool_calls_of_a_whole_conversation(llm, models, store):
    """Conversation level: the calls are inside the messages (it said "no tool calls" for a
    conversation that had two, as in Foundry's own sample)."""
    llm.reset()
    scores = {"tool_call_accuracy": 5, "tool_call_success": 1, "tool_input_accuracy": 1}
    scores |= {"tool_output_utilization": 1, "tool_selection": 1}
    llm.script(default={"content": verdict(scores)})
    messages = [
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_call", "tool_call_id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "tool_result", "tool_result": {"sky": "grey"}}]},
        {"role": "assistant", "content": "Grey skies in Oslo."},
    ]
    tools = [{"name": "get_weather", "description": "Weather by city", "parameters": {"type": "object"}}]
    row = {"messages": messages, "tool_definitions": tools}
    _, ((result,),) = run_eval(store, models, [criterion("tool_use_quality")], [row], level="conversation")
    assert result.status == "completed" and result.passed is True
    assert llm.stats()["completions"] == 1
