"""``assay.evaluate()``: azure-ai-evaluation's ``evaluate()`` contract on assay's engine.

    result = evaluate(
        data="data.jsonl",
        evaluators={"f1": "builtin.f1_score", "exact": exact_match},
        evaluator_config={"f1": {"column_mapping": {"response": "${data.answer}"}}},
    )
    result["rows"]     # [{"inputs.query": ..., "outputs.f1.f1_score": 0.5, ...}]
    result["metrics"]  # {"f1.f1_score": 0.41, "f1.binary_aggregate": 0.33, ...}
    result["run"]      # assay's typed summary and run id

A user of the peer switches by changing the import.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from assay.dataset import Dataset
from assay.errors import ConfigError
from assay.evaluators.base import EvaluatorSpec
from assay.evaluators.catalog import Catalog, load_catalog
from assay.evaluators.decorator import spec_from_function
from assay.llm import ModelRegistry
from assay.run import EvalDefinition, RunOptions, RunOutcome, finish_run, prepare, start
from assay.store import Store
from assay.target import TargetSpec

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
) -> dict[str, Any]:
    """Evaluate ``data`` with ``evaluators``; returns ``{rows, metrics, run}`` like the peer."""
    catalog = catalog or load_catalog()
    config = dict(evaluator_config or {})
    criteria = [
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
    rows = [_peer_row(item) for item in items]
    result = {
        "rows": rows,
        "metrics": _metrics(rows, list(evaluators)),
        "run": {"id": outcome.run["id"], "status": outcome.run["status"], **outcome.summary.model_dump()},
        "studio_url": None,
    }
    if output_path is not None:
        _write(result, Path(output_path))
    return result


def run_criteria(
    data: str | Path | list[dict[str, Any]],
    criteria: list[dict[str, Any]],
    catalog: Catalog,
    *,
    models: ModelRegistry | None = None,
    target: Callable[..., Any] | None = None,
    name: str | None = None,
    level: str = "turn",
    store: Store | None = None,
    concurrency: int = 64,
) -> tuple[RunOutcome, list[dict[str, Any]]]:
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
    prepared = prepare(definition, dataset, catalog, models=models, target=spec)
    own_store = store is None
    store = store or Store()
    try:
        run = start(prepared, store)
        outcome = finish_run(prepared, run, store, options=RunOptions(concurrency=concurrency))
        return outcome, list(store.iter_output_items(run["id"]))
    finally:
        if own_store:
            store.close()


def _criterion(alias: str, ref: EvaluatorRef, config: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    if isinstance(ref, str):
        name = ref
    else:
        spec = ref if isinstance(ref, EvaluatorSpec) else spec_from_function(ref)
        spec = spec.model_copy(update={"name": alias})
        if alias in catalog:
            raise ConfigError(f"evaluator alias {alias!r} clashes with a catalog evaluator", hint="pick another alias")
        catalog.add(spec)
        name = alias
    criterion: dict[str, Any] = {"type": "azure_ai_evaluator", "name": alias, "evaluator_name": name}
    mapping = config.get("column_mapping")
    if mapping is not None:
        for key, value in mapping.items():
            if not isinstance(value, str) or not value.strip().startswith(
                ("${data.", "${target.", "${run.outputs.", "{{")
            ):
                where = f"evaluator_config[{alias!r}].column_mapping[{key!r}]"
                raise ConfigError(f"{where} = {value!r}: use ${{data.<column>}} or ${{target.<output>}}")
        criterion["data_mapping"] = dict(mapping)
    for key in ("initialization_parameters", "threshold"):
        if key in config:
            criterion[key] = config[key]
    return criterion


def _peer_row(row: dict[str, Any]) -> dict[str, Any]:
    """Flatten an output item into the peer's ``inputs.*`` / ``outputs.<alias>.*`` columns."""
    flat: dict[str, Any] = {f"inputs.{k}": v for k, v in row["datasource_item"].items()}
    for key, value in (row["sample"] or {}).items():
        if key not in ("input", "error", "latency_ms", "usage", "output_items", "output_tools", "cached"):
            flat[f"outputs.{key}"] = value
    for result in row["results"]:
        prefix, metric = f"outputs.{result['name']}", result["metric"]
        flat[f"{prefix}.{metric}"] = result.get("score")
        flat[f"{prefix}.{metric}_result"] = result.get("label") or (
            "not_applicable" if result["status"] == "skipped" else None
        )
        flat[f"{prefix}.{metric}_passed"] = result.get("passed")
        flat[f"{prefix}.{metric}_threshold"] = result.get("threshold")
        flat[f"{prefix}.{metric}_reason"] = result.get("reason")
        flat[f"{prefix}.{metric}_status"] = result["status"]
        flat[f"{prefix}.{metric}_properties"] = result.get("properties") or {}
    return flat


def _metrics(rows: list[dict[str, Any]], aliases: list[str]) -> dict[str, float]:
    """NaN-skipping means of numeric outputs, and each alias's ``binary_aggregate`` pass share."""
    metrics: dict[str, float] = {}
    for alias in aliases:
        prefix = f"outputs.{alias}."
        keys = {k for row in rows for k in row if k.startswith(prefix)}
        for key in sorted(keys):
            if key.endswith(("_threshold", "_result", "_reason", "_status", "_properties")):
                continue
            values = [float(row[key]) for row in rows if isinstance(row.get(key), (int, float))]
            values = [v for v in values if not math.isnan(v)]
            if values:
                metrics[f"{alias}.{key[len(prefix) :]}"] = sum(values) / len(values)
        labels = [row.get(k) for row in rows for k in keys if k.endswith("_result")]
        if rows:
            metrics[f"{alias}.binary_aggregate"] = round(labels.count("pass") / len(rows), 2)
    return metrics


def _write(result: dict[str, Any], path: Path) -> None:
    import json

    target = path / "evaluation_results.json" if path.is_dir() else path
    target.write_text(json.dumps(result, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
