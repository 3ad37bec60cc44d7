"""How many model calls an optimization job makes, and what they cost, before it runs: Foundry's
``agents.estimate_optimization_job`` and ``assay optimize --estimate``.

A scoring is one task scored ``task_repeats`` times: per trial, one agent call and one call per
judge. The search scores the baseline on the validation split. Each iteration then scores a
minibatch twice (the parent and the proposal) and calls the optimization model once. A candidate it
accepts is scored on the validation split, and the final comparison scores two candidates on the
test split. Three bands:
- low: nothing is accepted, and the search stops after ``max_stalls`` iterations;
- typical: ``max_candidates`` accepted, with ``max_stalls`` stalls among them;
- ceiling: ``max_stalls`` stalls before each acceptance and after the last.

On scenarios (a ``user_conversation_simulation`` set), a scoring is ``conversation_repetitions``
conversations of ``max_num_turns`` turns each (the most they may take), a turn an agent call and a
call of the simulated user, which the evaluation model plays; the judges then read each conversation.

Cost uses each stage's model price (``price`` in the models file) and rough tokens per call: the
texts' characters / 4, plus a fixed reply. A stage whose model has no price is listed as unpriced.
The cost is left out when no stage is priced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.optimize.search import Settings, split

STAGES = ("agent", "evaluation", "optimization")
REPLY_TOKENS = {"agent": 150, "evaluation": 100}
JUDGE_PROMPT_TOKENS = 500
REFLECTION_PROMPT_TOKENS = 500
DEFAULT_MAX_TURNS = 20
"""A simulation's ``max_num_turns`` when none is given (``assay.simulate.runs``)."""


@dataclass(frozen=True)
class Band:
    low: float
    typical: float
    ceiling: float

    def scaled(self, by: float) -> Band:
        return Band(self.low * by, self.typical * by, self.ceiling * by)

    def as_dict(self) -> dict[str, float]:
        return {"low": self.low, "typical": self.typical, "ceiling": self.ceiling}


@dataclass(frozen=True)
class Plan:
    """Iterations and task scorings (each ``task_repeats`` trials) in each band."""

    iterations: Band
    scorings: Band
    minibatch: int


def plan(parts: dict[str, list[dict[str, Any]]], settings: Settings) -> Plan:
    """``parts``: the tasks split as the search splits them (``train``, ``validation``, ``test``)."""
    batch = min(settings.minibatch, len(parts["train"]))
    validation, test = len(parts["validation"]), len(parts["test"])
    stalls, candidates = settings.max_stalls, settings.max_candidates
    bands = {
        "low": (stalls, 0),
        "typical": (candidates + stalls, candidates),
        "ceiling": (candidates + stalls * (candidates + 1), candidates),
    }
    iterations = {band: float(n) for band, (n, _) in bands.items()}
    scorings = {
        band: float(validation + n * 2 * batch + accepted * validation + 2 * test)
        for band, (n, accepted) in bands.items()
    }
    return Plan(Band(**iterations), Band(**scorings), batch)


def estimate(
    tasks: list[dict[str, Any]],
    validation: list[dict[str, Any]] | None,
    settings: Settings,
    *,
    judges: int,
    instructions: str,
    prices: dict[str, Any],
) -> dict[str, Any]:
    """Foundry's ``AgentOptimizationEstimateResult``. ``judges``: model calls per trial to score one
    task; ``prices``: each stage's model price (None when it has none)."""
    parts = split(tasks, settings) if validation is None else {"train": tasks, "validation": validation, "test": []}
    planned = plan(parts, settings)
    if settings.simulation is None:
        trials = planned.scorings.scaled(settings.task_repeats)
        calls = {"agent": trials, "evaluation": trials.scaled(judges), "optimization": planned.iterations}
    else:  # each scoring is conversations, counted at their longest: an agent and a user call a turn
        conversations = planned.scorings.scaled(int(settings.simulation.get("conversation_repetitions") or 1))
        turns = int(settings.simulation.get("max_num_turns") or DEFAULT_MAX_TURNS)
        calls = {
            "agent": conversations.scaled(turns),
            "evaluation": conversations.scaled(judges + turns),  # the evaluation model plays the user
            "optimization": planned.iterations,
        }
    result: dict[str, Any] = {"call_counts": {stage: band.as_dict() for stage, band in calls.items()}}
    query = sum(len(str(t.get("query") or "")) for t in tasks) / max(len(tasks), 1) / 4
    own = len(instructions) / 4
    tokens = {  # (prompt, completion) tokens of one call
        "agent": (own + query, REPLY_TOKENS["agent"]),
        "evaluation": (JUDGE_PROMPT_TOKENS + query + REPLY_TOKENS["agent"], REPLY_TOKENS["evaluation"]),
        "optimization": (
            REFLECTION_PROMPT_TOKENS + own + planned.minibatch * (query + sum(REPLY_TOKENS.values())),
            own + 100,
        ),
    }
    return _priced(result, calls, tokens, prices)


def estimate_rewrite(instructions: str, guidance: tuple[str, ...], price: Any) -> dict[str, Any]:
    """A ``prompt_optimization`` job's estimate: one call of the optimization model in every band,
    which reads the instructions and the guidance and writes the instructions again."""
    once, none = Band(1, 1, 1), Band(0, 0, 0)
    calls = {"agent": none, "evaluation": none, "optimization": once}
    own = len(instructions) / 4
    tokens = {"optimization": (REFLECTION_PROMPT_TOKENS + own + sum(map(len, guidance)) / 4, own + 100)}
    result: dict[str, Any] = {"call_counts": {stage: band.as_dict() for stage, band in calls.items()}}
    return _priced(result, calls, tokens, {"optimization": price})


def _priced(
    result: dict[str, Any], calls: dict[str, Band], tokens: dict[str, tuple[float, float]], prices: dict[str, Any]
) -> dict[str, Any]:
    """``result`` with the cost of ``calls`` at each stage's price, when any stage has one."""
    by_stage = {
        stage: calls[stage].scaled(prices[stage].cost(int(tokens[stage][0]), int(tokens[stage][1])))
        for stage in STAGES
        if prices.get(stage) is not None and stage in tokens
    }
    if by_stage:
        total = Band(
            *(round(sum(getattr(b, band) for b in by_stage.values()), 4) for band in ("low", "typical", "ceiling"))
        )
        result["cost"] = {
            "currency": "USD",
            "total": total.as_dict(),
            "by_stage": {stage: band.as_dict() for stage, band in by_stage.items()},
            "unpriced_stages": [stage for stage in STAGES if stage not in by_stage],
        }
    return result
