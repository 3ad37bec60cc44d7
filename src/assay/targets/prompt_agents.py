"""Prompt agents, as Foundry's agents API makes them: ``agents.create_version(name,
definition=PromptAgentDefinition(model=..., instructions=...))``. A prompt agent is a model with its
instructions, its sampling and the function tools it may call; assay runs it as that model, the
instructions its system prompt, and records the calls it makes (a Foundry prompt agent hands
function calls back to its caller too)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.errors import ConfigError, invalid_settings
from assay.targets.base import TargetSpec

AgentLookup = Callable[[str, str | None], dict[str, Any] | None]
"""A project's prompt agent by name and version (the latest when None), as stored; None when it has none."""


class PromptAgent(BaseModel):
    """The part of Foundry's ``PromptAgentDefinition`` a run uses; other fields are kept as given."""

    model_config = ConfigDict(extra="allow")

    kind: Literal["prompt"]
    model: str = Field(min_length=1)
    instructions: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    tools: list[dict[str, Any]] = Field(default_factory=list)

    @classmethod
    def parse(cls, definition: Any, where: str = "definition") -> PromptAgent:
        """The definition a request gave, or a ``ConfigError`` naming the field to fix."""
        if not isinstance(definition, dict):
            raise ConfigError(f"{where} must be an object such as {{kind: prompt, model, instructions}}")
        if definition.get("kind") == "external":
            raise ConfigError(
                f"{where}: an external agent is registered, not run here (it runs where you host it)",
                hint="evaluate its traces (azure_ai_trace_data_source with its agent_name), or name its "
                "endpoint under agents: in --models to call it",
            )
        if definition.get("kind") != "prompt":
            raise ConfigError(
                f"{where}.kind: {definition.get('kind')!r} agents run where Foundry hosts them; assay runs "
                "prompt agents (kind: prompt, a model and its instructions)",
                hint="serve another agent yourself and name its endpoint under agents: in --models",
            )
        try:
            agent = cls.model_validate(definition)
        except ValidationError as exc:
            raise invalid_settings(where, exc) from None
        for index, tool in enumerate(agent.tools):
            if tool.get("type") != "function" or not tool.get("name"):
                raise ConfigError(
                    f"{where}.tools[{index}]: type {tool.get('type')!r} is a tool Foundry runs itself; a prompt "
                    "agent here declares function tools ({type: function, name, description, parameters})"
                )
        return agent

    @classmethod
    def found(cls, agents: AgentLookup, name: str, version: Any = None) -> PromptAgent | None:
        """The project's prompt agent ``name`` at ``version`` (else its latest); None when it has none."""
        row = agents(name, None if version is None else str(version))
        return None if row is None else cls.parse(row["body"]["definition"], f"agent {name}")

    def tool_descriptions(self) -> list[dict[str, Any]]:
        """Its function tools as ``{name, description, parameters}``."""
        return [{k: t[k] for k in ("name", "description", "parameters") if k in t} for t in self.tools]

    def function_tools(self) -> list[dict[str, Any]]:
        """The tools as chat completions takes them."""
        return [{"type": "function", "function": described} for described in self.tool_descriptions()]

    def responses_fields(self) -> dict[str, Any]:
        """What a Responses request to this agent sends its model (the request's own fields win)."""
        fields: dict[str, Any] = {"model": self.model, "instructions": self.instructions, "tools": self.tools or None}
        fields |= {"temperature": self.temperature, "top_p": self.top_p}
        return {key: value for key, value in fields.items() if value is not None}

    def target(self, input_messages: dict[str, Any] | None) -> TargetSpec:
        """The run target this agent is: its model, its instructions first, its sampling and tools."""
        sampling: dict[str, Any] = {
            name: value
            for name, value in (("temperature", self.temperature), ("top_p", self.top_p))
            if value is not None
        }
        if self.tools:
            sampling["tools"] = self.function_tools()
        return TargetSpec(
            kind="model",
            model=self.model,
            sampling_params=sampling,
            input_messages=input_messages,
            instructions=self.instructions or None,
            tool_descriptions=self.tool_descriptions(),  # what a simulated user or an attacker is told of
        )


def as_prompt_agent(spec: TargetSpec, agents: AgentLookup) -> TargetSpec:
    """An agent target the project made through the agents API, as that prompt agent (what wraps
    it, a simulated user or an attacker, kept); any other target as it is."""
    if spec.kind != "agent":
        return spec
    agent = PromptAgent.found(agents, spec.model or "", spec.version)
    if agent is None:
        return spec
    made = agent.target(spec.input_messages)
    return dataclasses.replace(
        made,
        simulation=spec.simulation,
        red_team=spec.red_team,
        tool_descriptions=spec.tool_descriptions or made.tool_descriptions,
    )
