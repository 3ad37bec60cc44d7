"""The four trace dialects convert to the same items; problems are noted for the hard filters."""

from __future__ import annotations

import json

import pytest

from assay.traces.conversion import conversations_of, turns_of
from assay.traces.otlp import decode
from tests.traces import otlp_fixtures as fx


def _turns(doc):
    return turns_of(decode(json.dumps(doc).encode(), "application/json").spans)


def _content(item):
    return {k: v for k, v in item.items() if k not in ("trace_id", "span_id")}


def test_every_dialect_gives_the_same_turn_item():
    items = {name: [t.item() for t in _turns(make())] for name, make in fx.DIALECTS.items()}
    assert all(len(found) == 1 for found in items.values()), items
    expected = _content(items["current"][0])
    assert expected["query"] == [
        {"role": "system", "content": [{"type": "text", "text": fx.SYSTEM}]},
        {"role": "user", "content": [{"type": "text", "text": fx.QUESTION}]},
    ]
    assert expected["response"][-1] == {"role": "assistant", "content": [{"type": "text", "text": fx.ANSWER}]}
    assert expected["tool_calls"] == [
        {"type": "tool_call", "tool_call_id": "call_1", "name": "get_weather", "arguments": fx.ARGS}
    ]
    assert expected["tool_definitions"] == [{k: fx.TOOL[k] for k in ("name", "description", "parameters")}]
    assert expected["agent_id"] == "weather:1" and expected["conversation_id"] == "conv-1"
    for name, found in items.items():
        assert _content(found[0]) == expected, name


@pytest.mark.parametrize("name", list(fx.DIALECTS))
def test_clean_turns_have_no_problems(name):
    (turn,) = _turns(fx.DIALECTS[name]())
    assert turn.problems == [] and turn.user_text == fx.QUESTION


def test_tool_results_pair_with_execute_tool_spans_when_messages_lack_them():
    doc = fx.current()
    agent = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    outputs = [
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "call_9", "name": "get_weather", "arguments": fx.ARGS}],
        },
        {"role": "assistant", "parts": [{"type": "text", "content": fx.ANSWER}]},
    ]
    agent["attributes"] = [a for a in agent["attributes"] if a["key"] != "gen_ai.output.messages"]
    agent["attributes"].append({"key": "gen_ai.output.messages", "value": fx.value(json.dumps(outputs))})
    tool = fx.span(
        agent["traceId"],
        "b7ad6b7169203332",
        "execute_tool get_weather",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "call_9",
            "gen_ai.tool.call.result": fx.RESULT,
        },
        parent=agent["spanId"],
        offset_ms=10,
    )
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"].append(tool)
    (turn,) = _turns(doc)
    item = turn.item()
    assert item["response"][1] == {
        "role": "tool",
        "content": [{"type": "tool_result", "tool_call_id": "call_9", "tool_result": fx.RESULT}],
        "tool_call_id": "call_9",
    }
    assert turn.problems == []


def test_problems_for_the_hard_filters():
    doc = fx.current()
    agent = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    agent["status"] = {"code": 2, "message": "boom"}
    cut = json.dumps([{"role": "user", "parts": [{"type": "text", "content": fx.QUESTION}]}])[:-7]
    agent["attributes"] = [a for a in agent["attributes"] if a["key"] != "gen_ai.input.messages"]
    agent["attributes"].append({"key": "gen_ai.input.messages", "value": fx.value(cut)})
    (turn,) = _turns(doc)
    assert "error status: boom" in turn.problems
    assert "truncated or unparseable content in gen_ai.input.messages" in turn.problems


def test_conversation_merges_turns_without_repeating_history():
    first = fx.current()
    second = fx.current("4af7651916cd43dd8448eb211c80319c")
    agent = second["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    agent["startTimeUnixNano"] = str(fx.T0 + 60_000_000_000)
    history = [
        {"role": "user", "parts": [{"type": "text", "content": fx.QUESTION}]},
        {"role": "assistant", "parts": [{"type": "text", "content": fx.ANSWER}]},
        {"role": "user", "parts": [{"type": "text", "content": "And tomorrow?"}]},
    ]
    outputs = [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny tomorrow."}]}]
    agent["attributes"] = [
        a for a in agent["attributes"] if a["key"] not in ("gen_ai.input.messages", "gen_ai.output.messages")
    ]
    agent["attributes"] += fx.attrs(
        gen_ai__input__messages=json.dumps(history), gen_ai__output__messages=json.dumps(outputs)
    )
    spans = (
        decode(json.dumps(first).encode(), "application/json").spans
        + decode(json.dumps(second).encode(), "application/json").spans
    )
    (conversation,) = conversations_of(turns_of(spans))
    texts = [
        (m["role"], m["content"][0].get("text") or m["content"][0].get("name") or m["content"][0].get("tool_result"))
        for m in conversation.item()["messages"]
    ]
    assert texts == [
        ("system", fx.SYSTEM),
        ("user", fx.QUESTION),
        ("assistant", "get_weather"),
        ("tool", fx.RESULT),
        ("assistant", fx.ANSWER),
        ("user", "And tomorrow?"),
        ("assistant", "Sunny tomorrow."),
    ]
    assert conversation.item()["trace_ids"] == ["0af7651916cd43dd8448eb211c80319c", "4af7651916cd43dd8448eb211c80319c"]
