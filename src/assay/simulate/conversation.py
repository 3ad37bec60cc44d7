"""One simulated conversation: the simulated user and a target take turns until the user stops,
``max_turns`` is reached, or either side fails. A turn is one user message and the target's whole
reply (its tool calls and their results included).

The target is any assay target (a model, an agent on the Responses or invocations protocol, a
Python callable), called with the whole conversation so far as ``messages`` (its tool calls and
their results included); the simulated user is shown only the text. The record keeps
everything the target did; ``termination_reason`` says how it ended: ``user_stop``, ``max_turns``,
``target_error`` or ``simulator_error`` (the turns so far are kept in each case).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.llm.tally import UsageTally
from assay.messages import is_tool_call_item, normalize
from assay.simulate.user import SimulatedUser, SimulatorError
from assay.targets import Target
from assay.targets.agents import PREVIOUS_RESPONSE

Termination = Literal["user_stop", "max_turns", "target_error", "simulator_error"]


@dataclass
class Conversation:
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Chat-completions messages: user, assistant (with ``tool_calls``), tool."""
    termination_reason: Termination = "max_turns"
    turns: int = 0
    error: dict[str, str] | None = None
    agent_usage: UsageTally = field(default_factory=UsageTally)
    """Every call the target made over the conversation."""


async def simulate(user: SimulatedUser, target: Target, max_turns: int) -> Conversation:
    conversation = Conversation()
    transcript: list[dict[str, Any]] = []  # the text both sides see
    previous: dict[str, Any] = {}
    for turn in range(max_turns):
        try:
            said = await user.next_turn(transcript)
        except SimulatorError as exc:
            return _ended(conversation, "simulator_error", {"code": exc.code, "message": str(exc)})
        if said.done:
            if not conversation.messages:
                error = {"code": "simulator_error", "message": "the simulated user stopped before saying anything"}
                return _ended(conversation, "simulator_error", error)
            return _ended(conversation, "user_stop")
        conversation.messages.append({"role": "user", "content": said.text})
        transcript.append({"role": "user", "content": said.text})
        conversation.turns = turn + 1
        # The agent gets its whole conversation so far, its own tool calls and their results
        # included (a stateful one only what is new, with its last reply's id); the simulated user
        # sees only the text, as a person would.
        sample = await target({"messages": list(conversation.messages), **previous})
        conversation.agent_usage.add_sample(sample)
        if sample.get("error"):
            error = sample["error"]
            message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
            failure = {"code": "target_error", "message": f"turn {turn + 1}: {message}"}
            return _ended(conversation, "target_error", failure)
        conversation.messages.extend(reply_messages(sample))
        transcript.append({"role": "assistant", "content": str(sample.get("output_text") or "")})
        previous = continued(sample, len(conversation.messages))
    return _ended(conversation, "max_turns")


def continued(sample: dict[str, Any], messages_sent: int) -> dict[str, Any]:
    """What the next turn's item carries for an agent that keeps its conversations: the reply's id
    and how many messages it holds (nothing when the reply had no id)."""
    reply_id = sample.get("response_id")
    return {PREVIOUS_RESPONSE: {"id": reply_id, "messages_sent": messages_sent}} if reply_id else {}


def _ended(conversation: Conversation, reason: Termination, error: dict[str, str] | None = None) -> Conversation:
    conversation.termination_reason = reason
    conversation.error = error
    return conversation


def reply_messages(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """The target's reply as chat messages: its tool calls (one assistant message per run of
    calls), the tool results, and its text."""
    out: list[dict[str, Any]] = []
    spoke = False

    def called(call_id: Any, name: Any, arguments: Any) -> None:
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": _text(arguments)}}
        if out and out[-1]["role"] == "assistant" and out[-1].get("tool_calls") and not out[-1]["content"]:
            out[-1]["tool_calls"].append(call)
        else:
            out.append({"role": "assistant", "content": None, "tool_calls": [call]})

    for entry in sample.get("output_items") or []:
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind == "function_call":
            called(entry.get("call_id"), entry.get("name"), entry.get("arguments"))
        elif is_tool_call_item(entry):  # a hosted tool's (a file search), with its results where the item holds them
            for message in normalize([entry], default_role="assistant"):
                for call in message.tool_calls:
                    called(call.id, call.name, call.arguments)
                for result in message.tool_results:
                    out.append({"role": "tool", "tool_call_id": result.tool_call_id, "content": _text(result.result)})
        elif kind == "function_call_output":
            out.append({"role": "tool", "tool_call_id": entry.get("call_id"), "content": _text(entry.get("output"))})
        elif kind == "message":
            parts = entry.get("content") or []
            text = "".join(p.get("text", "") for p in parts if isinstance(p, dict)) if isinstance(parts, list) else ""
            out.append({"role": "assistant", "content": text or _text(parts)})
            spoke = True
    if not spoke:
        out.append({"role": "assistant", "content": str(sample.get("output_text") or "")})
    return out


def transcript(messages: list[dict[str, Any]]) -> str:
    """The spoken turns as ``ROLE: text`` lines (tool calls and results left out): what an attacker reads."""
    return "\n".join(
        f"{m['role'].upper()}: {m['content']}"
        for m in messages
        if m["role"] in ("user", "assistant") and m.get("content")
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
