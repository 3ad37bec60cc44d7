"""A conversation item as a chat transcript for the web UI: one entry per message, tool calls and
their results folded under the assistant turn that made them, and how the conversation ended."""

from __future__ import annotations

import json
from typing import Any

from assay.messages import MessageFormatError, normalize

MAX_SHOWN = 4000


def transcript(item: dict[str, Any]) -> dict[str, Any] | None:
    """``{messages: [{role, text, calls, results}], ended}`` for an item holding ``messages``, else None."""
    raw = item.get("messages")
    if not isinstance(raw, list) or not raw:
        return None
    try:
        messages = normalize(raw, where="messages")
    except MessageFormatError:
        return None
    shown: list[dict[str, Any]] = []
    for message in messages:
        results = [_text(r.result) for r in message.tool_results]
        if message.role == "tool" and shown and shown[-1]["role"] == "assistant":
            shown[-1]["results"].extend(results)  # folded under the call that asked for it
            continue
        calls = [f"{c.name}({_text(c.arguments)})" for c in message.tool_calls]
        shown.append({"role": message.role, "text": _clip(message.text), "calls": calls, "results": results})
    ended = item.get("termination_reason")
    answers = [m["text"] for m in shown if m["role"] == "assistant" and m["text"]]
    return {
        "messages": shown,
        "ended": ended if isinstance(ended, str) else None,
        "count": len(messages),
        "final": answers[-1] if answers else None,
    }


def _text(value: Any) -> str:
    return _clip(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _clip(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def exchange(item: dict[str, Any], sample: dict[str, Any] | None) -> dict[str, Any]:
    """What an item asked and what came back, for a reader: ``{asked, steps, answer}``. ``steps`` are an
    agent's tool calls with their results (``{name, arguments, result}``), from the sample's
    ``output_items`` (Responses shape) or the item's own ``tool_calls``; ``answer`` the final text."""
    sample = sample or {}
    asked = next((item[k] for k in ("query", "question", "input", "prompt") if isinstance(item.get(k), str)), None)
    if asked is None:
        chat = transcript(item)
        users = [m["text"] for m in (chat or {}).get("messages", []) if m["role"] == "user"]
        asked = users[-1] if users else json.dumps(item, ensure_ascii=False, default=str)
    outputs = sample.get("output_items") if isinstance(sample.get("output_items"), list) else None
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    for entry in outputs or _item_calls(item):
        if not isinstance(entry, dict):
            continue
        if entry.get("type") == "tool_result" and "role" not in entry:  # an item's own call's result
            entry = {"role": "tool", "content": [entry]}
        try:  # every shape of call the messages module reads: functions', hosted tools' (a file search)
            said = normalize([entry], default_role="assistant", where="output_items")
        except MessageFormatError:
            continue
        for message in said:
            for call in message.tool_calls:
                arguments = entry.get("arguments") if isinstance(entry.get("arguments"), str) else call.arguments
                step = {"name": call.name, "arguments": _text(arguments or ""), "result": None}
                steps.append(step)
                by_call[str(call.id or len(by_call))] = step
            for result in message.tool_results:
                found = by_call.get(str(result.tool_call_id))
                if found is not None:
                    found["result"] = _text("" if result.result is None else result.result)
    answer = sample.get("output_text")
    if not isinstance(answer, str) or not answer:
        answer = item.get("response") if isinstance(item.get("response"), str) else None
    return {"asked": _clip(str(asked)), "steps": steps, "answer": None if answer is None else _clip(answer)}


def _item_calls(item: dict[str, Any]) -> list[Any]:
    calls = item.get("tool_calls")
    return calls if isinstance(calls, list) else []
