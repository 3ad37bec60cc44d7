"""Foundry's ``prompt_optimization`` jobs: a one-shot rewrite of an agent's instructions, steered by
the developer's guidance (``SteeringPromptOptimizationContext``), with no comparative evaluation.

The job makes one call to its optimization model, asked for a JSON schema (parsed from the text
when a server refuses that), and ends with two candidates: the baseline, unchanged, and the
rewrite, whose one mutation is the instructions. Nothing scores them, so neither has an
``evaluation`` and the summary has no scores; ``best_id`` names the rewrite (Foundry: "the selected
transformed output for non-comparative jobs"), and it is promoted as any candidate is.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from assay.config.agents import AgentDefinition
from assay.errors import ConfigError
from assay.llm import ModelError, ModelRegistry
from assay.llm.structured import ask_structured
from assay.optimize.candidate import Candidate
from assay.optimize.foundry import WHERE
from assay.optimize.reflect import INSTRUCTIONS_SCHEMA, instructions_in
from assay.optimize.search import State
from assay.sync import run_sync

KIND = "prompt_optimization"
SYSTEM = (
    "You rewrite an AI agent's instructions as its developer asks. Apply the developer's guidance; keep what the "
    "instructions say that the guidance does not change (facts, rules, tools, tone). Write complete instructions the "
    "agent can follow, not notes about them. Answer with one JSON object only."
)
NO_GUIDANCE = "Make the instructions clearer, more specific and better organised, without changing what they ask for."


@dataclasses.dataclass(frozen=True)
class PromptJob:
    """A ``prompt_optimization`` create request, checked."""

    optimization_model: str
    baseline: AgentDefinition
    guidance: tuple[str, ...]


def is_prompt_optimization(body: dict[str, Any]) -> bool:
    config = body.get(WHERE)
    return isinstance(config, dict) and config.get("type") == KIND


def prompt_job(body: dict[str, Any], agent: str, stored: dict[str, Any] | None) -> PromptJob:
    """The request read and checked, each problem naming its field. ``stored``: the target prompt
    agent ``agent`` (``system_prompt``, ``model``, ``tools``), whose instructions are rewritten."""
    if stored is None or not stored.get("system_prompt"):
        raise ConfigError(
            f"target_configuration.name: {agent!r} is not a prompt agent of this project, so there are no "
            "instructions to rewrite",
            hint=f"make it one first: agents.create_version(agent_name={agent!r}, definition=...)",
        )
    model = (body.get("optimization_model_configuration") or {}).get("model")
    if not isinstance(model, str) or not model:
        raise ConfigError("optimization_model_configuration.model: name the model that rewrites the instructions")
    context = body[WHERE].get("context")
    if context is None:
        context = []
    if not isinstance(context, list):
        raise ConfigError(f"{WHERE}.context: expected a list of {{type: steering_prompt, prompt}}")
    guidance = []
    for index, entry in enumerate(context):
        where = f"{WHERE}.context[{index}]"
        if not isinstance(entry, dict) or entry.get("type") != "steering_prompt":
            raise ConfigError(f"{where}.type: steering_prompt (the one kind of context a prompt optimization takes)")
        prompt = entry.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ConfigError(f"{where}.prompt: the guidance, in words (required)")
        guidance.append(prompt.strip())
    baseline = AgentDefinition(
        instructions=str(stored["system_prompt"]),
        tools=tuple(stored.get("tools") or ()),
        model=stored.get("model"),
        name=agent,
    )
    return PromptJob(model, baseline, tuple(guidance))


def messages(instructions: str, guidance: tuple[str, ...]) -> list[dict[str, str]]:
    asked = "\n".join(f"- {line}" for line in guidance) if guidance else f"- {NO_GUIDANCE}"
    task = 'Reply with {"instructions": "<the full rewritten instructions>"}.'
    content = f"# Current instructions\n{instructions}\n\n# The developer's guidance\n{asked}\n\n# Task\n{task}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": content}]


@dataclasses.dataclass
class PromptRewrite:
    """Runs a ``prompt_optimization`` job to its end, its state saved at ``state_path``."""

    job: PromptJob
    models: ModelRegistry
    state: State
    state_path: Path

    def run(self) -> State:
        state, started = self.state, time.monotonic()
        baseline = Candidate(self.job.baseline)
        self._remember(baseline)
        asked = messages(self.job.baseline.instructions, self.job.guidance)
        text, problem = run_sync(self._ask(asked))
        state.elapsed_seconds = time.monotonic() - started
        if problem is not None or text is None:
            state.status, state.error = "failed", {"code": "optimization_failed", "message": problem or "no reply"}
            state.save(self.state_path)
            return state
        rewritten = Candidate(
            dataclasses.replace(self.job.baseline, instructions=text), baseline.id, ("system_prompt",)
        )
        digest = hashlib.sha256(json.dumps(asked).encode()).hexdigest()[:16]
        warnings = []
        if rewritten.id == baseline.id:
            warnings.append("the rewrite left the instructions as they were")
        else:
            self._remember(rewritten, reflection=digest, guidance=list(self.job.guidance))
        state.accepted = list(state.order)
        state.stop_reason = "max_candidates"  # made what it was asked to: Foundry's "completed"
        state.result = {"baseline": baseline.id, "best": rewritten.id, "warnings": warnings}
        state.status = "succeeded"
        state.save(self.state_path)
        return state

    async def _ask(self, asked: list[dict[str, str]]) -> tuple[str | None, str | None]:
        """(the new instructions, or None and why not)."""
        model = self.models.get(self.job.optimization_model)
        try:
            answer, completion = await ask_structured(model, asked, "instructions", INSTRUCTIONS_SCHEMA)
        except ModelError as exc:
            return None, f"the optimization model failed: {exc}"
        finally:
            await model.aclose()
        self._count(completion.usage.prompt_tokens, completion.usage.completion_tokens, completion.cached)
        text = instructions_in(answer, completion)
        if text is None:
            return None, "the optimization model's reply held no instructions"
        return text, None

    def _count(self, prompt: int, completion: int, cached: bool) -> None:
        """The call, under the role a search's reflection counts as (Foundry's ``optimization`` stage)."""
        price = self.models.get(self.job.optimization_model).config.price
        cost = 0.0 if price is None else price.cost(prompt, completion)
        self.state.usage["reflection"] = {
            "calls": int(not cached),
            "cache_hits": int(cached),
            "tokens": prompt + completion,
            "cost_usd": cost,
        }
        self.state.tokens += prompt + completion
        self.state.cost_usd += cost

    def _remember(self, candidate: Candidate, **lineage: Any) -> None:
        self.state.candidates[candidate.id] = {**candidate.as_dict(), "tasks": {}, "lineage": lineage}
        self.state.order.append(candidate.id)
