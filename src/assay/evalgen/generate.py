"""``assay eval generate``: tasks and a rubric for an agent, from its instructions and tools.

1. **Intents** from a coverage matrix: the instructions split into rules, plus the tools; every
   rule and every tool gets at least one intent (rounds ask for the ones still uncovered), in the
   categories the seed recommends (happy, edge, ambiguous, out_of_scope, adversarial, multi_step).
2. **Tasks**, one per intent: a realistic ``query``, a ``ground_truth`` when the instructions settle
   it, and 1–3 specific, testable ``criteria {name, instruction}``. Near-duplicate queries are
   dropped (MinHash, as ``assay.sampling`` measures it).
3. **A rubric** of 4–7 weighted dimensions from the rules, plus ``general_quality`` (weight 5,
   always applicable), as azd writes ``rubric_dimensions.json``.

Every call asks for a JSON schema and falls back to parsing the text; the generator runs at
temperature 0 with a seed, so the same request writes the same files (and the cache answers it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay.config.agents import AgentDefinition
from assay.errors import ConfigError, ItemError
from assay.evalgen import CATEGORIES, MAX_SAMPLES, MIN_SAMPLES
from assay.llm import Model, ModelError
from assay.llm.structured import ask_structured
from assay.sampling.minhash import distance, normalize_text, signatures

TASK_BATCH = 8
NEAR_DUPLICATE = 0.3
COVERAGE_ROUNDS = 3
GENERAL_QUALITY = {
    "id": "general_quality",
    "description": "Other important quality factors not covered by the listed criteria.",
    "weight": 5,
    "always_applicable": True,
}
SYSTEM = (
    "You design evaluation data for an AI agent: realistic user requests and precise checks of its answers. "
    "Answer with one JSON object only."
)
_STRING = {"type": "string"}


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": list(properties), "properties": properties}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


INTENT_SCHEMA = _object(
    intents=_array(
        _object(
            description=_STRING,
            category={"type": "string", "enum": list(CATEGORIES)},
            rules=_array(_STRING),
            tools=_array(_STRING),
        )
    )
)
TASK_SCHEMA = _object(
    tasks=_array(
        _object(
            intent={"type": "integer"},
            name=_STRING,
            query=_STRING,
            ground_truth=_STRING,
            criteria=_array(_object(name=_STRING, instruction=_STRING)),
        )
    )
)
RUBRIC_SCHEMA = _object(dimensions=_array(_object(id=_STRING, description=_STRING, weight={"type": "integer"})))


@dataclass
class Generated:
    tasks: list[dict[str, Any]]
    dimensions: list[dict[str, Any]]
    rules: list[str]
    tools: list[str]
    coverage: dict[str, int] = field(default_factory=dict)
    """``R1``… and tool names → how many tasks cover each."""
    dropped_duplicates: int = 0
    warnings: list[str] = field(default_factory=list)


def split_rules(instructions: str) -> list[str]:
    """The instructions as separate rules: list items, else sentences."""
    lines = [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line).strip() for line in instructions.splitlines()]
    items = [line for line in lines if line and not line.startswith("#")]
    rules = []
    for item in items:
        rules += [part.strip() for part in re.split(r"(?<=[.!?;])\s+(?=[A-Z])", item) if len(part.strip()) > 3]
    return rules


def snake(text: str, fallback: str) -> str:
    name = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:48]
    return name if name and name[0].isalpha() else fallback


async def generate(
    model: Model,
    agent: AgentDefinition,
    count: int,
    *,
    guidance: str | None = None,
    seed: int = 0,
    observed: list[str] | None = None,
    tasks: bool = True,
    rubric: bool = True,
) -> Generated:
    """``observed``: requests real users sent the agent (from its stored traces), shown to the
    generator as what tasks should resemble. ``tasks`` / ``rubric``: which to write (the other is
    kept as it is)."""
    if not MIN_SAMPLES <= count <= MAX_SAMPLES:
        raise ConfigError(f"--max-samples: between {MIN_SAMPLES} and {MAX_SAMPLES}, got {count}")
    rules = split_rules(agent.instructions)
    tools = [str(t["name"]) for t in agent.tools]
    if not rules and not tools:
        raise ConfigError(
            "the agent has no instructions or tools to write tasks from",
            hint="give -g/--gen-instruction or --gen-instruction-file",
        )
    about = _about(agent, rules, guidance, observed or [])
    written: list[dict[str, Any]] = []
    dropped = 0
    if tasks:
        intents = within(await _intents(model, about, rules, tools, count, seed), count)
        written, dropped = await _tasks(model, about, intents, seed)
        written = written[:count]  # a generator that answers more tasks than intents does not pass max_samples
    dimensions = await _rubric(model, about, seed) if rubric else []
    result = Generated(written, dimensions, rules, tools, dropped_duplicates=dropped)
    if not tasks:
        return result
    result.coverage = {key: 0 for key in [*(f"R{i + 1}" for i in range(len(rules))), *tools]}
    for task in written:
        for key in [*task["covers"]["rules"], *task["covers"]["tools"]]:
            if key in result.coverage:
                result.coverage[key] += 1
    result.warnings = [f"{key} is covered by no task" for key, n in result.coverage.items() if n == 0]
    if len(written) < count:
        result.warnings.append(
            f"{len(written)} tasks written of the {count} asked for ({dropped} near-duplicates dropped)"
        )
    return result


def _about(agent: AgentDefinition, rules: list[str], guidance: str | None, observed: list[str]) -> str:
    parts = ["# The agent's rules", *(f"R{i + 1}. {rule}" for i, rule in enumerate(rules))]
    if agent.tools:
        parts += ["", "# The agent's tools", *(f"- {t['name']}: {t.get('description', '')}" for t in agent.tools)]
    if agent.skills:
        parts += ["", "# The agent's skills", *(f"- {s.name}: {s.description}" for s in agent.skills)]
    if guidance:
        parts += ["", "# What to test", guidance.strip()]
    if observed:
        parts += ["", "# Requests real users sent it (write tasks like these)", *(f"- {q}" for q in observed)]
    return "\n".join(parts)


async def _ask(model: Model, user: str, name: str, schema: dict[str, Any], seed: int) -> dict[str, Any]:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
    try:
        answer, _ = await ask_structured(model, messages, name, schema, temperature=0, seed=seed)
    except ModelError as exc:
        raise ItemError(f"the generator model failed: {exc}") from None
    if answer is None:
        raise ItemError(f"the generator's {name} answer held no JSON object")
    return answer


async def _intents(
    model: Model, about: str, rules: list[str], tools: list[str], count: int, seed: int
) -> list[dict[str, Any]]:
    ids = [f"R{i + 1}" for i in range(len(rules))]
    intents: list[dict[str, Any]] = []
    for round_index in range(COVERAGE_ROUNDS):
        covered = {key for intent in intents for key in [*intent["rules"], *intent["tools"]]}
        uncovered = [key for key in [*ids, *tools] if key not in covered]
        wanted = count - len(intents) if round_index == 0 else max(len(uncovered), 1)
        if round_index and not uncovered:
            break
        ask = (
            f"{about}\n\n# Task\nWrite {wanted} distinct test intents (what a user wants), spread over the "
            f"categories {', '.join(CATEGORIES)}. Every rule (R1…) and every tool must be covered by at least "
            "one intent; list in rules and tools what each intent tests."
        )
        if round_index:
            ask += f"\nStill uncovered, cover these: {', '.join(uncovered)}."
        ask += '\nReply with {"intents": [...]}.'
        answer = await _ask(model, ask, "intents", INTENT_SCHEMA, seed + round_index)
        for raw in answer.get("intents") or []:
            if isinstance(raw, dict) and isinstance(raw.get("description"), str) and raw["description"].strip():
                category = raw.get("category") if raw.get("category") in CATEGORIES else "happy"
                intents.append(
                    {
                        "description": raw["description"].strip(),
                        "category": category,
                        "rules": [r for r in raw.get("rules") or [] if r in ids],
                        "tools": [t for t in raw.get("tools") or [] if t in tools],
                    }
                )
    return intents


async def _tasks(
    model: Model, about: str, intents: list[dict[str, Any]], seed: int
) -> tuple[list[dict[str, Any]], int]:
    tasks: list[dict[str, Any]] = []
    kept = np.empty((0, 128), dtype=np.uint32)
    names: set[str] = set()
    dropped = 0
    for start in range(0, len(intents), TASK_BATCH):
        batch = intents[start : start + TASK_BATCH]
        listing = "\n".join(f"{start + i}. [{it['category']}] {it['description']}" for i, it in enumerate(batch))
        ask = (
            f"{about}\n\n# Intents\n{listing}\n\n# Task\nFor each intent write one task: a query as a real user "
            "would send it, a ground_truth when the rules settle the answer (else an empty string), and 1 to 3 "
            "criteria, each a specific, testable check of the response ('Response must mention the 30-day "
            "refund window', never 'The response should be good'), named in snake_case. Reply with "
            '{"tasks": [{"intent": <number>, "name": "...", "query": "...", "ground_truth": "...", '
            '"criteria": [{"name": "...", "instruction": "..."}]}]}.'
        )
        answer = await _ask(model, ask, "tasks", TASK_SCHEMA, seed + 100 + start)
        for raw in answer.get("tasks") or []:
            task = _task(raw, intents, names)
            if task is None:
                continue
            text = normalize_text(task["query"])
            signature = signatures([text])
            if len(kept) and float(distance(signature[0], kept).min()) < NEAR_DUPLICATE:
                dropped += 1
                continue
            kept = np.vstack([kept, signature])
            names.add(task["name"])
            tasks.append(task)
    for index, task in enumerate(tasks):
        task["id"] = index + 1
    return tasks, dropped


def within(intents: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """At most ``count`` intents (``max_samples``): the coverage rounds and a generous generator may
    give more. Those that cover a rule or tool no other kept intent covers are kept first (greedy set
    cover), the rest in the order written; the kept ones keep that order."""
    if len(intents) <= count:
        return intents
    covers = [{*intent["rules"], *intent["tools"]} for intent in intents]
    uncovered = set().union(*covers)
    kept: set[int] = set()
    while uncovered and len(kept) < count:
        best = max((i for i in range(len(intents)) if i not in kept), key=lambda i: len(covers[i] & uncovered))
        if not covers[best] & uncovered:
            break
        kept.add(best)
        uncovered -= covers[best]
    for index in range(len(intents)):
        if len(kept) == count:
            break
        kept.add(index)
    return [intents[i] for i in sorted(kept)]


def _task(raw: Any, intents: list[dict[str, Any]], names: set[str]) -> dict[str, Any] | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("query"), str) or not raw["query"].strip():
        return None
    criteria: list[dict[str, str]] = []
    seen: set[str] = set()
    for check in raw.get("criteria") or []:
        if isinstance(check, dict) and isinstance(check.get("instruction"), str) and check["instruction"].strip():
            name = snake(str(check.get("name") or check["instruction"]), f"check_{len(criteria) + 1}")
            if name not in seen:
                seen.add(name)
                criteria.append({"name": name, "instruction": check["instruction"].strip()})
    if not criteria:
        return None
    index = raw.get("intent")
    intent = intents[index] if isinstance(index, int) and 0 <= index < len(intents) else None
    name = base = snake(str(raw.get("name") or raw["query"]), "task")
    suffix = 2
    while name in names:
        name, suffix = f"{base}_{suffix}", suffix + 1
    task: dict[str, Any] = {"name": name, "query": raw["query"].strip(), "criteria": criteria[:3]}
    if isinstance(raw.get("ground_truth"), str) and raw["ground_truth"].strip():
        task["ground_truth"] = raw["ground_truth"].strip()
    task["category"] = intent["category"] if intent else "happy"
    task["description"] = intent["description"] if intent else task["query"]
    task["covers"] = {"rules": intent["rules"] if intent else [], "tools": intent["tools"] if intent else []}
    return task


async def _rubric(model: Model, about: str, seed: int) -> list[dict[str, Any]]:
    ask = (
        f"{about}\n\n# Task\nWrite a rubric for judging this agent's responses: 4 to 7 dimensions drawn from its "
        "rules, each with a snake_case id, a description of what a good response does, and a weight from 1 to "
        '10 for how much it matters. Reply with {"dimensions": [{"id": "...", "description": "...", "weight": 5}]}.'
    )
    answer = await _ask(model, ask, "rubric", RUBRIC_SCHEMA, seed + 200)
    dimensions: list[dict[str, Any]] = []
    for raw in answer.get("dimensions") or []:
        if not isinstance(raw, dict) or not isinstance(raw.get("description"), str) or not raw["description"].strip():
            continue
        dimension_id = snake(str(raw.get("id") or raw["description"]), f"dimension_{len(dimensions) + 1}")
        if dimension_id == GENERAL_QUALITY["id"] or any(d["id"] == dimension_id for d in dimensions):
            continue
        weight = raw.get("weight")
        weight = weight if isinstance(weight, int) and not isinstance(weight, bool) else 5
        dimensions.append(
            {"id": dimension_id, "description": raw["description"].strip(), "weight": min(max(weight, 1), 10)}
        )
    if not dimensions:
        raise ItemError("the generator wrote no rubric dimensions")
    return [*dimensions[:7], dict(GENERAL_QUALITY)]
