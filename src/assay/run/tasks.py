"""Tasks (seed 002): dataset rows ``{name, query, ground_truth?, criteria?: [{name, instruction}]}``.

Each task-level criterion is judged pass/fail by ``builtin.task_adherence`` with its instruction
as the thing checked (the model and mapping of the eval's own task_adherence criterion when it
has one, the eval's judge otherwise), and stored as its own result, ``criteria.<name>``, so a
user sees which check failed. A task's score is the mean of its criteria and the shared
evaluators, each normalised to 0–1 (binary 1/0, 1–5 as (s − 1)/4, severities reversed, rubric
scores as they are); the run's composite is the mean over tasks.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

from assay.dataset import Dataset
from assay.dataset.source import source_name
from assay.errors import DataError, DataIssue, ItemError
from assay.evaluators.base import EvaluationLevel
from assay.evaluators.catalog import Catalog
from assay.evaluators.judges.judge import JudgeDefinition, judge_factory
from assay.llm import ModelRegistry
from assay.mapping import default_mapping
from assay.results import Result
from assay.results.criterion import Criterion
from assay.results.records import TaskScore, TaskSummary
from assay.run.criteria import BoundCriterion
from assay.store import Store

TASK_ADHERENCE = "builtin.task_adherence"
PREFIX = "criteria."
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
CRITERION_CHECK = JudgeDefinition(
    name="task criterion",
    description="Whether the response meets one task-level criterion.",
    instructions=(
        "Read the QUERY and the agent's RESPONSE (with any tool calls it made). Decide only whether the RESPONSE "
        "meets the CRITERION below, read literally: score 1 if it clearly does, 0 if it does not or only partly "
        "does. Judge nothing else about the response."
    ),
    rubric={0: "the criterion is not met", 1: "the criterion is met"},
    required=("query", "response", "criterion"),
    optional=("ground_truth", "tool_definitions"),
    category="agents",
    kind="binary",
    low=0,
    high=1,
    threshold=1,
    skip_intermediate=True,
)


@dataclass
class TaskCriteria(BoundCriterion):
    """Judges every criterion an item lists, one result each."""

    async def evaluate_all(self, item: dict[str, Any], sample: dict[str, Any] | None) -> list[Result]:
        checks = item.get("criteria") or []
        if not checks:
            return []
        try:
            inputs = self._inputs(item, sample)
        except ItemError as exc:
            return [self._named(check, self._error(str(exc), exc.code)) for check in checks]
        outcomes = await asyncio.gather(*(self._check(inputs, check) for check in checks))
        return list(outcomes)

    async def _check(self, inputs: dict[str, Any], check: dict[str, Any]) -> Result:
        try:
            score = await self.evaluator({**inputs, "criterion": check["instruction"]})
        except ItemError as exc:
            return self._named(check, self._error(str(exc), exc.code, exc.details))
        except Exception as exc:  # noqa: BLE001 - one failed check is that result's error
            return self._named(check, self._error(f"{type(exc).__name__}: {exc}", "evaluator_error"))
        return self._named(check, self._result(score))

    def failed_for(self, item: dict[str, Any], error: ItemError) -> list[Result]:
        return [self._named(check, self.failed(error)) for check in item.get("criteria") or []]

    def _named(self, check: dict[str, Any], result: Result) -> Result:
        properties = {**result.properties, "instruction": check["instruction"]}
        return result.model_copy(update={"name": f"{PREFIX}{check['name']}", "properties": properties})


def task_criteria(
    testing_criteria: list[Criterion],
    bound: list[BoundCriterion],
    catalog: Catalog,
    models: ModelRegistry | None,
    *,
    item_fields: set[str] | None,
    has_sample: bool,
    level: EvaluationLevel,
) -> TaskCriteria:
    """The criterion that judges task-level criteria, built like the eval's own task_adherence."""
    spec = catalog.get(TASK_ADHERENCE)
    own = next((c for c in bound if c.spec.name == TASK_ADHERENCE), None)
    wire = next((c for c in testing_criteria if c.get("evaluator_name") == TASK_ADHERENCE), None)
    params = (wire.get("initialization_parameters") if wire is not None else None) or {}
    model = (models or ModelRegistry()).get(params.get("model") or params.get("deployment_name"))
    model.check_credentials()
    evaluator = judge_factory(CRITERION_CHECK)(model, "turn", 0.0)
    mapping = (
        own.mapping
        if own is not None
        else default_mapping([*spec.inputs], item_fields, has_sample, where="task criteria")
    )
    return TaskCriteria("criteria", "azure_ai_evaluator", spec, evaluator, mapping, 1.0, False, level)


def check_tasks(dataset: Dataset) -> bool:
    """Whether the rows are tasks with criteria; each criterion and each task name is checked,
    and a task name used twice names both lines."""
    seen: dict[str, tuple[str, int]] = {}
    issues: list[DataIssue] = []
    has_criteria = False
    for row in dataset.rows():
        if row.item is None:
            continue
        criteria = row.item.get("criteria")
        if criteria is None:
            continue
        has_criteria = True
        source = source_name(dataset, row)
        issues.extend(_criteria_issues(source, row.line, criteria))
        name = row.item.get("name")
        if not isinstance(name, str) or not name:
            issues.append(DataIssue(source, row.line, "a task with criteria needs a 'name'", "name"))
        elif name in seen:
            first = f"{seen[name][0]}:{seen[name][1]}" if seen[name][0] != source else f"line {seen[name][1]}"
            issues.append(DataIssue(source, row.line, f"task name {name!r} is already used on {first}", "name"))
        else:
            seen[name] = (source, row.line)
    if issues:
        raise DataError(issues)
    return has_criteria


def _criteria_issues(source: str, line: int, criteria: Any) -> list[DataIssue]:
    shape = 'expected [{"name": "mentions_30_days", "instruction": "Response must mention ..."}]'
    if not isinstance(criteria, list):
        return [DataIssue(source, line, f"criteria: {shape}", "criteria")]
    issues, names = [], set()
    for index, check in enumerate(criteria):
        at = f"criteria[{index}]"
        if (
            not isinstance(check, dict)
            or not isinstance(check.get("instruction"), str)
            or not check["instruction"].strip()
        ):
            issues.append(DataIssue(source, line, f"{at}: needs an 'instruction' saying what to check", at))
        elif not isinstance(check.get("name"), str) or not NAME.match(check["name"]):
            issues.append(DataIssue(source, line, f"{at}.name: a short name such as is_polite", f"{at}.name"))
        elif check["name"] in names:
            issues.append(
                DataIssue(source, line, f"{at}.name: {check['name']!r} is used twice in this task", f"{at}.name")
            )
        else:
            names.add(check["name"])
    return issues


def summarize_tasks(store: Store, run_id: str, criteria: list[BoundCriterion]) -> TaskSummary:
    scales = {
        c.name: (c.spec.primary.min_value, c.spec.primary.max_value, c.spec.primary.desirable_direction)
        for c in criteria
    }
    summary = TaskSummary()
    by_name: dict[str, TaskScore] = {}
    for output in store.iter_output_items(run_id):
        item = output.datasource_item
        values, passed, total = [], 0, 0
        for result in output.results:
            if result.status != "completed" or result.score is None:
                continue
            if result.name.startswith(PREFIX):
                total += 1
                passed += bool(result.passed)
                values.append(1.0 if result.passed else 0.0)
            elif result.name in scales:
                values.append(normalized(result.score, *scales[result.name]))
        name = task_name(item) or str(output.datasource_item_id)
        score = sum(values) / len(values) if values else None
        known = by_name.get(name)
        if known is None:
            by_name[name] = TaskScore(name=name, score=score, criteria_passed=passed, criteria_total=total)
            summary.tasks.append(by_name[name])
            continue
        # Another trial of the same task (target repeats): the task's score is the mean of its trials.
        if score is not None:
            known.score = score if known.score is None else (known.score * known.trials + score) / (known.trials + 1)
        known.trials += 1
        known.criteria_passed += passed
        known.criteria_total += total
    scored = [t.score for t in summary.tasks if t.score is not None]
    summary.composite = sum(scored) / len(scored) if scored else None
    return summary


def task_name(item: dict[str, Any]) -> str | None:
    """The task an item is: its ``name``, or the ``test_case_id`` of the scenario it played out."""
    name = item.get("name") or item.get("test_case_id")
    return None if name is None else str(name)


def normalized(value: float, low: float, high: float, direction: str) -> float:
    """A score on its evaluator's scale, as 0–1 where 1 is best."""
    share = 0.0 if high <= low else min(max((value - low) / (high - low), 0.0), 1.0)
    return 1.0 - share if direction == "decrease" else share
