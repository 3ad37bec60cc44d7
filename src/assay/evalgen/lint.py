"""``assay eval lint``: are the task criteria checks a judge can apply consistently?

The seed warns that vague criteria lead to inconsistent scores; this measures it. Each criterion
is judged ``repeats`` times (at temperature 1, a seed each, so the judge's own spread shows) on the
task's current response, then once on an empty response and once on an off-topic one. A criterion
is flagged when its verdict flips, when it passes the empty or the off-topic response (it does not
really check the response), or when the judge cannot decide it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from assay.errors import ItemError
from assay.evaluators.judges.judge import judge_factory
from assay.llm import Model
from assay.run.tasks import CRITERION_CHECK

OFF_TOPIC = "Here is a short poem about the sea: waves roll in, waves roll out, and the gulls cry overhead."


@dataclass
class CriterionLint:
    task: str
    criterion: str
    instruction: str
    verdicts: list[bool | None] = field(default_factory=list)
    empty: bool | None = None
    off_topic: bool | None = None

    @property
    def reasons(self) -> list[str]:
        decided = [v for v in self.verdicts if v is not None]
        found = []
        if not decided:
            found.append("the judge could not decide it")
        elif len(set(decided)) > 1:
            found.append(f"its verdict flips: passed {sum(decided)} of {len(decided)} judgings of the same response")
        if self.empty:
            found.append("it passes an empty response, so it does not check the response")
        if self.off_topic:
            found.append("it passes an off-topic response; make it name what the response must contain")
        return found


async def lint(
    model: Model, tasks: list[dict[str, Any]], responses: dict[str, str], repeats: int
) -> list[CriterionLint]:
    """Every criterion of every task; ``responses`` maps a task's name to its current response."""

    async def verdict(task: dict[str, Any], instruction: str, response: str, seed: int) -> bool | None:
        inputs = {"query": task["query"], "response": response, "criterion": instruction}
        if task.get("ground_truth"):
            inputs["ground_truth"] = task["ground_truth"]
        try:
            score = await judge_factory(CRITERION_CHECK)(model, "turn", 1.0, seed)(inputs)
        except ItemError:
            return None
        return None if score.value is None else score.value >= 1

    async def one(task: dict[str, Any], check: dict[str, Any]) -> CriterionLint:
        response = responses.get(task["name"], "")
        runs = [verdict(task, check["instruction"], response, seed) for seed in range(1, repeats + 1)]
        runs += [verdict(task, check["instruction"], "", 0), verdict(task, check["instruction"], OFF_TOPIC, 0)]
        found = await asyncio.gather(*runs)
        return CriterionLint(
            task["name"],
            check["name"],
            check["instruction"],
            list(found[:repeats]),
            empty=found[repeats],
            off_topic=found[repeats + 1],
        )

    return list(await asyncio.gather(*(one(task, check) for task in tasks for check in task.get("criteria") or [])))
