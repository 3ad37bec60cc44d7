"""OpenAI Evals objects imported: ``assay import openai-evals FILE...``.

Reads evals, runs and output items as the API and the ``openai`` SDK return them — one object,
a list page (``{"object": "list", "data": [...]}``), a JSON array, or JSON lines of any of those —
and stores them with their ids, so a user's history is browsable in ``assay view`` and an eval can
be run again here. A run's summary is computed from its output items when all of them were
exported, else taken from the run object's own counts. Importing the same files again changes
nothing. Output items take assay's ids (the run's id and the item's index), which is how assay
names them; the original id is kept in the item's sample as ``openai_output_item_id``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, NotFoundError
from assay.results import CriterionSummary, OutputItem, Result, ResultCounts, RunSummary
from assay.results.records import ResultStatus
from assay.results.stored import RunSettings
from assay.store import DEFAULT_PROJECT, Store

KINDS = ("eval", "eval.run", "eval.run.output_item")
FINISHED = ("completed", "failed", "canceled")
# What Foundry-style exports add inside an item (the sample repeated): not part of the item.
DERIVED_ITEM_KEYS = ("sample.output_text", "sample.output_items")


@dataclass
class Exported:
    """The objects found in the files, by kind, each with where it was read."""

    evals: dict[str, dict[str, Any]] = field(default_factory=dict)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    items: dict[str, dict[int, dict[str, Any]]] = field(default_factory=lambda: defaultdict(dict))
    where: dict[str, str] = field(default_factory=dict)


@dataclass
class Imported:
    evals: int = 0
    runs: int = 0
    items: int = 0
    skipped: list[str] = field(default_factory=list)
    """What was already in the store, left as it was."""


def read_exports(paths: list[Path]) -> Exported:
    found = Exported()
    for path in paths:
        text = path.read_text(encoding="utf-8-sig")
        for line, value in _documents(path, text):
            for obj in _objects(value):
                _add(found, obj, f"{path.name}:{line}")
    return found


def _documents(path: Path, text: str) -> list[tuple[int, Any]]:
    """The JSON values in a file: the whole file, or one per line (JSONL)."""
    try:
        return [(1, json.loads(text))]
    except ValueError:
        pass
    values = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            hint = "write each object with the SDK's model_dump_json()"
            raise ConfigError(f"{path.name}:{number}: not JSON ({exc.msg})", hint=hint) from None
    return values


def _objects(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [obj for entry in value for obj in _objects(entry)]
    if isinstance(value, dict) and value.get("object") == "list" and isinstance(value.get("data"), list):
        return list(value["data"])
    return [value]


def _add(found: Exported, obj: Any, where: str) -> None:
    kind = obj.get("object") if isinstance(obj, dict) else None
    if kind not in KINDS or not isinstance(obj.get("id"), str):
        shown = kind if isinstance(kind, str) else type(obj).__name__
        raise ConfigError(
            f"{where}: {shown!r} is not an OpenAI Evals object with an id",
            hint="export evals, runs and output items as the API returns them (object: eval, eval.run, ...)",
        )
    if kind == "eval":
        found.evals[obj["id"]] = obj
    elif kind == "eval.run":
        found.runs[obj["id"]] = obj
    else:
        index = obj.get("datasource_item_id")
        if isinstance(index, bool) or not isinstance(index, int) or not isinstance(obj.get("run_id"), str):
            raise ConfigError(f"{where}: an output item needs its run_id and an integer datasource_item_id")
        found.items[obj["run_id"]][index] = obj
    found.where[obj["id"]] = where


def import_exports(store: Store, found: Exported, project: str = DEFAULT_PROJECT) -> Imported:
    done = Imported()
    for eval_id, obj in found.evals.items():
        if _exists(store.get_eval, eval_id):
            done.skipped.append(eval_id)
            continue
        store.create_eval(
            id=eval_id,
            name=obj.get("name"),
            data_source_config=obj.get("data_source_config") or {"type": "custom", "item_schema": {}},
            testing_criteria=obj.get("testing_criteria") or [],
            metadata=obj.get("metadata") or None,
            project=project,
            created_at=obj.get("created_at"),
        )
        done.evals += 1
    for run_id, obj in found.runs.items():
        if _exists(store.get_run, run_id):
            done.skipped.append(run_id)
            continue
        owner = obj.get("eval_id")
        if not isinstance(owner, str) or not _exists(store.get_eval, owner):
            raise ConfigError(
                f"{found.where[run_id]}: run {run_id} belongs to eval {owner!r}, in neither the files nor the store",
                hint="export the eval too (client.evals.retrieve)",
            )
        done.items += _import_run(store, obj, found.items.get(run_id, {}), project)
        done.runs += 1
    orphans = sorted(set(found.items) - set(found.runs))
    for run_id in orphans:
        if not _exists(store.get_run, run_id):
            raise ConfigError(f"output items of run {run_id} were given without the run", hint="export the run too")
    return done


def _exists(get: Any, object_id: str) -> bool:
    try:
        get(object_id)
    except NotFoundError:
        return False
    return True


def _import_run(store: Store, obj: dict[str, Any], items: dict[int, dict[str, Any]], project: str) -> int:
    run_id = obj["id"]
    store.create_run(
        id=run_id,
        eval_id=obj["eval_id"],
        data_source=obj.get("data_source") or {},
        options=RunSettings(imported_from="openai-evals"),
        name=obj.get("name"),
        project=project,
        created_at=obj.get("created_at"),
    )
    output_items = [_output_item(item) for _, item in sorted(items.items())]
    for start in range(0, len(output_items), 500):
        store.add_output_items(run_id, output_items[start : start + 500])
    counts = obj.get("result_counts") or {}
    complete = bool(output_items) and len(output_items) == counts.get("total", len(output_items))
    if complete:
        names = {r.name: r.metric for item in output_items for r in item.results}
        summary = store.summarize(run_id, list(names.items()))
    else:
        summary = _summary_of(obj)
    status = obj.get("status") if obj.get("status") in FINISHED else "canceled"
    error = obj.get("error") if isinstance(obj.get("error"), dict) and obj["error"].get("code") else None
    store.update_run(run_id, status=status, summary=summary, error=error, metadata=obj.get("metadata"))
    return len(output_items)


def _output_item(obj: dict[str, Any]) -> OutputItem:
    results = [_result(r) for r in obj.get("results") or [] if isinstance(r, dict)]
    given = obj.get("datasource_item")
    item = {k: v for k, v in given.items() if k not in DERIVED_ITEM_KEYS} if isinstance(given, dict) else {}
    status = obj.get("status")
    if status not in ("pass", "fail", "error", "skipped"):
        status = OutputItem.status_of(results)
    return OutputItem(
        datasource_item_id=obj["datasource_item_id"],
        datasource_item=item,
        sample=_sample(obj.get("sample"), obj["id"]),
        results=results,
        status=status,
    )


def _result(obj: dict[str, Any]) -> Result:
    given = obj.get("status")
    status: ResultStatus = given if given == "skipped" or given == "error" else "completed"
    passed = obj.get("passed") if isinstance(obj.get("passed"), bool) else None
    score = obj.get("score") if isinstance(obj.get("score"), (int, float)) else None
    known = {"name", "type", "metric", "score", "passed", "label", "threshold", "reason", "status", "sample"}
    properties = dict(obj.get("properties") or {}) if isinstance(obj.get("properties"), dict) else {}
    properties.update({k: v for k, v in obj.items() if k not in known and k != "properties"})
    name = str(obj.get("name") or obj.get("type") or "criterion")
    return Result(
        type=str(obj.get("type") or "imported"),
        name=name,
        metric=str(obj.get("metric") or name),
        score=None if status != "completed" else score,
        passed=None if status != "completed" else passed,
        label=None if passed is None or status != "completed" else ("pass" if passed else "fail"),
        threshold=obj.get("threshold") if isinstance(obj.get("threshold"), (int, float)) else None,
        reason=obj.get("reason") if isinstance(obj.get("reason"), str) else None,
        status=status,
        properties=properties,
    )


def _sample(sample: Any, item_id: str) -> dict[str, Any] | None:
    """OpenAI's sample (input and output messages) with the output as assay reads it."""
    if not isinstance(sample, dict):
        return {"openai_output_item_id": item_id}
    output = sample.get("output")
    messages = output if isinstance(output, list) else []
    texts = [str(m["content"]) for m in messages if isinstance(m, dict) and isinstance(m.get("content"), str)]
    error = sample.get("error") if isinstance(sample.get("error"), dict) and sample["error"].get("code") else None
    found = {**sample, "error": error, "openai_output_item_id": item_id}
    if texts and sample.get("output_text") is None:
        found["output_text"] = "".join(texts)
    return found


def _summary_of(obj: dict[str, Any]) -> RunSummary:
    """A summary from the run object's own counts (its items were not all exported)."""
    counts = obj.get("result_counts") or {}
    per_criterion = []
    for entry in obj.get("per_testing_criteria_results") or []:
        passed, failed = int(entry.get("passed") or 0), int(entry.get("failed") or 0)
        per_criterion.append(
            CriterionSummary(
                testing_criteria=str(entry.get("name") or entry.get("testing_criteria")),
                metric=str(entry.get("testing_criteria") or ""),
                passed=passed,
                failed=failed,
                errored=int(entry.get("errored") or 0),
                pass_rate=passed / (passed + failed) if passed + failed else None,
                n=passed + failed,
            )
        )
    return RunSummary(
        result_counts=ResultCounts(**{k: int(counts.get(k) or 0) for k in ("total", "passed", "failed", "errored")}),
        per_testing_criteria_results=per_criterion,
    )
