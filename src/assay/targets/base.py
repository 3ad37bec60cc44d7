"""The target protocol and the built-in targets: a configured model, or a Python callable.

A target takes an item and the messages to send and returns a sample:
``{output_text, output_items, output_tools, output_json, usage, latency_ms, model, error}``.
A failure on one item is that item's sample ``error``; the run goes on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from assay.errors import ConfigError, Filtered, ItemError
from assay.llm import ContentFiltered, Model, ModelError, ModelRegistry
from assay.llm.config import list_price
from assay.messages import normalize_tool_definitions
from assay.targets.agents import AgentTarget, find_agent
from assay.targets.loop import DEFAULT_MAX_TOOL_ROUNDS, loop_sample, run_loop
from assay.targets.messages import InputMessages
from assay.targets.retrieval import SUPPLIED_FIELDS, Lookup, ResponseRetrieval
from assay.targets.spans import model_span, now_ms
from assay.targets.tools import ToolTimeouts, open_tools

if TYPE_CHECKING:
    from assay.redteam.settings import RedTeamSettings
    from assay.simulate.settings import SimulationSettings

Target = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
TRIAL: ContextVar[int | None] = ContextVar("assay_trial", default=None)
"""Which of its trials the target is asked for, in a run with target repeats (``assay.run.trials``):
a model target offsets its ``seed`` by it, a Python target gets it as ``trial`` when it takes one."""
SAMPLING_KEYS = {
    "temperature",
    "top_p",
    "seed",
    "max_completion_tokens",
    "max_tokens",
    "response_format",
    "tools",
    "reasoning_effort",
    "logprobs",
    "top_logprobs",
    "functions",
    "function_call",
}


@dataclass
class TargetSpec:
    """What generates samples for a run: a named model (with sampling parameters), an agent, a
    callable, or stored responses looked up by id."""

    kind: Literal["model", "callable", "agent", "responses", "echo"]
    model: str | None = None
    """The model's name, or the agent's name for an agent target."""
    version: str | None = None
    """An agent's version; the highest configured when not given."""
    sampling_params: dict[str, Any] = field(default_factory=dict)
    input_messages: dict[str, Any] | None = None
    function: Callable[..., Any] | None = None
    tool_descriptions: list[dict[str, Any]] = field(default_factory=list)
    """An agent's tools, passed on to tool evaluators as ``{{sample.tool_definitions}}``."""
    data_mapping: dict[str, Any] = field(default_factory=dict)
    """For stored responses: ``{response_id: "{{item.resp_id}}"}``."""
    max_num_turns: int | None = None
    lookup: Lookup | None = None
    """For stored responses: how to find one by id (the store, for the run's project)."""
    simulation: SimulationSettings | None = None
    """Set when a simulated user talks to this target: each item is a scenario, and the
    conversation played out becomes the item's ``messages`` (``assay.simulate``)."""
    red_team: RedTeamSettings | None = None
    """Set when each item is an attack to play against this target (``assay.redteam``)."""
    instructions: str | None = None
    """A model target's system prompt, sent before the item's messages: with ``sampling_params.tools``
    it makes the model a prompt agent (azd's ``.agent_configs``)."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """A model target's tool sources (``assay.targets.tools``): with them it runs as an agent, its
    tool calls executed and their results sent back until it answers."""
    tool_sets: list[str] = field(default_factory=list)
    """Tool sets the operator configured, by name: all a request over the API may give."""
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS
    """The most rounds of tool calls one item's loop makes before it stops."""
    tool_timeouts: ToolTimeouts = field(default_factory=ToolTimeouts)
    """How long one tool call may take (``tool_timeout_s``) before the model is told it timed out."""
    candidate: dict[str, Any] | None = None
    """An agent scored as an optimizer's candidate: its configuration (Foundry's JSON), sent with
    each request (``assay.targets.agents``)."""
    endpoint: str | None = None
    """An agent's endpoint in place of the configured one (an agent assay started itself)."""

    @property
    def supplied_fields(self) -> frozenset[str]:
        """Item fields the target adds to every item (stored responses carry their conversation);
        a generator wrapping the target adds its own (``assay.run.targets.supplied_fields``)."""
        return SUPPLIED_FIELDS if self.kind == "responses" else frozenset()


def build_target(spec: TargetSpec, models: ModelRegistry | None) -> Target:
    if spec.simulation is not None or spec.red_team is not None:
        raise ConfigError(
            "a simulated user or an attacker wraps a target from outside: build it with assay.run.targets"
        )
    if spec.kind == "responses":
        if spec.lookup is None:
            raise ConfigError("stored responses can only be evaluated where they were captured (assay serve)")
        return ResponseRetrieval(spec.lookup, spec.data_mapping, spec.max_num_turns)
    if spec.kind == "agent":
        agents = models.agents if models is not None else []
        agent = find_agent(agents, spec.model or "", spec.version)
        if spec.endpoint is not None:
            agent = agent.model_copy(update={"endpoint": spec.endpoint, "command": None})
        elif agent.command:
            raise ConfigError(
                f"agent {agent.name}: assay starts an agent from its command only for assay optimize",
                hint="start it yourself and give agents: a fixed endpoint to run it otherwise",
            )
        if agent.protocol == "a2a":
            from assay.targets.a2a import A2ATarget

            return A2ATarget(agent, spec.input_messages)
        tools = spec.tool_descriptions or agent.tool_descriptions
        return AgentTarget(agent, spec.input_messages, tools, candidate=spec.candidate)
    inputs = InputMessages(spec.input_messages)
    if spec.kind == "echo":
        return _echo_target(inputs)
    if spec.kind == "callable":
        if spec.function is None:
            raise ConfigError("a callable target needs a function")
        return _callable_target(spec.function, inputs)
    unknown = set(spec.sampling_params) - SAMPLING_KEYS
    if unknown:
        raise ConfigError(
            f"sampling_params: unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(SAMPLING_KEYS))})"
        )
    model = (models or ModelRegistry()).get(spec.model)
    model.check_credentials()
    if spec.tools or spec.tool_sets:
        configured = models.tool_sets if models is not None else {}
        missing = [name for name in spec.tool_sets if name not in configured]
        if missing:
            raise ConfigError(
                f"target.tools: no tool set {missing[0]!r} is configured here",
                hint="the server's --models file names its tool sets under tools:",
            )
        named = [source for name in spec.tool_sets for source in configured[name]]
        return AgentLoop(model, dataclasses.replace(spec, tools=[*spec.tools, *named]), inputs)
    return _model_target(model, spec.sampling_params, inputs, spec.instructions)


class AgentLoop:
    """A model target with tools, run as an agent (``assay.targets.loop``); its tools' servers
    are closed with the run."""

    def __init__(self, model: Model, spec: TargetSpec, inputs: InputMessages) -> None:
        self.model, self.inputs, self.instructions = model, inputs, spec.instructions
        self.params = _sampling(spec.sampling_params)
        self.tools = open_tools(spec.tools, spec.tool_timeouts)
        self.max_rounds = spec.max_tool_rounds

    async def __call__(self, item: dict[str, Any]) -> dict[str, Any]:
        messages = self.inputs.render(item)
        if self.instructions:
            messages = [{"role": "system", "content": self.instructions}, *messages]
        started = time.perf_counter()
        try:
            trajectory = await run_loop(self.model, self.tools, messages, trial_params(self.params), self.max_rounds)
        except ContentFiltered as exc:
            return _filtered(messages, exc, started)
        except ModelError as exc:
            return _failed(messages, str(exc), "target_error", started)
        return loop_sample(trajectory, messages, started)

    async def ready(self) -> None:
        """Open the tools before the first item (a run's pre-flight): one that cannot be opened is
        the run's error, said once, not every item's."""
        await self.tools.ready()

    async def aclose(self) -> None:
        await self.tools.aclose()


def _sampling(sampling: dict[str, Any]) -> dict[str, Any]:
    params = dict(sampling)
    if "max_completion_tokens" in params:
        params["max_tokens"] = params.pop("max_completion_tokens")
    return params


def _declared_functions(tools: Any) -> list[dict[str, Any]]:
    """The function tools a model target may call (a prompt agent's), as the tool evaluators read
    them from ``{{sample.tool_definitions}}``; other kinds of tool are the provider's business."""
    functions = [
        tool
        for tool in (tools if isinstance(tools, list) else [])
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict) and tool["function"].get("name")
    ]
    return [dataclasses.asdict(tool) for tool in normalize_tool_definitions(functions)]


def _model_target(model: Model, sampling: dict[str, Any], inputs: InputMessages, instructions: str | None) -> Target:
    params = _sampling(sampling)
    wants_json = (params.get("response_format") or {}).get("type") in ("json_object", "json_schema")
    tool_definitions = _declared_functions(params.get("tools"))

    async def generate(item: dict[str, Any]) -> dict[str, Any]:
        messages = inputs.render(item)
        if instructions:
            messages = [{"role": "system", "content": instructions}, *messages]
        started, started_ms = time.perf_counter(), now_ms()
        try:
            completion = await model.generate(messages, **trial_params(params))
        except ContentFiltered as exc:
            return _filtered(messages, exc, started)
        except ModelError as exc:
            return _failed(messages, str(exc), "target_error", started)
        tools = completion.tool_calls
        output_items: list[dict[str, Any]] = [
            {
                "type": "function_call",
                "call_id": c.get("id"),
                "name": (c.get("function") or {}).get("name"),
                "arguments": (c.get("function") or {}).get("arguments"),
            }
            for c in tools
        ]
        if completion.text:
            output_items.append(
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": completion.text}]}
            )
        sample: dict[str, Any] = {
            "input": messages,
            "output_text": completion.text,
            "output_items": output_items,
            "output_tools": tools,
            "model": completion.model,
            "finish_reason": completion.finish_reason,
            "usage": dataclasses.asdict(completion.usage),
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
            "cached": completion.cached,
            "cost": _cost(model, completion.usage.prompt_tokens, completion.usage.completion_tokens),
            "spans": [model_span(model.config.model, started_ms)],
            "error": None,
        }
        if tool_definitions:
            sample["tool_definitions"] = tool_definitions
        if completion.refusal is not None:  # the model refused: its answer (output_text) is why
            sample["refusal"] = completion.refusal
        if completion.logprobs is not None:  # asked for (logprobs: true): promptfoo's perplexity reads them
            sample["logprobs"] = completion.logprobs
        if completion.function_call is not None:  # the legacy functions API (a request with functions)
            call = completion.function_call
            sample["function_call"] = call
            output_items.insert(
                0,
                {
                    "type": "function_call",
                    "call_id": None,
                    "name": call.get("name"),
                    "arguments": call.get("arguments"),
                },
            )
        if wants_json:
            try:
                sample["output_json"] = json.loads(completion.text)
            except ValueError:
                sample["output_json"] = None
        return sample

    return generate


def _cost(model: Model, prompt_tokens: int, completion_tokens: int) -> float | None:
    price = model.config.price or list_price(model.config.model)
    return None if price is None else price.cost(prompt_tokens, completion_tokens)


def _echo_target(inputs: InputMessages) -> Target:
    """Answers with what it was sent: one message's text, or the messages as JSON (promptfoo's
    ``echo`` provider, for checking prompts and assertions without a model)."""

    async def generate(item: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            messages = inputs.render(item)
        except ItemError as exc:
            return _failed([], str(exc), "target_error", started)
        only = messages[0].get("content") if len(messages) == 1 else None
        text = only if isinstance(only, str) else json.dumps(messages, ensure_ascii=False)
        return {
            "input": messages,
            "output_text": text,
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            "cost": 0.0,
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
            "error": None,
        }

    return generate


def _callable_target(function: Callable[..., Any], inputs: InputMessages) -> Target:
    """A Python function: ``f(item)``, or, as azure-ai-evaluation calls targets, ``f(query=...)`` by name."""
    is_async = inspect.iscoroutinefunction(function)
    names = list(inspect.signature(function).parameters)
    whole_item = names == ["item"]

    def call(item: dict[str, Any], trial: int | None) -> Any:
        if whole_item:
            return function(item)
        given = {n: item[n] for n in names if n in item}
        if "trial" in names and trial is not None:
            given["trial"] = trial
        return function(**given)

    async def generate(item: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        messages: list[dict[str, Any]] = []
        try:
            if item.get("messages") is not None or item.get("query") is not None:
                messages = inputs.render(item)
            trial = TRIAL.get()
            output = await call(item, trial) if is_async else await asyncio.to_thread(call, item, trial)
        except Exception as exc:  # noqa: BLE001 - the target failing on one item is that item's sample error
            return _failed(messages, f"{type(exc).__name__}: {exc}", "target_error", started)
        sample: dict[str, Any] = {
            "input": messages,
            "error": None,
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
        }
        if isinstance(output, dict):
            sample.update(output)
            sample.setdefault("output_text", str(output.get("response", "")))
        else:
            sample["output_text"] = "" if output is None else str(output)
        return sample

    return generate


def trial_params(params: dict[str, Any]) -> dict[str, Any]:
    """The sampling parameters of this trial: its own seed, so each trial is a sample of its own
    (and the model-call cache keeps each); the first trial is sent as it would be without repeats."""
    trial = TRIAL.get()
    if not trial:
        return params
    return {**params, "seed": int(params.get("seed") or 0) + trial}


def _failed(messages: list[dict[str, Any]], message: str, code: str, started: float) -> dict[str, Any]:
    return {
        "input": messages,
        "output_text": None,
        "error": {"code": code, "message": message},
        "latency_ms": round((time.perf_counter() - started) * 1000, 1),
    }


def _filtered(messages: list[dict[str, Any]], exc: ContentFiltered, started: float) -> dict[str, Any]:
    """The sample of a target call the provider's content filter stopped: what it wrote before the
    cut (if anything) and the filter's verdicts, under ``filtered``."""
    return {
        "input": messages,
        "output_text": exc.text or None,
        "filtered": exc.as_dict(),
        "latency_ms": round((time.perf_counter() - started) * 1000, 1),
    }


def target_failed(sample: dict[str, Any] | None) -> ItemError | None:
    """Why the item has no sample to judge: the target failed, or its call was filtered."""
    if sample and sample.get("error"):
        return ItemError(f"no sample to evaluate: the target failed ({sample['error'].get('message')})")
    if sample and isinstance(sample.get("filtered"), dict):
        shown = ", ".join(sample["filtered"].get("filtered") or []) or "no category named"
        stage = sample["filtered"].get("stage", "answer")
        message = f"the target's {stage} was filtered by the provider's content filter ({shown})"
        return Filtered(message, details={"content_filter": sample["filtered"]})
    return None
