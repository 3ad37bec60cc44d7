"""Spans → evaluation items: each agent span is a turn; turns sharing a conversation id are a conversation.

A turn's messages come from the agent span itself, or, when it carries none, from the last model
call under it (whose input holds the turn's history). System instructions come first; the split
is at the last user message (query = up to and including it, response = the rest). A tool call
with no result in the messages is paired with a child ``execute_tool`` span by call id, else by
tool name in order. What would make a turn a poor test case is kept in ``problems`` for the
sampler's hard filters; conversion itself never drops anything.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from assay.messages import (
    Message,
    MessageFormatError,
    ToolResult,
    maybe_json,
    normalize,
    normalize_tool_definitions,
    split_turn,
    to_dicts,
    tool_calls,
    turn_fields,
)
from assay.traces.dialects import Exchange, read_exchange
from assay.traces.spans import Span

MODEL_OPERATIONS = {"chat", "text_completion", "generate_content", "LLM"}
BAD_FINISH = {"error", "length", "content_filter"}


@dataclass
class Turn:
    span: Span
    messages: list[Message]
    tools: list[dict[str, Any]]
    problems: list[str] = field(default_factory=list)

    @property
    def user_text(self) -> str:
        users = [m.text for m in self.messages if m.role == "user"]
        return users[-1] if users else ""

    @property
    def agent_id(self) -> str | None:
        name, version = self.span.agent_name, self.span.agent_version
        return None if name is None else f"{name}:{version}" if version else name

    def item(self) -> dict[str, Any]:
        """The turn-level item: query, response, tool_calls, tool_definitions (and messages)."""
        query, response = split_turn(self.messages)
        definitions = normalize_tool_definitions(self.tools)
        fields = turn_fields(query, response, definitions)
        return {**fields, **self._where()}

    def _where(self) -> dict[str, Any]:
        return {
            "trace_id": self.span.trace_id,
            "span_id": self.span.span_id,
            "conversation_id": self.span.conversation_id,
            "agent_id": self.agent_id,
        }


@dataclass
class Conversation:
    key: str
    turns: list[Turn]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The turns concatenated, dropping history a later turn repeats."""
        merged: list[dict[str, Any]] = []
        for turn in self.turns:
            instructions = ("system", "developer")
            current = [m for m in to_dicts(turn.messages) if m["role"] not in instructions or m not in merged]
            merged += current[_repeated_history(merged, current) :]
        return merged

    @property
    def problems(self) -> list[str]:
        return sorted({p for turn in self.turns for p in turn.problems})

    @property
    def user_text(self) -> str:
        return "\n".join(t.user_text for t in self.turns if t.user_text)

    def item(self) -> dict[str, Any]:
        tools: dict[str, dict[str, Any]] = {}
        for turn in self.turns:
            for tool in turn.tools:
                tools.setdefault(tool["name"], tool)
        first = self.turns[0]
        return {
            "messages": self.messages,
            "tool_definitions": list(tools.values()),
            "conversation_id": first.span.conversation_id or self.key,
            "agent_id": first.agent_id,
            "trace_ids": list(dict.fromkeys(t.span.trace_id for t in self.turns)),
        }


def is_agent_span(span: Span) -> bool:
    return span.operation == "invoke_agent"


def turns_of(spans: list[Span], agent_name: str | None = None, agent_version: str | None = None) -> list[Turn]:
    """Every agent span of these spans (one or more traces) as a turn, in start order."""
    by_id = {s.span_id: s for s in spans}
    children: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        if span.parent_span_id:
            children[span.parent_span_id].append(span)
    turns = []
    for span in sorted(spans, key=lambda s: s.start_ns):
        if not is_agent_span(span):
            continue
        if agent_name is not None and span.agent_name != agent_name:
            continue
        if agent_version is not None and span.agent_version != agent_version:
            continue
        turns.append(_turn(span, _descendants(span, children), by_id))
    return turns


def conversations_of(turns: list[Turn]) -> list[Conversation]:
    """Turns grouped by conversation id (a turn without one is a conversation of its own trace)."""
    groups: dict[str, list[Turn]] = {}
    for turn in turns:
        groups.setdefault(turn.span.conversation_id or f"trace:{turn.span.trace_id}", []).append(turn)
    return [Conversation(key, sorted(group, key=turn_order)) for key, group in groups.items()]


def turn_order(turn: Turn) -> tuple[int, str, str]:
    """Start time, with ids to break ties, so the same turns always come in the same order."""
    return turn.span.start_ns, turn.span.trace_id, turn.span.span_id


def _turn(span: Span, below: list[Span], by_id: dict[str, Span]) -> Turn:
    exchange = read_exchange(span)
    problems = list(exchange.problems)
    # Spans below are read only when the agent span lacks messages or tool definitions, and once each.
    read = {s.span_id: read_exchange(s) for s in below} if exchange.empty or not exchange.tools else {}
    if exchange.empty:
        model_calls = [
            s for s in below if s.operation in MODEL_OPERATIONS or s.attributes.get("openinference.span.kind") == "LLM"
        ]
        for call in sorted(model_calls, key=lambda s: s.end_ns, reverse=True):
            found = read[call.span_id]
            problems += found.problems
            if not found.empty:
                exchange.inputs, exchange.outputs = found.inputs, found.outputs
                exchange.finish_reasons, exchange.tools = found.finish_reasons, exchange.tools or found.tools
                break
    if not exchange.tools:
        exchange.tools = next((found.tools for found in read.values() if found.tools), [])
    try:
        messages = normalize(exchange.inputs + exchange.outputs, where=f"span {span.span_id}")
    except MessageFormatError as exc:
        messages, problems = [], [*problems, f"unreadable messages: {exc}"]
    messages = _pair_tool_results(messages, [s for s in below if s.operation == "execute_tool"])
    problems += _problems(span, exchange, messages, by_id)
    tools = exchange.tools or [{"name": c.name, "description": "", "parameters": {}} for c in tool_calls(messages)]
    return Turn(span, messages, _unique_tools(tools), problems)


def _pair_tool_results(messages: list[Message], tool_spans: list[Span]) -> list[Message]:
    """Add the result of each call the messages leave unanswered, from its ``execute_tool`` span."""
    answered = {r.tool_call_id for m in messages for r in m.tool_results}
    spans = sorted(tool_spans, key=lambda s: s.start_ns)
    out: list[Message] = []
    for message in messages:
        out.append(message)
        for call in message.tool_calls:
            if call.id in answered:
                continue
            match = next((s for s in spans if call.id and s.attributes.get("gen_ai.tool.call.id") == call.id), None)
            match = match or next((s for s in spans if s.attributes.get("gen_ai.tool.name") == call.name), None)
            if match is not None and "gen_ai.tool.call.result" in match.attributes:
                spans.remove(match)
                result = maybe_json(match.attributes["gen_ai.tool.call.result"])
                out.append(Message("tool", [ToolResult(call.id, result)], tool_call_id=call.id))
                answered.add(call.id)
    return out


def _problems(span: Span, exchange: Exchange, messages: list[Message], by_id: dict[str, Span]) -> list[str]:
    problems = []
    if span.parent_span_id and span.parent_span_id not in by_id:
        problems.append("orphan: the agent span's parent is not in the trace")
    if span.failed:
        problems.append(f"error status: {span.status_message or span.attributes.get('error.type') or 'error'}")
    if set(exchange.finish_reasons) & BAD_FINISH:
        problems.append(f"finish_reason {sorted(set(exchange.finish_reasons) & BAD_FINISH)[0]}")
    if span.dropped_attributes:
        problems.append(f"truncated: {span.dropped_attributes} attributes dropped")
    _, response = split_turn(messages)
    if not any(m.role == "assistant" and (m.text.strip() or m.tool_calls) for m in response):
        problems.append("no output")
    answered = {r.tool_call_id for m in messages for r in m.tool_results}
    for call in tool_calls(messages):
        if not call.name or call.arguments is None or isinstance(call.arguments, str):
            problems.append(f"malformed tool call {call.name or '(no name)'}")
        elif call.id not in answered:
            problems.append(f"unanswered tool call {call.name}")
    return problems


def _descendants(span: Span, children: dict[str, list[Span]]) -> list[Span]:
    found, stack = [], list(children.get(span.span_id, []))
    while stack:
        child = stack.pop()
        found.append(child)
        stack += children.get(child.span_id, [])
    return found


def _repeated_history(merged: list[dict[str, Any]], new: list[dict[str, Any]]) -> int:
    """How many of ``new``'s first messages are history already in ``merged`` (in order, possibly
    with gaps: an application often resends its chat history without the tool round trips)."""
    position = 0
    for count, message in enumerate(new):
        try:
            position = merged.index(message, position) + 1
        except ValueError:
            return count
    return len(new)


def _unique_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list({tool["name"]: tool for tool in tools}.values())
