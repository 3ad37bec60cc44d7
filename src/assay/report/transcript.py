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
    return {"messages": shown, "ended": ended if isinstance(ended, str) else None, "count": len(messages)}


def _text(value: Any) -> str:
    return _clip(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _clip(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"
