"""The agent loop of a model target with tools: call the model, run the tool calls it makes, send
back their results, until it answers without a call or ``max_tool_rounds`` is reached. Every call
and result is kept in the sample's ``output_items`` (Responses shape), so tool evaluators and
``{{sample.output_items}}`` see the whole trajectory."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from assay.errors import ConfigError
from assay.llm import Model, ModelError
from assay.llm.model import Completion
from assay.targets.spans import model_span, now_ms, tool_span
from assay.targets.tools import ToolSet

DEFAULT_MAX_TOOL_ROUNDS = 8


@dataclass
class Trajectory:
    """What one item's loop did: the conversation as sent, the items a Responses API would list,
    and the usage of every model call."""

    conversation: list[dict[str, Any]]
    output_items: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    cache_hits: int = 0
    last: Completion | None = None
    stopped: str | None = None
    offered: list[dict[str, Any]] = field(default_factory=list)
    """The tools the model was offered, as chat completions takes them."""
    spans: list[dict[str, Any]] = field(default_factory=list)
    """Each model call and tool run, timed (``assay.targets.spans``)."""

    def add(self, completion: Completion) -> None:
        self.last = completion
        self.calls += 1
        self.cache_hits += int(completion.cached)
        for key, value in dataclasses.asdict(completion.usage).items():
            self.usage[key] = self.usage.get(key, 0) + int(value)


async def run_loop(
    model: Model,
    tools: ToolSet,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    max_rounds: int,
) -> Trajectory:
    """The loop for one item; a model error ends it (the caller makes it the item's error)."""
    try:
        await tools.ready()
    except ConfigError as exc:
        raise ModelError(f"the target's tools could not be opened: {exc.message}") from None
    described = params.get("tools") or []  # tools.json's descriptions (an optimizer may rewrite them) come first
    named = {(t.get("function") or {}).get("name") for t in described if isinstance(t, dict)}
    offered = [*described, *(t for t in tools.definitions() if t["function"]["name"] not in named)]
    params = {**params, "tools": offered}
    trajectory = Trajectory(list(messages), offered=offered)
    for round_ in range(max_rounds + 1):
        started = now_ms()
        completion = await model.generate(trajectory.conversation, **params)
        trajectory.spans.append(model_span(model.config.model, started))
        trajectory.add(completion)
        if not completion.tool_calls:
            break
        if round_ == max_rounds:
            trajectory.stopped = "max_tool_rounds"
            trajectory.output_items.extend(_call_item(call) for call in completion.tool_calls)
            trajectory.tool_calls.extend(completion.tool_calls)
            break
        trajectory.conversation.append(
            {"role": "assistant", "content": completion.text or None, "tool_calls": completion.tool_calls}
        )
        for call in completion.tool_calls:
            function = call.get("function") or {}
            name, arguments, started = str(function.get("name")), function.get("arguments") or "{}", now_ms()
            done = await tools.call(str(call.get("id")), name, arguments)
            trajectory.spans.append(tool_span(name, done.call_id, arguments, started, error=done.error))
            trajectory.tool_calls.append(call)
            trajectory.output_items.append(_call_item(call))
            output: dict[str, Any] = {"type": "function_call_output", "call_id": done.call_id, "output": done.output}
            if done.error is not None:
                output["error"] = done.error
            trajectory.output_items.append(output)
            trajectory.conversation.append({"role": "tool", "tool_call_id": done.call_id, "content": done.output})
    assert trajectory.last is not None
    if trajectory.last.text:
        trajectory.output_items.append(
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": trajectory.last.text}]}
        )
    return trajectory


def _call_item(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    return {
        "type": "function_call",
        "call_id": call.get("id"),
        "name": function.get("name"),
        "arguments": function.get("arguments"),
    }


def loop_sample(trajectory: Trajectory, messages: list[dict[str, Any]], started: float) -> dict[str, Any]:
    """The sample of one item's loop."""
    last = trajectory.last
    assert last is not None
    return {
        "input": messages,
        "output_text": last.text,
        "output_items": trajectory.output_items,
        "output_tools": trajectory.tool_calls,
        # What tool evaluators read as tool_definitions: {name, description, parameters}.
        "tool_definitions": [dict(t.get("function") or {}) for t in trajectory.offered],
        "model": last.model,
        "finish_reason": trajectory.stopped or last.finish_reason,
        "usage": trajectory.usage,
        "calls": trajectory.calls - trajectory.cache_hits,  # made; the cache answered the rest
        "cache_hits": trajectory.cache_hits,
        "latency_ms": round((time.perf_counter() - started) * 1000, 1),
        "cached": trajectory.calls == trajectory.cache_hits,
        "spans": trajectory.spans,
        "error": None,
    }
