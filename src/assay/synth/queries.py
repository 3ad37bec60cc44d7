"""Synthetic test data: a model writes queries (``{query, ground_truth?}``) or simulation test cases
(``{category, test_case_description, desired_num_turns}``) from an instruction, from an agent's
instructions and tools, or from a document, and only distinct ones are kept.

Each round asks (as a JSON schema, parsed from text when a server refuses it) for the queries still
missing, shown the ones already kept so it moves away from them, with a seed of its own; a query
that repeats one already kept, exactly or nearly (MinHash Jaccard >= 0.7 over character 5-grams,
as ``assay.sampling`` measures it), is dropped. Rounds stop when ``count`` distinct queries exist
or after ``MAX_ROUNDS``; a shortfall is said, not hidden. Every row records the generator model,
its seed and the prompt's hash.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
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
SECTIONS_PER_ROUND = 8
"""The most sections one prompt shows (about 24,000 characters): a long document is covered by
sections drawn from all of it, not by its first pages."""
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

    def chunks(self) -> list[str]:
        """The document in pieces of about ``CHUNK_CHARS``, cut at paragraph (else line) ends."""
        return chunk_text(self.document or "")

    def describe(self, sections: list[int], noun: str = "queries") -> str:
        parts = []
        if self.prompt:
            parts.append(f"What to write:\n{self.prompt.strip()}")
        if self.agent_instructions:
            parts.append(f"The assistant's instructions:\n{self.agent_instructions.strip()}")
        if self.tools:
            names = "\n".join(f"- {t.get('name')}: {t.get('description', '')}" for t in self.tools)
            parts.append(f"The assistant's tools (write {noun} that need them, and some that do not):\n{names}")
        if self.document and sections:
            chunks = self.chunks()
            shown = "\n\n".join(f"[section {i + 1} of {len(chunks)}]\n{chunks[i]}" for i in sections)
            parts.append(
                f"Source material (write {noun} it covers, spread over these sections; give each the number "
                f"of the section it comes from):\n{shown}"
            )
        return "\n\n".join(parts)

    @property
    def empty(self) -> bool:
        return not (self.prompt or self.agent_instructions or self.tools or self.document)


@dataclass(frozen=True)
class Kind:
    """What is generated: its prompt, its JSON schema, the field two rows are compared on."""

    noun: str
    system: str
    schema: dict[str, Any]
    text: str
    """The field that says what a row is, compared for duplicates."""
    extra: tuple[str, ...]


QUERIES = Kind("queries", SYSTEM, SCHEMA, "query", ("ground_truth",))
SCENARIO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "test_cases": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "category": {"type": "string"},
                    "test_case_description": {"type": "string"},
                    "desired_num_turns": {"type": "integer"},
                },
                "required": ["category", "test_case_description", "desired_num_turns"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["test_cases"],
    "additionalProperties": False,
}
SCENARIO_SYSTEM = """You write test cases for simulated conversations with an AI assistant: each describes a user.

- test_case_description says, in the second person, who the user is, what they want, what they know
  (order numbers, names, dates the assistant may ask for) and when they would consider the goal met.
  One or two short paragraphs; concrete, never vague.
- category is one of: happy_path, edge_case, ambiguous, out_of_scope, adversarial, multi_step.
  Mix them, most often happy_path and multi_step.
- desired_num_turns is how many messages such a user would need (1 to 8).
- Never repeat or lightly reword a test case you were shown or have already written.

Reply with a JSON object: {"test_cases": [{"category": "...", "test_case_description": "...",
"desired_num_turns": 3}, ...]}."""
SCENARIOS = Kind(
    "test cases", SCENARIO_SYSTEM, SCENARIO_SCHEMA, "test_case_description", ("category", "desired_num_turns")
)


@dataclass
class Generated:
    rows: list[dict[str, Any]]
    requested: int
    rounds: int
    dropped_duplicates: int
    noun: str = "queries"
    sections_shown: int = 0
    """How many of the document's sections the rounds showed the model."""
    sections_total: int = 0

    @property
    def coverage(self) -> str | None:
        """What of the document was drawn from, when there was one."""
        if not self.sections_total:
            return None
        spread = "" if self.sections_shown == self.sections_total else ", drawn from across all of it"
        return (
            f"the {self.noun} come from {self.sections_shown} of the document's {self.sections_total} sections{spread}"
        )

    @property
    def shortfall(self) -> str | None:
        if len(self.rows) >= self.requested:
            return None
        return (
            f"the generator wrote {len(self.rows)} distinct {self.noun} of the {self.requested} asked for "
            f"in {self.rounds} rounds ({self.dropped_duplicates} repeats dropped)"
        )


async def generate_queries(
    model: Model, brief: Brief, count: int, seed: int = 0, on_round: Callable[[int], None] | None = None
) -> Generated:
    return await generate(model, brief, count, QUERIES, seed, on_round)


async def generate_scenarios(model: Model, brief: Brief, count: int, seed: int = 0) -> Generated:
    """Test cases for a simulated user: ``{category, test_case_description, desired_num_turns}``."""
    return await generate(model, brief, count, SCENARIOS, seed)


async def generate(
    model: Model, brief: Brief, count: int, kind: Kind, seed: int = 0, on_round: Callable[[int], None] | None = None
) -> Generated:
    """``on_round`` is told how many distinct rows exist after each round (for a progress bar)."""
    if brief.empty:
        raise ItemError(f"nothing to generate {kind.noun} from: give a prompt, an agent with instructions, or a file")
    kept: list[dict[str, Any]] = []
    kept_signatures = np.empty((0, 128), dtype=np.uint32)
    seen: set[str] = set()
    dropped, rounds = 0, 0
    plan = coverage_plan(len(brief.chunks()), seed)
    schema = _with_section(kind.schema, kind) if plan else kind.schema
    while len(kept) < count and rounds < MAX_ROUNDS:
        missing = count - len(kept)
        # Every section is shown in some round: the count is spread over the rounds the plan needs.
        sections = plan[rounds % len(plan)] if plan else []
        asked = -(-missing // (len(plan) - rounds)) if rounds < len(plan) else missing
        prompt = _prompt(brief, sections, asked, kept, kind)
        prompt_hash = hashlib.sha256(repr(prompt).encode()).hexdigest()[:16]
        round_seed = seed + rounds
        rounds += 1
        try:
            answer, completion = await ask_structured(
                model, prompt, f"test_{kind.text}", schema, seed=round_seed, temperature=1.0
            )
        except ModelError as exc:
            raise ItemError(f"the {kind.noun} generator's model failed: {exc}") from None
        for candidate in _candidates(answer, completion.text, kind):
            text = normalize_text(candidate[kind.text])
            if not text or text in seen:
                dropped += bool(text)
                continue
            signature = signatures([text])
            if len(kept_signatures) and float(distance(signature[0], kept_signatures).min()) < NEAR_DUPLICATE:
                dropped += 1
                continue
            seen.add(text)
            kept_signatures = np.vstack([kept_signatures, signature])
            row: dict[str, Any] = {kind.text: candidate[kind.text].strip()}
            row.update({key: candidate[key] for key in kind.extra if candidate.get(key) not in (None, "")})
            row["generator"] = {"model": model.config.model, "seed": round_seed, "prompt_sha256": prompt_hash}
            if sections:  # where in the document it came from: the section it names, else those shown
                named = candidate.get("section")
                chosen = [named - 1] if isinstance(named, int) and named - 1 in sections else sections
                row["generator"]["sections"] = sorted(chosen)
                row["generator"]["of_sections"] = len(brief.chunks())
            kept.append(row)
            if len(kept) == count:
                break
        if on_round is not None:
            on_round(len(kept))
    shown = len({section for used in plan[:rounds] for section in used})
    return Generated(kept, count, rounds, dropped, kind.noun, shown, len(brief.chunks()))


def chunk_text(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """``text`` in pieces of at most about ``size`` characters, cut at a paragraph's end where one
    falls in the second half of a piece, else at a line's, else where the size says."""
    chunks, start = [], 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            cut = max(text.rfind("\n\n", start + size // 2, end), text.rfind("\n", start + size // 2, end))
            end = cut + 1 if cut > 0 else end
        piece = text[start:end].strip()
        if piece:
            chunks.append(piece)
        start = end
    return chunks


def coverage_plan(
    sections: int, seed: int, rounds: int = MAX_ROUNDS - 1, per_round: int = SECTIONS_PER_ROUND
) -> list[list[int]]:
    """Which sections each round shows, over at most ``rounds`` rounds (one round is kept for a
    shortfall) of at most ``per_round`` sections, in a seeded order so rounds mix the document's
    parts. Every section once when they fit; otherwise one section from each of as many equal
    stretches of the document as fit, so what is shown spans the whole of it."""
    if sections == 0:
        return []
    rng = random.Random(seed)
    room = min(rounds, sections) * per_round
    if sections <= room:
        order = list(range(sections))
    else:  # one from each stretch: the first pages are no likelier than the last
        bounds = [sections * i // room for i in range(room + 1)]
        order = [rng.randrange(bounds[i], bounds[i + 1]) for i in range(room)]
    rng.shuffle(order)
    size = -(-len(order) // min(rounds, len(order)))
    return [sorted(order[i : i + size]) for i in range(0, len(order), size)]


def _with_section(schema: dict[str, Any], kind: Kind) -> dict[str, Any]:
    """The kind's schema with a ``section`` number on each row."""
    listed = schema["properties"][kind.noun.replace(" ", "_")]
    row = listed["items"]
    row = {
        **row,
        "properties": {**row["properties"], "section": {"type": "integer"}},
        "required": [*row["required"], "section"],
    }
    return {**schema, "properties": {kind.noun.replace(" ", "_"): {**listed, "items": row}}}


def _prompt(
    brief: Brief, sections: list[int], missing: int, kept: list[dict[str, Any]], kind: Kind
) -> list[dict[str, Any]]:
    ask = f"{brief.describe(sections, kind.noun)}\n\nWrite {missing} new {kind.noun}."
    if kept:
        shown = "\n".join(f"- {row[kind.text]}" for row in kept[-SHOWN_KEPT:])
        ask += f"\n\nAlready written (write different ones):\n{shown}"
    return [{"role": "system", "content": kind.system}, {"role": "user", "content": ask}]


def _candidates(answer: dict[str, Any] | None, text: str, kind: Kind) -> list[dict[str, Any]]:
    """The rows of an answer: the schema's list, or one row per non-empty line of plain text."""
    listed = next((v for v in (answer or {}).values() if isinstance(v, list)), None) if answer else None
    if listed is not None:
        out: list[dict[str, Any]] = []
        for entry in listed:
            if isinstance(entry, str):
                out.append({kind.text: entry})
            elif isinstance(entry, dict) and isinstance(entry.get(kind.text), str):
                extra = {k: entry.get(k) for k in (*kind.extra, "section")}
                out.append({kind.text: entry[kind.text], **extra})
        return out
    lines = (line.strip().lstrip("-*0123456789.) ").strip() for line in text.splitlines())
    return [{kind.text: line} for line in lines if line]
