"""``azure_ai_responses``: evaluate responses the capture pass-through stored, looked up by id.

Nothing is generated. For each item the ``response_retrieval`` mapping names a response id
(``{response_id: "{{item.resp_id}}"}``); the stored call gives the sample (``output_text``,
``output_items``) and the item fields a judge needs (``query``, ``response``, ``messages``,
``tool_calls``, ``tool_definitions``). A Responses call made with ``previous_response_id`` brings
the earlier turns along, up to ``max_num_turns``. An id nobody captured fails that item only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from assay.errors import ItemError
from assay.mapping import Template
from assay.messages import (
    MessageFormatError,
    defined_once,
    is_tool_call_item,
    listed_tools,
    normalize,
    normalize_tool_definitions,
    turn_fields,
)

Lookup = Callable[[str], dict[str, Any] | None]
"""Response id → ``{api, request, response}`` as the store keeps it, or None."""
SUPPLIED_FIELDS = frozenset({"query", "response", "messages", "tool_calls", "tool_definitions"})
DEFAULT_MAX_TURNS = 20


class ResponseRetrieval:
    def __init__(self, lookup: Lookup, data_mapping: dict[str, Any], max_num_turns: int | None = None) -> None:
        self.lookup = lookup
        self.response_id = Template(data_mapping.get("response_id"), "item_generation_params.data_mapping.response_id")
        self.max_turns = max_num_turns or DEFAULT_MAX_TURNS

    async def __call__(self, item: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            response_id = str(self.response_id.render(item, None))
            found = await asyncio.to_thread(self.lookup, response_id)
            if found is None:
                raise ItemError(f"no response with id {response_id!r} was captured (see the capture pass-through)")
            earlier = await asyncio.to_thread(self._earlier_turns, found)
            sample = stored_sample(found, earlier)
        except (ItemError, MessageFormatError) as exc:
            error = {"code": "response_retrieval_error", "message": str(exc)}
            return {"output_text": None, "error": error, "latency_ms": _since(started)}
        sample["latency_ms"] = _since(started)
        return sample

    def _earlier_turns(self, found: dict[str, Any]) -> list[dict[str, Any]]:
        """The stored calls before this one, oldest first, following ``previous_response_id``."""
        chain: list[dict[str, Any]] = []
        previous = found["request"].get("previous_response_id")
        while previous and len(chain) < self.max_turns - 1:
            earlier = self.lookup(str(previous))
            if earlier is None:
                break
            chain.insert(0, earlier)
            previous = earlier["request"].get("previous_response_id")
        return chain


def stored_sample(found: dict[str, Any], earlier: list[dict[str, Any]]) -> dict[str, Any]:
    """The sample of one stored call, with the conversation it belongs to under ``item_fields``."""
    request, response = found["request"], found["response"]
    history: list[Any] = []
    for turn in earlier:
        history += _request_messages(turn["request"]) + _output_items(turn)
    query = normalize(history + _request_messages(request), where=f"response {response.get('id')}: input")
    output_items = _output_items(found)
    answer = normalize(output_items, default_role="assistant", where=f"response {response.get('id')}: output")
    requested = normalize_tool_definitions(request.get("tools"), where=f"response {response.get('id')}: tools")
    tools = defined_once(requested, listed_tools(history + output_items))  # and an MCP server's, as it listed them
    return {
        "output_text": "\n".join(m.text for m in answer if m.role == "assistant" and m.text),
        "output_items": output_items,
        "output_tools": [o for o in output_items if is_tool_call_item(o)],
        "model": response.get("model"),
        "usage": response.get("usage"),
        "response_id": response.get("id"),
        "error": None,
        "item_fields": turn_fields(query, answer, tools),
    }


def _request_messages(request: dict[str, Any]) -> list[Any]:
    if "messages" in request:  # chat completions
        return list(request["messages"] or [])
    messages: list[Any] = []
    if request.get("instructions"):
        messages.append({"role": "system", "content": str(request["instructions"])})
    raw = request.get("input")
    if isinstance(raw, str):
        messages.append({"role": "user", "content": raw})
    elif isinstance(raw, list):
        messages += raw  # every item: the messages module keeps what a conversation shows
    return messages


def _output_items(found: dict[str, Any]) -> list[dict[str, Any]]:
    """Responses-style output items; a chat completion's message is converted to them."""
    response = found["response"]
    if found["api"] == "responses":
        return list(response.get("output") or [])
    message = ((response.get("choices") or [{}])[0]).get("message") or {}
    items: list[dict[str, Any]] = [
        {
            "type": "function_call",
            "call_id": call.get("id"),
            "name": (call.get("function") or {}).get("name"),
            "arguments": (call.get("function") or {}).get("arguments"),
        }
        for call in message.get("tool_calls") or []
    ]
    if message.get("content"):
        items.append(
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": message["content"]}]}
        )
    return items


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
