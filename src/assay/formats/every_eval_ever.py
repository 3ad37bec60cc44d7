"""Every Eval Ever (EvalEval's shared record of evaluation results, schema 0.3.0), both ways:
``assay import every-eval-ever RECORD.json...`` and ``assay report RUN --every-eval-ever DIR``.

A record is one model's results: ``evaluation_results``, one per benchmark and metric, each with its
``score_details.score``; beside it, optionally, a JSONL of instance-level rows (one per sample and
evaluation: ``input``, ``output``, ``evaluation.score`` and ``is_correct``) that
``detailed_evaluation_results.file_path`` names. Imported, a record is an eval and a finished run
named after its source and model: a criterion per evaluation result, and an output item per sample
when the rows are found (beside the record, by the file's name); without them the run keeps the
reported scores as its summary. Exported, a run is a record (``evaluation_id`` ``assay/EVAL/RUN``):
an evaluation result per criterion, its pass rate with the Wilson interval (``metric_kind:
pass_rate``) and, for scored criteria, its mean score, and the instance-level rows of every item and
criterion, their checksum and count in the record.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.formats.imported import (
    Imported,
    ImportedRun,
    object_of,
    run_ids,
    run_model,
    store_run,
    stored_already,
    tokens_of,
    usage_of,
)
from assay.results import CriterionSummary, OutputItem, Result, ResultCounts, RunSummary
from assay.store import DEFAULT_PROJECT, Store

SCHEMA_VERSION = "0.3.0"


# -- importing --------------------------------------------------------------------------------------


def read_record(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The record and its instance-level rows (none when its samples file is not beside it)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not JSON ({exc})") from None
    if not isinstance(record, dict) or not isinstance(record.get("evaluation_results"), list):
        raise ConfigError(
            f"{path}: not an Every Eval Ever record (no evaluation_results)",
            hint="give the aggregate .json record; its _samples.jsonl is read from beside it",
        )
    detail = record.get("detailed_evaluation_results")
    rows: list[dict[str, Any]] = []
    if isinstance(detail, dict) and isinstance(detail.get("file_path"), str):
        beside = path.parent / Path(detail["file_path"]).name  # by the name the record gives, else the record's
        if not beside.is_file():
            beside = path.with_name(f"{path.stem}_samples.jsonl")
        if beside.is_file():
            for number, line in enumerate(beside.read_text(encoding="utf-8-sig").splitlines(), start=1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except ValueError as exc:
                        raise ConfigError(f"{beside}:{number}: not JSON ({exc})") from None
    return record, rows


def import_record(
    store: Store, record: dict[str, Any], rows: list[dict[str, Any]], where: str, project: str = DEFAULT_PROJECT
) -> Imported:
    evaluation_id = str(record.get("evaluation_id") or where)
    run_id, eval_id = run_ids(f"every-eval-ever\0{evaluation_id}")
    if stored_already(store, run_id):
        return Imported(run_id, 0, already=True)
    model = object_of(record.get("model_info"))
    model_id = str(model.get("id") or model.get("name") or "unknown")
    results = [r for r in record["evaluation_results"] if isinstance(r, dict) and r.get("evaluation_name")]
    names = [_name(r) for r in results]
    title = str(object_of(record.get("source_metadata")).get("source_name") or evaluation_id.split("/")[0])
    # With its rows, the run is summarised from them as any run is (a record whose rows are a sample of
    # what it reports says so in the two figures); the record's own scores stay in the metadata.
    reported = {n: str(object_of(r.get("score_details")).get("score")) for r, n in zip(results, names, strict=True)}
    found = ImportedRun(
        eval_name=title,
        criterion_type="every_eval_ever",
        criteria=names,
        run_name=f"{title} ({model_id})",
        data_source={"type": "every_eval_ever", "path": where, "model": model_id},
        imported_from="every-eval-ever",
        items=_items(rows, results, names),
        created_at=_seconds(record.get("evaluation_timestamp") or record.get("retrieved_timestamp")),
        eval_metadata={"every_eval_ever_id": evaluation_id[:512]},
        run_metadata={"model": model_id[:512], **reported},
        summary=_reported(results, names),
    )
    return store_run(store, run_id, eval_id, found, project)


def _name(result: dict[str, Any]) -> str:
    return str(result.get("evaluation_result_id") or result["evaluation_name"])


def _reported(results: list[dict[str, Any]], names: list[str]) -> RunSummary:
    """The record's own scores as the summary, when no instance-level rows came with it."""
    rows = []
    for result, name in zip(results, names, strict=True):
        config, details = object_of(result.get("metric_config")), object_of(result.get("score_details"))
        score = details.get("score") if isinstance(details.get("score"), (int, float)) else None
        uncertainty = object_of(details.get("uncertainty"))
        n = int(uncertainty.get("num_samples") or 0) if isinstance(uncertainty.get("num_samples"), int) else 0
        rate_like = config.get("score_type") == "binary" or config.get("metric_kind") in ("accuracy", "pass_rate")
        rows.append(
            CriterionSummary(
                testing_criteria=name,
                metric=str(config.get("metric_id") or config.get("metric_name") or name),
                pass_rate=float(score) if rate_like and score is not None and 0 <= score <= 1 else None,
                mean_score=float(score) if score is not None else None,
                n=n,
            )
        )
    return RunSummary(result_counts=ResultCounts(total=0), per_testing_criteria_results=rows)


def _items(rows: list[dict[str, Any]], results: list[dict[str, Any]], names: list[str]) -> list[OutputItem]:
    """One output item per sample, a result per evaluation the sample has a row for."""
    by_key = {}
    for result, name in zip(results, names, strict=True):
        by_key[str(result.get("evaluation_result_id") or "")] = name
        by_key.setdefault(str(result["evaluation_name"]), name)
    samples: dict[str, dict[str, Any]] = {}
    for row in rows:
        if not isinstance(row, dict) or row.get("sample_id") is None:
            continue
        found = by_key.get(str(row.get("evaluation_result_id") or "")) or by_key.get(str(row.get("evaluation_name")))
        if found is None:
            continue
        name = found
        entry = samples.setdefault(str(row["sample_id"]), {"row": row, "results": {}})
        entry["results"][name] = row
    items = []
    for index, (sample_id, entry) in enumerate(samples.items()):
        row = entry["row"]
        given, output = object_of(row.get("input")), object_of(row.get("output"))
        raw = output.get("raw")
        text = "\n".join(str(r) for r in raw) if isinstance(raw, list) else (str(raw) if raw is not None else None)
        error = {"code": "every_eval_ever_error", "message": str(row["error"])} if row.get("error") else None
        item_results = [_result(name, entry["results"].get(name)) for name in names]
        items.append(
            OutputItem(
                datasource_item_id=index,
                datasource_item={
                    "sample_id": sample_id,
                    "input": given.get("raw"),
                    "reference": given.get("reference"),
                    **({"metadata": row["metadata"]} if isinstance(row.get("metadata"), dict) else {}),
                },
                sample={
                    "model": row.get("model_id"),
                    "output_text": text,
                    "output_items": row.get("messages") or [],
                    "usage": usage_of(row.get("token_usage")),
                    "error": error,
                },
                results=item_results,
                status=OutputItem.status_of(item_results),
            )
        )
    return items


def _result(name: str, row: dict[str, Any] | None) -> Result:
    evaluation = object_of((row or {}).get("evaluation"))
    if row is None or not evaluation:
        return Result(type="every_eval_ever", name=name, metric=name, status="skipped")
    score = evaluation.get("score") if isinstance(evaluation.get("score"), (int, float)) else None
    passed = evaluation.get("is_correct") if isinstance(evaluation.get("is_correct"), bool) else None
    return Result(
        type="every_eval_ever",
        name=name,
        metric=name,
        score=None if score is None else float(score),
        passed=passed,
        label=None if passed is None else ("pass" if passed else "fail"),
        properties={"answer_attribution": row.get("answer_attribution")}
        if row and row.get("answer_attribution")
        else {},
    )


def _seconds(stamp: Any) -> int | None:
    try:
        return int(float(stamp))
    except (TypeError, ValueError):
        return None


# -- exporting --------------------------------------------------------------------------------------


def export_record(store: Store, run_id: str) -> tuple[Path, dict[str, Any], str]:
    """The run as a record, where EEE's datastore keeps it (``data/{benchmark}/{developer}/{model}/
    {uuid}``, the uuid made from the run's id, so writing a run again replaces its files), and its
    instance-level rows as the JSONL its checksum is of."""
    from importlib.metadata import version

    run = store.get_run(run_id)
    stored = store.get_eval(run.eval_id)
    items = list(store.iter_output_items(run_id))
    model = run_model(run.data_source, items, default="none")
    dataset = str(stored.name or run.eval_id)
    developer, _, name = model.rpartition("/")
    record_id = uuid.UUID(bytes=hashlib.sha256(run.id.encode()).digest()[:16], version=4)
    relative = Path("data", _slug(dataset), _slug(developer or "unknown"), _slug(name), str(record_id))
    evaluation_id = f"assay/{dataset}/{run.id}"
    results: list[dict[str, Any]] = []
    for criterion in run.summary.per_testing_criteria_results if run.summary else []:
        base = {"evaluation_name": criterion.testing_criteria, "source_data": _source(dataset)}
        if criterion.pass_rate is not None:
            interval = criterion.pass_rate_ci
            uncertainty: dict[str, Any] = {"num_samples": criterion.n}
            if interval:
                uncertainty["confidence_interval"] = {
                    "lower": interval[0],
                    "upper": interval[1],
                    "confidence_level": 0.95,
                    "method": "wilson" if not criterion.clusters else "cluster bootstrap",
                }
            results.append(
                {
                    **base,
                    "evaluation_result_id": f"{criterion.testing_criteria}.pass_rate",
                    "metric_config": _metric("pass_rate", criterion.metric),
                    "score_details": {"score": criterion.pass_rate, "uncertainty": uncertainty},
                }
            )
        if criterion.mean_score is not None:
            results.append(
                {
                    **base,
                    "evaluation_result_id": f"{criterion.testing_criteria}.mean",
                    "metric_config": _metric("mean_score", criterion.metric),
                    "score_details": {"score": criterion.mean_score},
                }
            )
    rows = [row for item in items for row in _rows(item, evaluation_id, model, results)]
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    record = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "evaluation_timestamp": str(run.created_at),
        "retrieved_timestamp": str(run.finished_at or run.created_at),
        "source_metadata": {
            "source_name": dataset,
            "source_type": "evaluation_run",
            "source_organization_name": "assay",
            "evaluator_relationship": "other",
            "additional_details": {"assay_run": run.id, "assay_eval": run.eval_id},
        },
        "eval_library": {"name": "assay", "version": version("assay")},
        "model_info": {
            "name": model.split("/")[-1],
            "id": model,
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": f"{relative}_samples.jsonl",
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(text.encode()).hexdigest(),
            "total_rows": len(rows),
        },
    }
    return relative, record, text


def write_record(store: Store, run_id: str, folder: Path) -> tuple[Path, Path]:
    """The record and its samples (``export_record``) written under ``folder``."""
    relative, record, rows = export_record(store, run_id)
    aggregate, samples = folder / f"{relative}.json", folder / f"{relative}_samples.jsonl"
    aggregate.parent.mkdir(parents=True, exist_ok=True)
    samples.write_text(rows, "utf-8")
    aggregate.write_text(json.dumps(record, ensure_ascii=False, indent=2), "utf-8")
    return aggregate, samples


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "unknown"


def _source(dataset: str) -> dict[str, Any]:
    return {"dataset_name": dataset, "source_type": "other"}


def _metric(kind: str, metric: str) -> dict[str, Any]:
    return {
        "metric_id": f"assay.{kind}",
        "metric_name": f"{metric} {kind.replace('_', ' ')}",
        "metric_kind": kind,
        "metric_unit": "proportion" if kind == "pass_rate" else "score",
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0.0,
        "max_score": 1.0,
    }


def _rows(item: OutputItem, evaluation_id: str, model: str, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    row = item.datasource_item or {}
    sample = item.sample or {}
    raw = row.get("query", row.get("input", row.get("prompt")))
    raw = raw if isinstance(raw, str) else json.dumps(row, ensure_ascii=False, sort_keys=True, default=str)
    reference = row.get("ground_truth", row.get("reference", row.get("target")))
    references = [] if reference is None else [r if isinstance(r, str) else json.dumps(r) for r in _listed(reference)]
    answer: str | None = sample.get("output_text")
    if answer is None and isinstance(row.get("response"), str):
        answer = row["response"]
    usage = sample.get("usage") if isinstance(sample.get("usage"), dict) else None
    found = []
    by_criterion = {r.name: r for r in item.results}
    for result in results:
        name = result["evaluation_name"]
        judged = by_criterion.get(name)
        if judged is None or judged.status == "skipped":
            continue
        kind = result["metric_config"]["metric_kind"]
        if kind == "pass_rate" and judged.passed is None:
            continue
        score = judged.score if judged.score is not None else (1.0 if judged.passed else 0.0)
        found.append(
            {
                "schema_version": SCHEMA_VERSION,
                "evaluation_id": evaluation_id,
                "model_id": model,
                "evaluation_name": name,
                "evaluation_result_id": result["evaluation_result_id"],
                "sample_id": str(item.datasource_item_id),
                "sample_hash": hashlib.sha256((raw + "".join(references)).encode()).hexdigest(),
                "interaction_type": "single_turn",
                "input": {"raw": raw, "reference": references},
                "output": {"raw": [] if answer is None else [str(answer)]},
                "answer_attribution": [],
                "evaluation": {
                    "score": float(bool(judged.passed)) if kind == "pass_rate" else score,
                    "is_correct": bool(judged.passed) if judged.passed is not None else bool(score),
                },
                "token_usage": tokens_of(usage) if usage else None,
                "error": str((sample.get("error") or {}).get("message")) if sample.get("error") else None,
                "metadata": {
                    "assay_item": str(item.datasource_item_id),
                    **({"reason": judged.reason} if judged.reason else {}),
                },
            }
        )
    return found


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
