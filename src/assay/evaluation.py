"""``assay.evaluate()``: azure-ai-evaluation's ``evaluate()`` contract on assay's engine. (The
module is not named ``evaluate``: importing it would rebind ``assay.evaluate`` to the module.)

    result = evaluate(
        data="data.jsonl",
        evaluators={"f1": "builtin.f1_score", "exact": exact_match},
        evaluator_config={"f1": {"column_mapping": {"response": "${data.answer}"}}},
    )
    result["rows"]     # [{"inputs.query": ..., "outputs.f1.f1_score": 0.5, ...}]
    result["metrics"]  # {"f1.f1_score": 0.41, "f1.binary_aggregate": 0.33, ...}
    result["run"]      # the run's id, status and summary
    result.summary     # the same run, typed: RunSummary, and result.output_items (OutputItem)

A user of the peer switches by changing the import.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from assay.dataset import Dataset
from assay.errors import ConfigError
from assay.evaluators.base import EvaluatorSpec
from assay.evaluators.catalog import Catalog, load_catalog
from assay.evaluators.decorator import spec_from_function
from assay.llm import ModelRegistry
from assay.results import OutputItem, RunSummary
from assay.results.criterion import Criterion
from assay.results.peer import generic_columns, peer_metrics, peer_rows, write_peer_result
from assay.run import EvalDefinition, RunOptions, RunOutcome, finish_run
from assay.run.request import RunRequest, prepare_request, settings_of, start_request
from assay.store import Store
from assay.targets import TargetSpec

EvaluatorRef = str | EvaluatorSpec | Callable[..., Any]


def evaluate(
    *,
    data: str | Path | list[dict[str, Any]],
    evaluators: Mapping[str, EvaluatorRef],
    evaluator_config: Mapping[str, Mapping[str, Any]] | None = None,
    evaluation_name: str | None = None,
    evaluation_level: str = "turn",
    output_path: str | Path | None = None,
    target: Callable[..., Any] | None = None,
    store: Store | None = None,
    catalog: Catalog | None = None,
    concurrency: int = 64,
    **_peer_only: Any,
) -> Evaluation:
    """Evaluate ``data`` with ``evaluators``; returns ``{rows, metrics, run}`` like the peer."""
    _check_keywords(_peer_only)
    catalog = catalog or load_catalog()
    config = dict(evaluator_config or {})
    criteria: list[Criterion] = [
        _criterion(alias, ref, config.get(alias) or config.get("default") or {}, catalog)
        for alias, ref in evaluators.items()
    ]
    outcome, items = run_criteria(
        data,
        criteria,
        catalog,
        target=target,
        name=evaluation_name,
        level=evaluation_level,
        store=store,
        concurrency=concurrency,
    )
    result = Evaluation.of(outcome, items, list(evaluators))
    if output_path is not None:
        write_peer_result(result, output_path, indent=2)
    return result


PEER_KEYWORDS = {"azure_ai_project", "fail_on_evaluator_errors", "tags", "user_agent", "credential"}
"""azure-ai-evaluation's ``evaluate()`` arguments assay takes and has no use for (code written for it runs)."""


def _check_keywords(given: dict[str, Any]) -> None:
    """A keyword ``evaluate()`` does not know is a typo to name, not a setting to drop (the peer's
    private ``_use_...`` switches aside)."""
    unknown = sorted(key for key in given if key not in PEER_KEYWORDS and not key.startswith("_"))
    if unknown:
        known = [*inspect.signature(evaluate).parameters][:-1]
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise TypeError(f"evaluate() got an unexpected keyword argument {unknown[0]!r}{hint}")


class Evaluation(dict[str, Any]):
    """What ``evaluate()`` returns: the peer's dict (``rows``, ``metrics``, ``run``, ``studio_url``),
    with the stored run typed beside it (``run_id``, ``summary``, ``output_items``). The rows are a
    view of the output items: each item's results are its row's ``outputs.<alias>.*`` columns."""

    run_id: str
    summary: RunSummary
    output_items: list[OutputItem]

    @classmethod
    def of(cls, outcome: RunOutcome, items: list[OutputItem], aliases: list[str]) -> Evaluation:
        rows = peer_rows(items, lambda result, _: (result.name, generic_columns(result)))
        run = {"id": outcome.run.id, "status": outcome.run.status, **outcome.summary.model_dump()}
        result = cls(rows=rows, metrics=peer_metrics(rows, aliases), run=run, studio_url=None)
        result.run_id, result.summary, result.output_items = outcome.run.id, outcome.summary, items
        return result


def run_criteria(
    data: str | Path | list[dict[str, Any]],
    criteria: list[Criterion],
    catalog: Catalog,
    *,
    models: ModelRegistry | None = None,
    target: Callable[..., Any] | None = None,
    name: str | None = None,
    level: str = "turn",
    store: Store | None = None,
    concurrency: int = 64,
) -> tuple[RunOutcome, list[OutputItem]]:
    """One run of ``criteria`` over ``data``: its outcome and its output items. Stored, like a CLI
    run, in ``store`` or else the default store (``$ASSAY_DATABASE_URL``, or ``$ASSAY_HOME``), so
    ``assay runs list``, the UI and ``assay report`` see it."""
    dataset = Dataset.from_content(list(data)) if isinstance(data, list) else Dataset.from_path(data)
    definition = EvalDefinition(
        name=name or "evaluate",
        testing_criteria=criteria,
        evaluation_level="conversation" if level == "conversation" else "turn",
    )
    spec = TargetSpec(kind="callable", function=target) if target is not None else None
    # Its items and evaluators may be Python objects: the request records where the items came
    # from, and only this process can finish the run (no inputs are stored for a worker).
    source = {"type": "jsonl", "source": {"type": "file_path", "path": str(dataset.path or dataset.name)}}
    request = RunRequest(data_source=source, settings=settings_of(definition))
    own_store = store is None
    store = store or Store()
    try:
        prepared = prepare_request(request, definition, store, catalog, models, target=spec, dataset=dataset)
        run = start_request(prepared, store, request)
        outcome = finish_run(prepared, run, store, options=RunOptions(concurrency=concurrency))
        return outcome, list(store.iter_output_items(run.id))
    finally:
        if own_store:
            store.close()


def _criterion(alias: str, ref: EvaluatorRef, config: Mapping[str, Any], catalog: Catalog) -> Criterion:
    if isinstance(ref, str):
        name = ref
    else:
        spec = ref if isinstance(ref, EvaluatorSpec) else spec_from_function(ref)
        spec = spec.model_copy(update={"name": alias})
        if alias in catalog:
            raise ConfigError(f"evaluator alias {alias!r} clashes with a catalog evaluator", hint="pick another alias")
        catalog.add(spec)
        name = alias
    criterion: Criterion = {"type": "azure_ai_evaluator", "name": alias, "evaluator_name": name}
    mapping = config.get("column_mapping")
    if mapping is not None:
        for key, value in mapping.items():
            if not isinstance(value, str) or not value.strip().startswith(
                ("${data.", "${target.", "${run.outputs.", "{{")
            ):
                where = f"evaluator_config[{alias!r}].column_mapping[{key!r}]"
                raise ConfigError(f"{where} = {value!r}: use ${{data.<column>}} or ${{target.<output>}}")
        criterion["data_mapping"] = dict(mapping)
    if "initialization_parameters" in config:
        criterion["initialization_parameters"] = config["initialization_parameters"]
    if "threshold" in config:
        criterion["threshold"] = config["threshold"]
    return criterion
