"""Reflection: the optimization model reads how the parent did on a minibatch (each query, the
response, every criterion's verdict with the judge's reason) and rewrites one component of the
configuration. It is asked for a JSON schema and, when a server refuses that, parsed from the text
(a fenced block is taken as the new instructions)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from assay.config.agents import AgentDefinition, Skill
from assay.llm import Completion, Model, ModelError
from assay.llm.structured import ask_structured
from assay.optimize.candidate import Candidate
from assay.results import OutputItem
from assay.run.tasks import task_name
from assay.simulate.conversation import transcript

RESPONSE_CHARS = 1200
CONVERSATION_CHARS = 3000
"""A conversation's end is kept when it is longer: where it went wrong is seen there last."""
SYSTEM = (
    "You improve an AI agent's configuration from evidence. You see how it handled some tasks and why the judges "
    "passed or failed each response. Change what the evidence shows is wrong, keep what works, and write general "
    "rules that help on tasks like these, never answers copied from the examples. Answer with one JSON object only."
)
INSTRUCTIONS_SCHEMA = {
    "type": "object",
    "properties": {"instructions": {"type": "string"}},
    "required": ["instructions"],
    "additionalProperties": False,
}
TOOLS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["tools"],
    "properties": {
        "tools": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "description"],
                "properties": {"name": {"type": "string"}, "description": {"type": "string"}},
            },
        }
    },
}
FENCE = re.compile(r"```(?:\w+)?\s*\n(.*?)```", re.DOTALL)


@dataclass
class Proposal:
    config: AgentDefinition | None
    mutation: tuple[str, ...]
    prompt_sha256: str
    problem: str | None = None
    """Why no usable change came back."""
    completion: Completion | None = None
    """The reflection call (its tokens count under the job's ``reflection`` role)."""


def evidence(outputs: list[OutputItem]) -> str:
    """The minibatch as the reflection model reads it."""
    parts = []
    for output in outputs:
        item, sample = output.datasource_item, output.sample or {}
        if isinstance(item.get("messages"), list):  # a scenario a simulated user played out with the agent
            spoken = transcript(item["messages"])
            lines = [
                f"## Scenario {task_name(item)}",
                f"SCENARIO: {item.get('test_case_description')}",
                f"CONVERSATION:\n{spoken[-CONVERSATION_CHARS:]}",
            ]
        else:
            response = str(sample.get("output_text") or "")[:RESPONSE_CHARS]
            lines = [f"## Task {item.get('name')}", f"QUERY: {item.get('query')}", f"RESPONSE: {response}"]
        if item.get("ground_truth"):
            lines.append(f"EXPECTED: {item['ground_truth']}")
        for result in output.results:
            verdict = result.status if result.status != "completed" else ("pass" if result.passed else "FAIL")
            instruction = result.properties.get("instruction")
            what = f"{result.name} ({instruction})" if instruction else result.name
            lines.append(f"- {what}: {verdict}: {result.reason or ''}".rstrip(": "))
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


SKILL_SCHEMA = {
    "type": "object",
    "properties": {"body": {"type": "string"}},
    "required": ["body"],
    "additionalProperties": False,
}
ASKS = {
    "instructions": (
        "instructions",
        INSTRUCTIONS_SCHEMA,
        "Write the agent's complete new instructions so it does "
        'better on tasks like these. Reply with {"instructions": "<the full instructions>"}.',
    ),
    "tools": (
        "tool_descriptions",
        TOOLS_SCHEMA,
        "Rewrite the tools' descriptions so the agent uses them well on "
        'tasks like these. Keep every name. Reply with {"tools": [{"name": "...", "description": "..."}]}.',
    ),
    "skill": (
        "skill",
        SKILL_SCHEMA,
        "Rewrite this skill's body so the agent does better on tasks like these. "
        'Reply with {"body": "<the full skill>"}.',
    ),
}


async def propose(model: Model, parent: Candidate, component: str, outputs: list[OutputItem], seed: int) -> Proposal:
    """``component``: ``instructions``, ``tools`` or ``skill:<name>``."""
    config = parent.config
    tools = "\n".join(f"- {t['name']}: {t.get('description', '')}" for t in config.tools) or "(none)"
    parts = [
        f"# Current instructions\n{config.instructions}",
        f"# Tools\n{tools}",
        f"# How it did\n{evidence(outputs)}",
    ]
    kind, _, skill_name = component.partition(":")
    skill = next((s for s in config.skills if s.name == skill_name), None)
    if skill is not None:
        parts.append(f"# Skill {skill.name}\n{skill.description}\n\n{skill.body}")
    name, schema, task = ASKS[kind]
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "\n\n".join([*parts, f"# Task\n{task}"])},
    ]
    digest = hashlib.sha256(json.dumps(messages).encode()).hexdigest()[:16]
    try:
        answer, completion = await ask_structured(model, messages, name, schema, temperature=1.0, seed=seed)
    except ModelError as exc:
        return Proposal(None, (), digest, f"the optimization model failed: {exc}")
    return dataclasses.replace(_read(config, kind, skill, answer, completion, digest), completion=completion)


def _read(
    config: AgentDefinition, kind: str, skill: Skill | None, answer: Any, completion: Completion, digest: str
) -> Proposal:
    """The change the reflection's answer makes to ``config``."""
    if kind == "tools":
        return _tools(config, answer, digest)
    if skill is not None:
        body = (answer or {}).get("body")
        if not isinstance(body, str) or not body.strip():
            return Proposal(None, (), digest, "the reply held no skill body")
        skills = tuple(dataclasses.replace(s, body=body.strip() + "\n") if s is skill else s for s in config.skills)
        return Proposal(dataclasses.replace(config, skills=skills), (f"skill_{skill.name}",), digest)
    text = instructions_in(answer, completion)
    if text is None:
        return Proposal(None, (), digest, "the reply held no instructions")
    return Proposal(dataclasses.replace(config, instructions=text), ("system_prompt",), digest)


def instructions_in(answer: dict[str, Any] | None, completion: Completion) -> str | None:
    """The instructions a reply holds: its JSON's ``instructions``, else its first fenced block."""
    text = (answer or {}).get("instructions")
    if not isinstance(text, str):
        fenced = FENCE.search(completion.text)
        text = fenced.group(1) if fenced else None
    return text.strip() + "\n" if isinstance(text, str) and text.strip() else None


def _tools(config: AgentDefinition, answer: dict[str, Any] | None, digest: str) -> Proposal:
    given = {str(t.get("name")): t.get("description") for t in (answer or {}).get("tools") or [] if isinstance(t, dict)}
    if not given:
        return Proposal(None, (), digest, "the reply held no tool descriptions")
    tools = tuple({**t, "description": str(given.get(t["name"]) or t.get("description") or "")} for t in config.tools)
    unknown = sorted(set(given) - {t["name"] for t in config.tools})
    if unknown:
        return Proposal(None, (), digest, f"the reply named tools the agent does not have: {', '.join(unknown)}")
    return Proposal(dataclasses.replace(config, tools=tools), ("tools",), digest)
