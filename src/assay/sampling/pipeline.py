"""Random and smart sampling of candidates (traces or conversations), with what each stage removed.

Smart: exact duplicates → hard filters (problems conversion noted, empty or trivial user text)
→ MinHash signatures of the normalised user text → seeded farthest-first. Farthest-first picks
outliers first, which is why filtering comes before it; its picks cover the space of what users
asked, they are not a picture of traffic (report their scores as coverage, not as means).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from assay.sampling.farthest import farthest_first
from assay.sampling.minhash import normalize_text, signatures

TRIVIAL = {"hi", "hello", "hey", "ok", "okay", "thanks", "thank you", "test", "yes", "no", "?"}
_TWO_WORD_CHARACTERS = re.compile(r"\w.*?\w", re.S)
STAGES = (
    ("orphan", "no root invoke_agent span"),
    ("error status", "error status"),
    ("finish_reason", "error status"),
    ("truncated", "truncated or unparseable content"),
    ("unreadable", "truncated or unparseable content"),
    ("no output", "no output"),
    ("malformed tool call", "malformed or unanswered tool calls"),
    ("unanswered tool call", "malformed or unanswered tool calls"),
)


@dataclass
class Candidate:
    key: str
    """What a pick names: a trace id, or a conversation's key."""
    text: str
    """The user's words, which diversity is measured on."""
    fingerprint: str
    """Equal for exact duplicates (the whole exchange, not only the user text)."""
    problems: list[str] = field(default_factory=list)


@dataclass
class SampleReport:
    strategy: str
    candidates: int
    picked: list[str] = field(default_factory=list)
    removed: dict[str, int] = field(default_factory=dict)
    """Stage → how many candidates it removed, in pipeline order."""

    def lines(self) -> list[str]:
        out = [f"{self.candidates} candidates"]
        out += [f"- {count} removed: {stage}" for stage, count in self.removed.items() if count]
        out.append(f"{len(self.picked)} picked ({self.strategy})")
        return out


def random_sample(candidates: list[Candidate], count: int, seed: int = 0) -> SampleReport:
    chosen = random.Random(seed).sample(candidates, min(count, len(candidates)))
    return SampleReport("random", len(candidates), [c.key for c in chosen])


def smart_sample(candidates: list[Candidate], count: int, seed: int = 0) -> SampleReport:
    report = SampleReport("smart", len(candidates))
    seen: set[str] = set()
    unique = []
    for candidate in candidates:
        if candidate.fingerprint not in seen:
            seen.add(candidate.fingerprint)
            unique.append(candidate)
    report.removed["exact duplicates"] = len(candidates) - len(unique)
    kept, texts = [], []
    for candidate in unique:
        text = normalize_text(candidate.text)
        reason = hard_filter(candidate, text)
        if reason is None:
            kept.append(candidate)
            texts.append(text)
        else:
            report.removed[reason] = report.removed.get(reason, 0) + 1
    if kept:
        picks = farthest_first(signatures(texts), count, seed=seed)
        report.picked = [kept[i].key for i in picks]
    return report


def hard_filter(candidate: Candidate, normalized: str | None = None) -> str | None:
    """Why this candidate is a poor test case, or None."""
    for problem in candidate.problems:
        for prefix, stage in STAGES:
            if problem.startswith(prefix):
                return stage
    text = normalize_text(candidate.text) if normalized is None else normalized
    if _TWO_WORD_CHARACTERS.search(text) is None or text.strip(" .!?") in TRIVIAL:
        return "empty or trivial user text"
    return None
