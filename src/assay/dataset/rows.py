"""Typed views of the special row shapes: simulation seeds and optimizer tasks."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class SimulationSeed(BaseModel):
    """A scenario the simulated user plays (seed 000, "Simulación de conversación")."""

    model_config = ConfigDict(extra="allow")

    id: str | int | None = None
    test_case_description: str = Field(min_length=1)
    """What the simulated user wants and how it behaves; the only required field."""
    desired_num_turns: int | None = Field(default=None, ge=1)


class TaskCriterion(BaseModel):
    name: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    """What the judge checks; specific and testable."""


class OptimizerTask(BaseModel):
    """One task of an agent-optimizer dataset (seed 002)."""

    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1)
    query: str = Field(min_length=1)
    ground_truth: str | None = None
    criteria: list[TaskCriterion] = Field(default_factory=list)


def row_kind(item: dict[str, Any]) -> str:
    """Which standard shape a row has: messages, query_response, simulation_seed or task."""
    if "messages" in item:
        return "messages"
    if "test_case_description" in item:
        return "simulation_seed"
    if "name" in item and "query" in item and "response" not in item:
        return "task"
    if "query" in item or "response" in item:
        return "query_response"
    return "custom"
