"""Bias probes for judges (``assay judges bias``): does the score follow the response's length, and
does a pairwise verdict follow the order the responses were shown in?

- **length**: per criterion, the scores against the judged response's length in words: Spearman's ρ,
  the least-squares slope per 100 words and the slope's two-sided p-value (Pearson's r, t with n-2
  degrees of freedom). Verbosity bias shows as a positive ρ with a small p.
- **position**: the same item's responses from two runs, shown to a pairwise judge as A then B and
  again as B then A (MT-Bench's swap). A consistent judge prefers the same response both times;
  one biased by position picks the same *slot*. Reported: consistency, the first slot's share of
  the picks with its Wilson interval (0.5 inside it: no measurable preference), the items that flipped.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from assay.llm.model import Model, ModelError
from assay.llm.structured import ask_structured
from assay.messages import response_text
from assay.results import OutputItem
from assay.stats.core import clustered_rate_interval, mcnemar, spearman, t_cdf


def response_of(output: OutputItem) -> str:
    """The response the judges saw: the target's sample, else the item's own ``response``."""
    sample = output.sample or {}
    if sample.get("output_text") is not None:
        return str(sample["output_text"])
    return response_text(output.datasource_item.get("response"))


def query_of(output: OutputItem) -> str:
    query = output.datasource_item.get("query")
    return response_text(query) if query is not None else ""


def length_bias(outputs: Iterable[OutputItem]) -> list[dict[str, Any]]:
    """Per criterion with numeric scores: n, ρ, slope per 100 words, p of the slope."""
    points: dict[str, list[tuple[float, float]]] = {}
    for output in outputs:
        words = float(len(response_of(output).split()))
        for result in output.results:
            if result.status == "completed" and result.score is not None:
                points.setdefault(result.name, []).append((words, result.score))
    return [{"criterion": name, "n": len(pairs), **_regression(pairs)} for name, pairs in sorted(points.items())]


def _regression(pairs: list[tuple[float, float]]) -> dict[str, float | None]:
    n = len(pairs)
    xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in pairs)
    if n < 3 or sxx == 0 or syy == 0:
        return {"spearman": None, "slope_per_100_words": None, "p_value": None}
    r = sxy / math.sqrt(sxx * syy)
    if abs(r) >= 1:
        p = 0.0
    else:
        t = r * math.sqrt((n - 2) / (1 - r * r))
        p = 2 * (1 - t_cdf(abs(t), n - 2))
    return {"spearman": spearman(xs, ys), "slope_per_100_words": 100 * sxy / sxx, "p_value": p}


PAIRWISE_SYSTEM = (
    "You compare two responses to the same query and say which answers it better: accurate, complete, "
    "and to the point. Length is no merit in itself. Reply with JSON: "
    '{"reason": "<one sentence>", "better": "A" | "B" | "tie"}.'
)
PAIRWISE_SCHEMA = {
    "type": "object",
    "properties": {"reason": {"type": "string"}, "better": {"type": "string", "enum": ["A", "B", "tie"]}},
    "required": ["reason", "better"],
    "additionalProperties": False,
}


@dataclass
class PositionProbe:
    n: int = 0
    consistent: int = 0
    first_slot: int = 0
    """Picks of whichever response was shown first (ties left out)."""
    picks: int = 0
    unparsed: int = 0
    """Verdicts that could not be read (either order): the item is left out and counted here."""
    flipped: list[int] = field(default_factory=list)
    """Items whose preferred response changed with the order."""
    per_item: list[tuple[int, int]] = field(default_factory=list)
    """Each item's picks of the first slot and its picks (0–2 each): its two orders are one item's
    verdicts, not two independent picks, so the interval is clustered by item."""
    primacy: int = 0
    """Items whose verdict followed the order toward the first slot (A both times)."""
    recency: int = 0
    """Items whose verdict followed the order toward the second slot (B both times)."""

    def as_dict(self) -> dict[str, Any]:
        interval = clustered_rate_interval(self.per_item) if len(self.per_item) >= 2 else None
        # Paired by item: only an item whose verdict followed the order says anything about position,
        # and without a bias it leans first or second alike (a sign test, McNemar's exact test).
        p_value = mcnemar(self.primacy, self.recency)
        return {
            "n": self.n,
            "consistency": self.consistent / self.n if self.n else None,
            "first_slot_rate": self.first_slot / self.picks if self.picks else None,
            "first_slot_ci": list(interval) if interval else None,
            "primacy": self.primacy,
            "recency": self.recency,
            "p_value": p_value,
            "position_bias": p_value < 0.05,
            "unparsed": self.unparsed,
            "flipped": self.flipped,
        }


async def position_probe(
    model: Model, pairs: list[tuple[int, str, str, str]], *, concurrency: int = 16
) -> PositionProbe:
    """``pairs``: (item id, query, response of run A, response of run B)."""
    probe = PositionProbe()
    slots = asyncio.Semaphore(concurrency)

    async def verdict(query: str, first: str, second: str) -> str | None:
        messages = [
            {"role": "system", "content": PAIRWISE_SYSTEM},
            {"role": "user", "content": f"# Query\n{query}\n\n# Response A\n{first}\n\n# Response B\n{second}"},
        ]
        async with slots:
            try:
                answer, _ = await ask_structured(model, messages, "pairwise_verdict", PAIRWISE_SCHEMA, temperature=0)
            except ModelError:
                return None
        better = (answer or {}).get("better")
        return better if better in ("A", "B", "tie") else None

    async def one(item: int, query: str, a: str, b: str) -> None:
        straight, swapped = await asyncio.gather(verdict(query, a, b), verdict(query, b, a))
        if straight is None or swapped is None:
            probe.unparsed += 1
            return
        probe.n += 1
        # The response preferred, named by run: A shown first, then B shown first.
        preferred = {"A": "a", "B": "b", "tie": "tie"}[straight], {"A": "b", "B": "a", "tie": "tie"}[swapped]
        if preferred[0] == preferred[1]:
            probe.consistent += 1
        else:
            probe.flipped.append(item)
            probe.primacy += straight == swapped == "A"
            probe.recency += straight == swapped == "B"
        picks = [answer for answer in (straight, swapped) if answer != "tie"]
        probe.picks += len(picks)
        probe.first_slot += picks.count("A")
        if picks:
            probe.per_item.append((picks.count("A"), len(picks)))

    await asyncio.gather(*(one(*pair) for pair in pairs))
    probe.flipped.sort()
    return probe
