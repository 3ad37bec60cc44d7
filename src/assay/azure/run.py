"""``evaluate()`` with azure-ai-evaluation's arguments and its output, on assay's engine.

Evaluator instances of this package run as the catalog criteria they adapt; plain functions and
callable objects run as custom evaluators (their named parameters are the inputs, ``**kwargs``
takes nothing). Rows are the peer's: ``inputs.<column>``, ``outputs.<target key>``, and per alias
the evaluator's keys (a function's dict keys, or ``output`` for a bare value). A row an evaluator
cannot score (a missing input) gets NaN in that evaluator's columns and the run goes on;
``fail_on_evaluator_errors=True`` raises instead. Metrics are the peer's: the NaN-skipping mean of
each numeric column and, per built-in alias, ``binary_aggregate``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from assay.azure.composite import CompositeEvaluator
from assay.azure.evaluators import EvaluatorBase
from assay.azure.exceptions import ErrorBlame, ErrorCategory, ErrorTarget, EvaluationException, user_error
from assay.azure.graders import AzureOpenAIGrader, grader_pass_rates
from assay.errors import UserError
from assay.evaluation import run_criteria
from assay.evaluators.catalog import load_catalog
from assay.evaluators.decorator import spec_from_function
from assay.llm import ModelRegistry
from assay.results import OutputItem, Result
from assay.results.criterion import Criterion
from assay.results.peer import NAN, peer_metrics, peer_rows, write_peer_result


def evaluate(
    *,
    data: str | Path,
    evaluators: Mapping[str, Any],
    evaluation_name: str | None = None,
    target: Callable[..., Any] | None = None,
    evaluator_config: Mapping[str, Mapping[str, Any]] | None = None,
    azure_ai_project: Any = None,
    output_path: str | Path | None = None,
    fail_on_evaluator_errors: bool = False,
    tags: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    if azure_ai_project is not None:
        warnings.warn(
            "azure_ai_project: not used by assay (results stay local; nothing is logged to a project)", stacklevel=2
        )
    if not evaluators:
        raise user_error("The 'evaluators' parameter cannot be empty.", ErrorTarget.EVALUATE)
    if not Path(str(data)).exists():
        raise user_error(
            f"Unable to load data from '{data}'. Please ensure the input is valid JSONL or CSV.",
            ErrorTarget.EVALUATE,
            ErrorCategory.FILE_OR_FOLDER_NOT_FOUND,
        )
    config = dict(evaluator_config or {})
    plan = _Plan(conversations="conversation" in _first_row(Path(str(data))))
    for alias, evaluator in evaluators.items():
        plan.add(alias, evaluator, config.get(alias) or config.get("default") or {})
    try:
        _, items = run_criteria(
            str(data),
            plan.criteria,
            plan.catalog,
            models=ModelRegistry(plan.judges),
            target=target,
            name=evaluation_name,
        )
    except UserError as exc:
        raise EvaluationException(
            exc.message, target=ErrorTarget.EVALUATE, category=ErrorCategory.INVALID_VALUE, blame=ErrorBlame.USER_ERROR
        ) from None
    plan.strict = fail_on_evaluator_errors
    rows = peer_rows(items, plan.columns)
    graded = {alias for alias, _ in plan.owner.values()} & {name.split(":")[0] for name in plan.graders}
    metrics = peer_metrics([_without(row, graded) for row in rows], plan.builtin_aliases)
    metrics.update(grader_pass_rates(rows, graded))
    result = {"rows": rows, "metrics": metrics, "studio_url": None}
    if output_path is not None:
        write_peer_result(result, output_path)
    return result


class _Plan:
    """Criteria for the run, and which alias (and adapter) each criterion's results belong to."""

    def __init__(self, conversations: bool) -> None:
        self.conversations = conversations
        """The data has a ``conversation`` column."""
        self.catalog = load_catalog()  # its own: the custom evaluators of this call are added to it
        self.criteria: list[Criterion] = []
        self.judges: list[Any] = []
        self.owner: dict[str, tuple[str, EvaluatorBase | None]] = {}
        self.builtin_aliases: list[str] = []
        self.graders: dict[str, AzureOpenAIGrader] = {}
        """The criteria that are the peer's grader wrappers, by criterion name."""
        self.strict = False
        """``fail_on_evaluator_errors``: an evaluator's error raises instead of being NaN."""

    def add(self, alias: str, evaluator: Any, config: Mapping[str, Any]) -> None:
        if isinstance(evaluator, AzureOpenAIGrader):
            name = f"{alias}:grader"
            self._append(evaluator.criterion(name, self._judge(evaluator)), name, alias, None, config)
            self.graders[name] = evaluator
            return
        parts = evaluator.parts if isinstance(evaluator, CompositeEvaluator) else [evaluator]
        if self.conversations and all(isinstance(part, EvaluatorBase) and part.per_turn for part in parts):
            # A conversation column: each conversation is evaluated turn by turn, by the class itself.
            self.builtin_aliases.append(alias)

            def per_turn(conversation: Any) -> dict[str, Any]:
                return dict(evaluator(conversation=conversation))

            self._custom(alias, per_turn, config)
            return
        if all(isinstance(part, EvaluatorBase) for part in parts):
            if len(parts) == 1:
                self.builtin_aliases.append(alias)
            for part in parts:
                name = f"{alias}:{part.key}"
                self._append(part.criterion(name, self._judge(part)), name, alias, part, config)
            return
        if not callable(evaluator):
            raise user_error(f"evaluator {alias!r} is not callable", ErrorTarget.EVALUATE)
        self._custom(alias, evaluator, config)

    def _judge(self, evaluator: EvaluatorBase | AzureOpenAIGrader) -> str:
        """The name the run's registry gives this evaluator's judge (each evaluator its own)."""
        model = f"judge{len(self.judges)}"
        judge = evaluator.judge(model)
        if judge is not None:
            self.judges.append(judge)
        return model

    def _custom(self, alias: str, evaluator: Callable[..., Any], config: Mapping[str, Any]) -> None:
        name = f"{alias}:custom"
        spec = spec_from_function(evaluator, keep_output=True, kwargs_take_every_column=True)
        spec = spec.model_copy(update={"name": name})
        self.catalog.add(spec)
        self._append({"type": "azure_ai_evaluator", "name": name, "evaluator_name": name}, name, alias, None, config)

    def _append(
        self, criterion: Criterion, name: str, alias: str, part: EvaluatorBase | None, config: Mapping[str, Any]
    ) -> None:
        mapping = config.get("column_mapping")
        if mapping is not None:
            criterion["data_mapping"] = dict(mapping)
        self.criteria.append(criterion)
        self.owner[name] = (alias, part)

    def columns(self, result: Result, item: OutputItem) -> tuple[str, dict[str, Any]]:
        """A result's alias and its columns: the peer class's keys, or a custom evaluator's output."""
        alias, part = self.owner[result.name]
        if result.status == "error" and self.strict:
            raise EvaluationException(
                f"evaluator {alias!r} failed on line {item.datasource_item_id + 1}: {result.reason}",
                target=ErrorTarget.EVALUATE,
                category=ErrorCategory.FAILED_EXECUTION,
            )
        if result.name in self.graders:
            return alias, self.graders[result.name].columns(result, alias)
        return alias, self._outputs(result, part, item.datasource_item)

    def _outputs(self, result: Result, part: EvaluatorBase | None, item: dict[str, Any]) -> dict[str, Any]:
        if part is not None:
            if result.status == "error":
                return dict.fromkeys(part.peer_dict(result, item), NAN)
            return part.peer_dict(result, item)
        if result.status == "error":
            return {}  # filled with NaN from the rows that scored (as the peer's table does)
        output = (result.properties or {}).get("output")
        if not isinstance(output, dict):
            return {"output": output}
        flat = {key: value for key, value in output.items() if key != "evaluation_per_turn"}
        for key, values in (output.get("evaluation_per_turn") or {}).items():
            flat[f"evaluation_per_turn.{key}"] = values
        return flat


def _without(row: dict[str, Any], aliases: set[str]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if not any(k.startswith(f"outputs.{a}.") for a in aliases)}


def _first_row(path: Path) -> dict[str, Any]:
    from assay.dataset import Dataset

    try:
        return next(iter(Dataset.from_path(path).items()), {})
    except UserError:
        return {}  # a bad line is reported by the run itself, with its line number
