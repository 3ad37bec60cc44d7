"""Synthetic test queries: a model writes them from an instruction, from an agent's instructions and
tools, or from a document, and only distinct ones are kept.

Each round asks (as a JSON schema, parsed from text when a server refuses it) for the queries still
missing, shown the ones already kept so it moves away from them, with a seed of its own; a query
that repeats one already kept, exactly or nearly (MinHash Jaccard >= 0.7 over character 5-grams,
as ``assay.sampling`` measures it), is dropped. Rounds stop when ``count`` distinct queries exist
or after ``MAX_ROUNDS``; a shortfall is said, not hidden. Every row records the generator model,
its seed and the prompt's hash.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay.errors import ItemError
from assay.llm import Model, ModelError
from assay.llm.structured import ask_structured
from assay.sampling.minhash import distance, normalize_text, signatures

MAX_ROUNDS = 6
NEAR_DUPLICATE = 0.3
"""Estimated Jaccard distance under which two queries are the same question."""
SHOWN_KEPT = 40
CHUNK_CHARS = 3000
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "queries": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "ground_truth": {"type": "string"}},
                "required": ["query", "ground_truth"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["queries"],
    "additionalProperties": False,
}
SYSTEM = """You write test queries for evaluating an AI assistant: the messages real users would send it.

- Each query is one message a user would type, self-contained, specific and realistic in tone.
- Cover different intents, phrasings and difficulty: common requests, edge cases, ambiguous or
  underspecified asks, and a few that are out of scope for the assistant.
- Never repeat or lightly reword a query you were shown or have already written.
- ground_truth is a short correct answer when the material given settles it, else an empty string.

Reply with a JSON object: {"queries": [{"query": "...", "ground_truth": "..."}, ...]}."""


@dataclass(frozen=True)
class Brief:
    """What the queries are about: an instruction, an agent's instructions and tools, a document."""

    prompt: str | None = None
    agent_instructions: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    document: str | None = None

    def describe(self, round_index: int) -> str:
        parts = []
        if self.prompt:
            parts.append(f"What to write:\n{self.prompt.strip()}")
        if self.agent_instructions:
            parts.append(f"The assistant's instructions:\n{self.agent_instructions.strip()}")
        if self.tools:
            names = "\n".join(f"- {t.get('name')}: {t.get('description', '')}" for t in self.tools)
            parts.append(f"The assistant's tools (write queries that need them, and some that do not):\n{names}")
        if self.document:
            chunks = [self.document[i : i + CHUNK_CHARS] for i in range(0, len(self.document), CHUNK_CHARS)]
            parts.append(f"Source material (write queries this answers):\n{chunks[round_index % len(chunks)]}")
        return "\n\n".join(parts)


@dataclass
class Generated:
    rows: list[dict[str, Any]]
    requested: int
    rounds: int
    dropped_duplicates: int

    @property
    def shortfall(self) -> str | None:
        if len(self.rows) >= self.requested:
            return None
        return (f"the generator wrote {len(self.rows)} distinct queries of the {self.requested} asked for "
                f"in {self.rounds} rounds ({self.dropped_duplicates} repeats dropped)")  # fmt: skip


async def generate_queries(model: Model, brief: Brief, count: int, seed: int = 0) -> Generated:
    if not (brief.prompt or brief.agent_instructions or brief.tools or brief.document):
        raise ItemError("nothing to generate queries from: give a prompt, an agent with instructions, or a file")
    kept: list[dict[str, Any]] = []
    kept_signatures = np.empty((0, 128), dtype=np.uint32)
    seen: set[str] = set()
    dropped, rounds = 0, 0
    while len(kept) < count and rounds < MAX_ROUNDS:
        missing = count - len(kept)
        prompt = _prompt(brief, rounds, missing, kept)
        prompt_hash = hashlib.sha256(repr(prompt).encode()).hexdigest()[:16]
        round_seed = seed + rounds
        rounds += 1
        try:
            answer, completion = await ask_structured(model, prompt, "test_queries", SCHEMA, seed=round_seed,
                                                      temperature=1.0)  # fmt: skip
        except ModelError as exc:
            raise ItemError(f"the query generator's model failed: {exc}") from None
        for candidate in _candidates(answer, completion.text):
            text = normalize_text(candidate["query"])
            if not text or text in seen:
                dropped += bool(text)
                continue
            signature = signatures([text])
            if len(kept_signatures) and float(distance(signature[0], kept_signatures).min()) < NEAR_DUPLICATE:
                dropped += 1
                continue
            seen.add(text)
            kept_signatures = np.vstack([kept_signatures, signature])
            row: dict[str, Any] = {"query": candidate["query"].strip()}
            if candidate.get("ground_truth"):
                row["ground_truth"] = candidate["ground_truth"].strip()
            row["generator"] = {"model": model.config.model, "seed": round_seed, "prompt_sha256": prompt_hash}
            kept.append(row)
            if len(kept) == count:
                break
    return Generated(kept, count, rounds, dropped)


def _prompt(brief: Brief, round_index: int, missing: int, kept: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ask = f"{brief.describe(round_index)}\n\nWrite {missing} new queries."
    if kept:
        shown = "\n".join(f"- {row['query']}" for row in kept[-SHOWN_KEPT:])
        ask += f"\n\nAlready written (write different ones):\n{shown}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ask}]


def _candidates(answer: dict[str, Any] | None, text: str) -> list[dict[str, str]]:
    """The queries of an answer: the schema's list, or one query per non-empty line of plain text."""
    if answer is not None and isinstance(answer.get("queries"), list):
        out = []
        for entry in answer["queries"]:
            if isinstance(entry, str):
                out.append({"query": entry})
            elif isinstance(entry, dict) and isinstance(entry.get("query"), str):
                truth = entry.get("ground_truth")
                out.append({"query": entry["query"], "ground_truth": truth if isinstance(truth, str) else ""})
        return out
    lines = (line.strip().lstrip("-*0123456789.) ").strip() for line in text.splitlines())
    return [{"query": line} for line in lines if line]
