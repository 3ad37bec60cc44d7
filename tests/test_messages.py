import dataclasses
import json
from pathlib import Path

import pytest

from assay.dataset.rows import OptimizerTask, SimulationSeed, row_kind
from assay.messages import (
    HOSTED_TOOLS,
    MessageFormatError,
    OtherPart,
    TextPart,
    ToolCall,
    ToolResult,
    normalize,
    normalize_tool_definitions,
    response_text,
    split_turn,
    to_dicts,
    with_hosted_tools,
)
from assay.targets.retrieval import stored_sample

SEED_ROWS = json.loads((Path(__file__).parent / "fixtures/seed_rows.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("entry", SEED_ROWS, ids=lambda e: f"seed{e['seed']}-{'-'.join(sorted(e['row']))}")
def test_every_seed_example_row_loads_and_normalises(entry):
    row = entry["row"]
    kind = row_kind(row.get("item", row))
    if "messages" in row:
        messages = normalize(row["messages"])
        assert len(messages) >= len(row["messages"]) - sum(1 for m in row["messages"] if m.get("type"))
        assert all(m.role in {"developer", "system", "user", "assistant", "tool"} for m in messages)
        for message in messages:
            for call in message.tool_calls:
                assert call.name and call.id
        if "tool_definitions" in row:
            assert normalize_tool_definitions(row["tool_definitions"])[0].name
    elif kind == "simulation_seed":
        assert SimulationSeed.model_validate(row).test_case_description
    elif kind == "task":
        task = OptimizerTask.model_validate(row)
        assert all(c.instruction for c in task.criteria)
    elif "query" in row or "response" in row:
        assert normalize(row.get("query"), default_role="user") or row.get("query") is None
        assert response_text(row.get("response")) or "response" not in row
    else:
        assert "item" in row


def test_foundry_tool_call_parts_pair_with_results():
    messages = normalize(
        [
            {"role": "user", "content": "I can't sign in."},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_call",
                        "tool_call_id": "call_123",
                        "name": "guide",
                        "arguments": {"error": "bad password"},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_123",
                "content": [{"type": "tool_result", "tool_result": {"action": "reset"}}],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Reset it."}]},
        ]
    )
    assert messages[1].content == [ToolCall("call_123", "guide", {"error": "bad password"})]
    assert messages[2].content == [ToolResult("call_123", {"action": "reset"})]
    assert messages[3].text == "Reset it."


def test_openai_chat_tool_calls_parse_json_arguments():
    messages = normalize(
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'},
        ]
    )
    assert messages[0].tool_calls == [ToolCall("c1", "f", {"x": 1})]
    assert messages[1].tool_results == [ToolResult("c1", {"ok": True})]


def test_responses_items_become_messages():
    messages = normalize(
        [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "fc", "name": "lookup", "arguments": '{"id": 7}'},
            {"type": "function_call_output", "call_id": "fc", "output": "done"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "bye"}]},
        ]
    )
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1].tool_calls[0].arguments == {"id": 7}
    assert messages[2].tool_results[0].result == "done"


def test_hosted_tools_items_are_calls_with_their_results_and_reasoning_is_left_out():
    """What a Responses answer holds besides messages and function calls (OpenAI's and Foundry's
    hosted tools), as the calls and results a conversation shows."""
    items = [
        {"type": "reasoning", "id": "rs", "summary": []},
        {"type": "file_search_call", "id": "fs", "status": "completed", "queries": ["refunds"], "results": None},
        {"type": "web_search_call", "id": "ws", "status": "completed", "action": {"type": "search", "query": "q"}},
        {"type": "code_interpreter_call", "id": "ci", "code": "1+1", "container_id": "c", "outputs": [{"logs": "2"}]},
        {
            "type": "mcp_call",
            "id": "mc",
            "name": "track",
            "arguments": '{"n": 7}',
            "server_label": "s",
            "error": "down",
        },
        {"type": "custom_tool_call", "call_id": "ct", "name": "grep", "input": "refund"},
        {"type": "custom_tool_call_output", "call_id": "ct", "output": "policy.md:3"},
        {"type": "bing_grounding_call", "id": "bg", "arguments": '{"requesturl": "https://bing/q=x"}'},
        {"type": "mcp_list_tools", "id": "ml", "server_label": "s", "tools": []},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Refunds take 30 days."}]},
    ]
    messages = normalize(items, default_role="assistant")
    calls = [call for message in messages for call in message.tool_calls]
    assert calls == [
        ToolCall("fs", "file_search", {"queries": ["refunds"]}),
        ToolCall("ws", "web_search", {"action": {"type": "search", "query": "q"}}),
        ToolCall("ci", "code_interpreter", {"code": "1+1"}),
        ToolCall("mc", "track", {"n": 7}),
        ToolCall("ct", "grep", {"input": "refund"}),
        ToolCall("bg", "bing_grounding", {"requesturl": "https://bing/q=x"}),
    ]
    results = [result for message in messages for result in message.tool_results]
    assert results == [ToolResult("ci", [{"logs": "2"}]), ToolResult("mc", "down"), ToolResult("ct", "policy.md:3")]
    assert messages[-1].text == "Refunds take 30 days." and len(messages) == 10
    # An approval request is a protocol step, carried through but not a call
    (waiting,) = normalize([{"type": "mcp_approval_request", "id": "a", "name": "track", "arguments": "{}"}])
    assert waiting.role == "assistant" and isinstance(waiting.content[0], OtherPart) and not waiting.tool_calls


def test_foundry_openapi_call_parts_are_calls_and_results():
    messages = normalize(
        [
            {
                "role": "assistant",
                "content": [{"type": "openapi_call", "tool_call_id": "o1", "name": "api", "arguments": {}}],
            },
            {"role": "tool", "content": [{"type": "openapi_call_output", "openapi_call_output": "api result"}]},
        ]
    )
    assert messages[0].tool_calls == [ToolCall("o1", "api", {})]
    assert messages[1].tool_results == [ToolResult(None, "api result")]


def test_hosted_tools_called_come_with_their_definitions_unless_the_item_defines_them():
    own_search = normalize_tool_definitions([{"name": "file_search", "description": "ours"}])
    calls = [ToolCall("1", "file_search"), ToolCall("2", "bing_grounding"), ToolCall("3", "bing_grounding")]
    assert with_hosted_tools(own_search, calls) == [*own_search, HOSTED_TOOLS["bing_grounding"]]
    assert with_hosted_tools([], [ToolCall("1", "lookup_order")]) == []


def test_a_stored_answer_keeps_its_hosted_tools_calls():
    """A captured Responses call: its file search is in the answer the judges read, its reasoning not."""
    found = {
        "api": "responses",
        "request": {"input": "Where is order 7?", "tools": [{"type": "file_search", "vector_store_ids": ["vs"]}]},
        "response": {
            "id": "resp_1",
            "model": "m",
            "output": [
                {"type": "reasoning", "id": "rs", "summary": []},
                {"type": "file_search_call", "id": "fs", "queries": ["order 7"], "results": [{"text": "Shipped."}]},
                {"type": "mcp_list_tools", "id": "ml", "server_label": "shop", "tools": [{"name": "track"}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It shipped."}]},
            ],
        },
    }
    sample = stored_sample(found, [])
    fields = sample["item_fields"]
    assert fields["tool_calls"] == [
        {"type": "tool_call", "tool_call_id": "fs", "name": "file_search", "arguments": {"queries": ["order 7"]}}
    ]
    assert [m["role"] for m in fields["response"]] == ["assistant", "tool", "assistant"]
    assert sample["output_text"] == "It shipped."
    assert [item["type"] for item in sample["output_tools"]] == ["file_search_call"]
    track = {"name": "track", "description": "", "parameters": {}}  # the MCP server's, as it listed it
    assert fields["tool_definitions"] == [dataclasses.asdict(HOSTED_TOOLS["file_search"]), track]
    # Hosted tools as requests list them, named as their calls name them; an MCP server's are its own
    listed = [{"type": "web_search_preview"}, {"type": "mcp", "server_label": "s"}, {"type": "computer_use_preview"}]
    assert [tool.name for tool in normalize_tool_definitions(listed)] == ["web_search", "computer"]
    with pytest.raises(MessageFormatError, match=r"tools\[0\]\.name: a tool definition needs the tool's 'name'"):
        normalize_tool_definitions([{"type": "function", "description": "no name"}], where="tools")


def test_strings_take_the_default_role_and_unknown_parts_are_kept():
    assert normalize("hello", default_role="assistant")[0].role == "assistant"
    image = {"type": "input_image", "image_url": "http://x"}
    message = normalize([{"role": "user", "content": [image, {"type": "text", "text": "what is this"}]}])[0]
    assert message.text == "what is this"
    assert to_dicts([message])[0]["content"][0] == image


@pytest.mark.parametrize(
    "bad, where",
    [
        ([{"role": "robot", "content": "x"}], "messages[0].role"),
        ([{"role": "user", "content": [{"type": "text"}]}], "messages[0].content[0].text"),
        ([{"role": "assistant", "content": [{"type": "tool_call", "arguments": {}}]}], "messages[0].content[0].name"),
        ([42], "messages[0]"),
        (7, "messages"),
    ],
)
def test_bad_shapes_say_where(bad, where):
    with pytest.raises(MessageFormatError) as info:
        normalize(bad)
    assert str(info.value).startswith(where + ":") or str(info.value).startswith(where + " ")


def test_split_turn_at_latest_user_message():
    messages = normalize(
        [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
            {"role": "assistant", "content": "d"},
        ]
    )
    query, response = split_turn(messages)
    assert [m.text for m in query] == ["s", "a", "b", "c"]
    assert [m.text for m in response] == ["d"]


def test_response_text_reads_assistant_text_of_message_lists():
    assert response_text([{"role": "assistant", "content": [{"type": "output_text", "text": "x"}]}]) == "x"
    assert response_text("plain") == "plain"
    assert isinstance(normalize([{"role": "user", "content": "u"}])[0].content[0], TextPart)


def test_an_openapi_tool_is_the_functions_it_lists():
    function = {
        "name": "countries_LookupByCurrency",
        "type": "function",
        "description": "By currency.",
        "parameters": {"type": "object", "properties": {"currency": {"type": "string"}}},
    }
    openapi = {"name": "countries", "type": "openapi", "spec": {"openapi": "3.1.0"}, "functions": [function]}
    bare = {"name": "weather", "type": "openapi", "spec": {"openapi": "3.1.0"}}
    tools = normalize_tool_definitions([openapi, bare])
    assert [tool.name for tool in tools] == ["countries_LookupByCurrency", "weather"]
    assert tools[0].parameters["properties"] == {"currency": {"type": "string"}}


def test_openai_style_tool_definitions():
    tools = normalize_tool_definitions([{"type": "function", "function": {"name": "f", "description": "d"}}])
    assert tools[0].name == "f" and tools[0].description == "d"
