"""Inspect AI's eval logs, both ways: ``assay import inspect LOG...`` and ``assay report RUN --inspect FILE``.

A log is Inspect's ``EvalLog``: one JSON document (``.json``) or a zip (``.eval``) holding
``header.json`` (the eval, its plan, results and stats), ``samples/{id}_epoch_{n}.json`` (one
``EvalSample`` each) and ``summaries.json``. Imported, a log becomes an eval named after its task
and a finished run named after the task and model: one output item per sample and epoch, whose item
is the sample's ``id``, ``epoch``, ``input``, ``target`` and ``metadata``, whose sample is the
model's answer (``output_text``), its messages and its tokens, and one result per scorer. Inspect's
letter grades read as it reads them (``C`` correct 1, ``P`` partial 0.5, ``I`` incorrect and ``N``
no answer 0; passed when correct); a number is a score, a boolean a verdict, anything else (a dict
of several values) is kept in the result's properties. Importing a log twice changes nothing: the
run's id is made from the log's own ``run_id`` and task.

Exported, a run is a log Inspect's own reader (``inspect_ai.log.read_eval_log``) and viewer
(``inspect view``) open: the eval spec (task, model, dataset), one sample per output item with its
input, target, answer and a score per criterion (``value`` the score, else 1/0 for pass/fail;
``answer`` the verdict; ``explanation`` the reason) and results with each criterion's accuracy
(its pass rate) and mean.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import struct
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

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
from assay.results import OutputItem, Result
from assay.store import DEFAULT_PROJECT, Store

LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
"""Inspect's CORRECT, PARTIAL, INCORRECT and NOANSWER, as its ``value_to_float`` reads them."""
STATUS = {"success": "completed", "error": "failed", "cancelled": "canceled"}


# -- reading ----------------------------------------------------------------------------------------


def read_log(path: Path) -> dict[str, Any]:
    """The log as one ``EvalLog`` document, its samples included (from a ``.json`` or an ``.eval``)."""
    try:
        if zipfile.is_zipfile(path):
            return _read_zip(path)
        log = json.loads(path.read_text(encoding="utf-8-sig"))
    # NotImplementedError: zipfile's word for a compression method it does not read (zstd is read below).
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, NotImplementedError) as exc:
        raise ConfigError(
            f"{path}: not an Inspect log ({exc})", hint="give a .eval or .json file written by `inspect eval`"
        ) from None
    _check(log, path)
    return dict(log)


def _read_zip(path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        if "header.json" in names:
            log = json.loads(_member(archive, "header.json"))
        elif "_journal/start.json" in names:  # a log whose eval did not finish: its start, and the samples done
            log = {**json.loads(_member(archive, "_journal/start.json")), "status": "started"}
        else:
            raise ConfigError(f"{path}: a zip without header.json is not an Inspect .eval log")
        samples = [json.loads(_member(archive, n)) for n in names if n.startswith("samples/") and n.endswith(".json")]
    _check(log, path)
    log["samples"] = sorted(samples, key=lambda s: (str(s.get("id")), int(s.get("epoch") or 1)))
    return dict(log)


ZSTD = 93
"""The zip compression method Inspect writes ``.eval`` members with (zipfile-zstd), which Python's
zipfile before 3.14 does not read: such a member's bytes are read raw and given to ``zstandard``."""


def _member(archive: zipfile.ZipFile, name: str) -> bytes:
    info = archive.getinfo(name)
    if info.compress_type != ZSTD:
        return archive.read(name)
    try:
        import zstandard
    except ImportError:
        raise ConfigError(
            f"{archive.filename}: Inspect compressed this log with zstd", hint="pip install 'assay[inspect]'"
        ) from None
    assert archive.fp is not None
    archive.fp.seek(info.header_offset)
    header = struct.unpack("<IHHHHHIIIHH", archive.fp.read(30))  # the member's local file header
    if header[0] != 0x04034B50:
        raise ConfigError(f"{archive.filename}: {name} is not where the zip's directory says")
    archive.fp.seek(info.header_offset + 30 + header[9] + header[10])
    data = zstandard.ZstdDecompressor().decompressobj().decompress(archive.fp.read(info.compress_size))
    if len(data) != info.file_size:
        raise ConfigError(f"{archive.filename}: {name} is damaged ({len(data)} bytes of {info.file_size})")
    return bytes(data)


def _check(log: Any, path: Path) -> None:
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict) or not log["eval"].get("task"):
        raise ConfigError(f"{path}: not an Inspect log (no eval.task)", hint="give a log written by `inspect eval`")


# -- importing --------------------------------------------------------------------------------------


def import_log(store: Store, log: dict[str, Any], where: str, project: str = DEFAULT_PROJECT) -> Imported:
    spec = log["eval"]
    task, model = str(spec["task"]), str(spec.get("model") or "")
    origin = str(spec.get("run_id") or spec.get("eval_id") or where)
    run_id, eval_id = run_ids(f"{origin}\0{task}\0{spec.get('task_id') or ''}")
    if stored_already(store, run_id):
        return Imported(run_id, 0, already=True)
    samples = [s for s in log.get("samples") or [] if isinstance(s, dict)]
    scorers = _scorers(log, samples)
    error = object_of(log.get("error"))
    found = ImportedRun(
        eval_name=task,
        criterion_type="inspect_scorer",
        criteria=scorers,
        run_name=f"{task} ({model})" if model else task,
        data_source={
            "type": "inspect_log",
            "path": where,
            "model": model,
            "dataset": object_of(spec.get("dataset")).get("name"),
        },
        imported_from="inspect",
        items=[_item(index, sample, scorers, model) for index, sample in enumerate(samples)],
        created_at=_epoch(spec.get("created")),
        eval_metadata={"inspect_task": task, "inspect_task_id": str(spec.get("task_id") or "")},
        run_metadata={"inspect_model": model, "inspect_log": where},
        status=STATUS.get(str(log.get("status")), "canceled"),
        error={"code": "inspect_error", "message": str(error.get("message"))} if error else None,
    )
    return store_run(store, run_id, eval_id, found, project)


def _scorers(log: dict[str, Any], samples: list[dict[str, Any]]) -> list[str]:
    """The scorers' names: the results' order first, then any only the samples name."""
    names: list[str] = []
    results = object_of(log.get("results"))
    for score in results.get("scores") or []:
        if isinstance(score, dict) and score.get("name") and score["name"] not in names:
            names.append(str(score["name"]))
    for sample in samples:
        for name in sample.get("scores") or {}:
            if name not in names:
                names.append(str(name))
    return names


def _item(index: int, sample: dict[str, Any], scorers: list[str], model: str) -> OutputItem:
    scores = object_of(sample.get("scores"))
    results = [_result(name, scores.get(name)) for name in scorers]
    output = object_of(sample.get("output"))
    error = object_of(sample.get("error")) or None
    usage = _usage(sample.get("model_usage"))
    item = {
        "id": sample.get("id"),
        "epoch": sample.get("epoch"),
        "input": sample.get("input"),
        "target": sample.get("target"),
        **({"metadata": sample["metadata"]} if sample.get("metadata") else {}),
    }
    text = output.get("completion") or _choice_text(output)
    found: dict[str, Any] = {
        "model": output.get("model") or model,
        "output_text": text,
        "output_items": sample.get("messages") or [],
        "usage": usage,
        "error": {"code": "inspect_error", "message": str(error.get("message"))} if error else None,
    }
    if error is not None:
        results = [r.model_copy(update={"status": "error", "score": None, "passed": None}) for r in results]
    return OutputItem(
        datasource_item_id=index,
        datasource_item=item,
        sample=found,
        results=results,
        status=OutputItem.status_of(results),
    )


def _result(name: str, score: Any) -> Result:
    if not isinstance(score, dict) or "value" not in score:
        return Result(type="inspect_scorer", name=name, metric=name, status="skipped")
    value = score["value"]
    properties = {k: score[k] for k in ("answer", "metadata") if score.get(k) is not None}
    reason = score.get("explanation") if isinstance(score.get("explanation"), str) else None
    number: float | None = None
    passed: bool | None = None
    if isinstance(value, bool):
        number, passed = float(value), value
    elif isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str) and value in LETTERS:
        number, passed = LETTERS[value], value == "C"
        properties["grade"] = value
    else:
        properties["value"] = value  # several values, or a text grade Inspect does not name
    verdict = (score.get("metadata") or {}).get("passed") if isinstance(score.get("metadata"), dict) else None
    if isinstance(verdict, bool):  # a log assay wrote: the verdict beside the score
        passed = verdict
    label: Literal["pass", "fail"] | None = None if passed is None else ("pass" if passed else "fail")
    return Result(
        type="inspect_scorer",
        name=name,
        metric=name,
        score=number,
        passed=passed,
        label=label,
        reason=reason,
        properties=properties,
    )


def _choice_text(output: dict[str, Any]) -> str | None:
    for choice in output.get("choices") or []:
        content = (choice.get("message") or {}).get("content") if isinstance(choice, dict) else None
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(str(c.get("text") or "") for c in content if isinstance(c, dict))
    return None


def _usage(model_usage: Any) -> dict[str, int] | None:
    """A sample's tokens over every model it called (Inspect keeps them per model)."""
    per_model = [usage_of(usage) for usage in object_of(model_usage).values()]
    counted = [usage for usage in per_model if usage is not None]
    if not counted:
        return None
    return {key: sum(usage[key] for usage in counted) for key in counted[0]}


def _epoch(stamp: Any) -> int | None:
    if not isinstance(stamp, str):
        return None
    try:
        return int(dt.datetime.fromisoformat(stamp).timestamp())
    except ValueError:
        return None


# -- exporting --------------------------------------------------------------------------------------


def export_log(store: Store, run_id: str) -> dict[str, Any]:
    """The run as an Inspect ``EvalLog`` document, samples included."""
    run = store.get_run(run_id)
    stored = store.get_eval(run.eval_id)
    items = list(store.iter_output_items(run_id))
    summary = run.summary
    model = run_model(run.data_source, items, default="none/none")
    created = _iso(run.created_at)
    finished = _iso(run.finished_at or run.created_at)
    samples = [_sample(item, model) for item in items]
    # An item that came from Inspect keeps its sample's id and epoch, when every pair is its own.
    given = [((i.datasource_item or {}).get("id"), (i.datasource_item or {}).get("epoch") or 1) for i in items]
    if all(isinstance(g, (str, int)) and not isinstance(g, bool) for g, _ in given) and len(set(given)) == len(given):
        for sample, (sample_id, epoch) in zip(samples, given, strict=True):
            sample["id"], sample["epoch"] = sample_id, epoch
    criteria = [c.testing_criteria for c in summary.per_testing_criteria_results] if summary else []
    scores = [_eval_score(name, samples) for name in criteria]
    return {
        "version": 2,
        "status": {"completed": "success", "failed": "error", "canceled": "cancelled"}.get(run.status, "started"),
        "eval": {
            "run_id": run.id,
            "eval_id": run.eval_id,
            "created": created,
            "task": stored.name or run.name or run.eval_id,
            "task_id": run.eval_id,
            "task_version": 0,
            "dataset": {
                "name": str((run.data_source or {}).get("type") or "dataset"),
                "samples": len(samples),
                "sample_ids": [s["id"] for s in samples],
                "shuffled": False,
            },
            "model": model,
            "config": {},
            "metadata": {"assay_run": run.id, "assay_eval": run.eval_id},
        },
        "plan": {"name": "plan", "steps": [{"solver": "assay", "params": {}}], "config": {}},
        "results": {"total_samples": len(samples), "completed_samples": len(samples), "scores": scores},
        "stats": {"started_at": created, "completed_at": finished, "model_usage": _model_usage(items, model)},
        **({"error": _error(str(run.error.get("message")))} if run.error else {}),
        "samples": samples,
    }


def write_log(log: dict[str, Any], path: Path) -> None:
    """``.eval``: Inspect's zip (header, one entry per sample, the summaries); else one JSON document."""
    if path.suffix != ".eval":
        path.write_text(json.dumps(log, ensure_ascii=False, indent=1), encoding="utf-8")
        return
    header = {k: v for k, v in log.items() if k != "samples"}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({k: header[k] for k in ("version", "eval", "plan")}))
        for sample in log["samples"]:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        archive.writestr("summaries.json", json.dumps([_summary(s) for s in log["samples"]]))
        archive.writestr("header.json", json.dumps(header))
    path.write_bytes(buffer.getvalue())


def _sample(item: OutputItem, model: str) -> dict[str, Any]:
    row = item.datasource_item or {}
    sample = item.sample or {}
    query = row.get("input", row.get("query", row.get("prompt")))
    messages = row.get("messages") if isinstance(row.get("messages"), list) else None
    if isinstance(query, list):  # Inspect's input as chat messages
        messages, query = query, None
    given: Any = query if isinstance(query, str) else json.dumps(row, ensure_ascii=False, default=str)
    target = row.get("target", row.get("ground_truth", row.get("reference", "")))
    answer = sample.get("output_text")
    if answer is None and isinstance(row.get("response"), str):
        answer = row["response"]
    answer = "" if answer is None else str(answer)
    chat = _chat(messages) if messages else [{"role": "user", "content": given, "source": "input"}]
    if answer:
        chat.append({"role": "assistant", "content": answer, "source": "generate", "model": model})
    usage = sample.get("usage") if isinstance(sample.get("usage"), dict) else None
    found: dict[str, Any] = {
        "id": item.datasource_item_id + 1,
        "epoch": 1,
        "input": given if messages is None else _chat(messages),
        "target": target if isinstance(target, (str, list)) else json.dumps(target, default=str),
        "messages": chat,
        "output": {
            "model": model,
            "choices": [{"message": {"role": "assistant", "content": answer, "model": model}, "stop_reason": "stop"}],
            "completion": answer,
            **({"usage": tokens_of(usage)} if usage else {}),
        },
        "scores": {r.name: _score(r) for r in item.results if r.status != "skipped"},
        "metadata": {"assay_item": item.datasource_item_id, **({"item": row} if isinstance(query, str) else {})},
        "model_usage": {model: tokens_of(usage)} if usage else {},
    }
    error = sample.get("error") if isinstance(sample.get("error"), dict) else None
    if error or item.status == "error":
        message = str((error or {}).get("message") or "an evaluator failed on this item")
        found["error"] = _error(message)
    return found


def _error(message: str) -> dict[str, str]:
    """Inspect's ``EvalError``: assay keeps no traceback of an item's or a run's failure."""
    return {"message": message, "traceback": "", "traceback_ansi": ""}


def _chat(messages: list[Any]) -> list[dict[str, Any]]:
    chat = []
    for message in messages:
        if isinstance(message, dict) and message.get("role") in ("system", "user", "assistant", "tool"):
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content, default=str)
            entry = {"role": message["role"], "content": text}
            if message["role"] == "tool":
                entry["tool_call_id"] = str(message.get("tool_call_id") or "")
            chat.append(entry)
    return chat


def _score(result: Result) -> dict[str, Any]:
    grade = result.properties.get("grade")
    if grade in LETTERS:  # imported from Inspect: its own letter back
        value: Any = grade
    elif result.score is not None:
        value = result.score
    elif result.passed is not None:
        value = 1.0 if result.passed else 0.0
    else:
        value = 0.0
    answer = result.label or result.status
    return {
        "value": value,
        "answer": answer,
        "explanation": result.reason,
        "metadata": {"passed": result.passed, "threshold": result.threshold, "status": result.status},
    }


def _eval_score(name: str, samples: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [s["scores"][name] for s in samples if name in s.get("scores", {})]
    verdicts = [sc["metadata"]["passed"] for sc in scored if sc["metadata"]["passed"] is not None]
    values = [LETTERS[v] if v in LETTERS else float(v) for v in (sc["value"] for sc in scored)]
    metrics = {}
    if verdicts:
        metrics["accuracy"] = {"name": "accuracy", "value": sum(verdicts) / len(verdicts), "params": {}}
    if values:
        metrics["mean"] = {"name": "mean", "value": sum(values) / len(values), "params": {}}
    return {"name": name, "scorer": name, "params": {}, "scored_samples": len(scored), "metrics": metrics}


def _summary(sample: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "epoch", "input", "target", "metadata", "scores", "model_usage", "error")
    found = {k: sample[k] for k in keys if k in sample}
    if "error" in found:
        found["error"] = found["error"]["message"]
    return {**found, "completed": True}


def _model_usage(items: Sequence[OutputItem], model: str) -> dict[str, dict[str, int]]:
    totals = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    for item in items:
        usage = (item.sample or {}).get("usage")
        if isinstance(usage, dict):
            for key, value in tokens_of(usage).items():
                totals[key] += value
    return {model: totals} if totals["total_tokens"] else {}


def _iso(seconds: float | None) -> str:
    moment = dt.datetime.fromtimestamp(seconds or 0, tz=dt.UTC)
    return moment.isoformat()


def iter_logs(paths: list[Path]) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Each log given, or each ``.eval``/``.json`` log inside a folder given (Inspect's ``logs/``)."""
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in (".eval", ".json") and not p.name.startswith("."))
            if not found:
                raise ConfigError(f"{path}: no .eval or .json logs in it")
            for child in found:
                yield child, read_log(child)
        else:
            yield path, read_log(path)
