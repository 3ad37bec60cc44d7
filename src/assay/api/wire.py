"""Stored rows as the OpenAI Evals wire objects (the shapes openai-python parses)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import orjson
from fastapi import Depends, Query

from assay import jsonfast
from assay.api.responses import WireJSON
from assay.results import RunSummary
from assay.results.criterion import Criterion
from assay.results.stored import Eval, Run
from assay.store import values

NO_ERROR = {"code": "", "message": ""}
"""What ``error`` holds when nothing went wrong. The SDK types ``error`` as an ``EvalAPIError``
object, never null (strict validation refuses null), and the spec requires it: so an object with
empty strings, not ``null``. Test for failure with ``status``, or ``error.code``."""

EMPTY_SAMPLE: dict[str, Any] = {
    "input": [],
    "output": [],
    "finish_reason": "",
    "model": "",
    "error": NO_ERROR,
    "temperature": 0.0,
    "max_completion_tokens": 0,
    "top_p": 0.0,
    "seed": 0,
    "usage": {"total_tokens": 0, "completion_tokens": 0, "prompt_tokens": 0, "cached_tokens": 0},
}


def page(data: list[dict[str, Any]], limit: int, *, has_more: bool | None = None, key: str = "id") -> dict[str, Any]:
    """A cursor page of ``data`` read with one more than ``limit`` (whether there is more), or of
    ``data`` shown whole when ``has_more`` is given; ``key``: the field that identifies an object.
    The spec wants ``first_id`` / ``last_id`` as strings even when the page is empty; the SDKs page
    on ``data[-1].id``, so an empty string there changes nothing for them."""
    shown = data[:limit]
    return {
        "object": "list",
        "data": shown,
        "first_id": shown[0][key] if shown else "",
        "last_id": shown[-1][key] if shown else "",
        "has_more": len(data) > limit if has_more is None else has_more,
    }


Order = Literal["asc", "desc"]


@dataclass
class PageQuery:
    """A cursor page's query (``Annotated[PageQuery, Depends()]``): ``limit``, ``order`` (newest
    first unless asked), and ``after`` or ``before`` an object's id."""

    limit: int = Query(20, ge=1, le=100)
    order: Order = "desc"
    after: str | None = None
    before: str | None = None

    def page(self, objects: list[dict[str, Any]], key: str = "id") -> dict[str, Any]:
        """The page of ``objects`` (held oldest first, each named by its ``key``) this query asks for."""
        ordered = objects if self.order == "asc" else objects[::-1]
        ids = [o[key] for o in ordered]
        start = 0 if self.after is None else ids.index(self.after) + 1 if self.after in ids else len(ids)
        end = len(ids) if self.before is None else ids.index(self.before) if self.before in ids else 0
        return page(ordered[start:end][: self.limit + 1], self.limit, key=key)


Paging = Annotated[PageQuery, Depends()]


def file_object(row: dict[str, Any]) -> dict[str, Any]:
    """Files never expire here, so ``expires_at`` (optional, never null in the spec) is left out."""
    return {
        "id": row["id"],
        "object": "file",
        "bytes": row["bytes"],
        "created_at": row["created_at"],
        "filename": row["filename"],
        "purpose": row["purpose"],
        "status": "processed",
    }


def schema_of(config: dict[str, Any]) -> dict[str, Any]:
    """``data_source_config`` in its response form: ``schema`` instead of ``item_schema``."""
    if config.get("type") != "custom":
        return dict(config)
    properties: dict[str, Any] = {"item": config.get("item_schema") or {"type": "object"}}
    required = ["item"]
    if config.get("include_sample_schema"):
        properties["sample"] = {"type": "object", "properties": {"output_text": {"type": "string"}}}
        required.append("sample")
    return {"type": "custom", "schema": {"type": "object", "properties": properties, "required": required}}


def eval_object(evaluation: Eval) -> dict[str, Any]:
    return {
        "id": evaluation.id,
        "object": "eval",
        "created_at": evaluation.created_at,
        "name": evaluation.name or evaluation.id,
        "metadata": evaluation.metadata or {},
        "data_source_config": schema_of(evaluation.data_source_config),
        "testing_criteria": evaluation.testing_criteria,
    }


def run_object(run: Run, criteria: list[Criterion], report_url: str) -> dict[str, Any]:
    summary = run.summary or RunSummary()
    counts = summary.result_counts
    ids = {c.get("name"): c.get("id", c.get("name")) for c in criteria}
    per_criterion = [
        {
            "testing_criteria": ids.get(c.testing_criteria, c.testing_criteria),
            "name": c.testing_criteria,
            "passed": c.passed,
            "failed": c.failed,
            "errored": c.errored,
            "skipped": c.skipped,
            "undetermined": c.undetermined,
            "filtered": c.filtered,
            "pass_rate": c.pass_rate,
            **({"pass_rate_ci": c.pass_rate_ci} if c.pass_rate_ci else {}),
            **({"flaky_items": c.flaky} if c.flaky is not None else {}),
            **({"clusters": c.clusters} if c.clusters is not None else {}),
            **({"mean_score": c.mean_score, "mean_score_ci": c.mean_score_ci} if c.mean_score is not None else {}),
            **({"attack_strategy": c.attack_strategy} if c.attack_strategy else {}),
        }
        for c in summary.per_testing_criteria_results
    ]
    usage = [
        {
            "model_name": u.model_name,
            "run_model_name": u.model_name,
            "invocation_count": u.invocation_count,
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "total_tokens": u.total_tokens,
            "cached_tokens": u.cached_tokens,
            "cache_hits": u.cache_hits,
        }
        for u in summary.per_model_usage
    ]
    options = run.options
    return {
        "id": run.id,
        "object": "eval.run",
        "eval_id": run.eval_id,
        "name": run.name or run.id,
        "status": run.status,
        "created_at": run.created_at,
        "model": "",
        "metadata": run.metadata or {},
        "data_source": data_source_object(run.data_source),
        "report_url": report_url,
        "error": api_error(run.error),
        "result_counts": {
            "total": counts.total,
            "passed": counts.passed,
            "failed": counts.failed,
            "errored": counts.errored,
            "skipped": counts.skipped,
            "undetermined": counts.undetermined,
            "filtered": counts.filtered,
        },
        "per_model_usage": usage,
        "per_testing_criteria_results": per_criterion,
        "evaluation_level": options.evaluation_level,
        **({"output_datasets": options.output_datasets} if options.output_datasets else {}),
        **({"output_dataset_id": options.output_dataset_id} if options.output_dataset_id else {}),
        **({"simulation": summary.simulation.model_dump()} if summary.simulation is not None else {}),
        **({"red_team_scorecard": summary.red_team} if summary.red_team is not None else {}),
        **({"task_scores": summary.tasks.model_dump()} if summary.tasks is not None else {}),
        # assay's extensions: who made which calls, and the target's trials (pass@k, pass^k).
        **({"per_role_usage": [u.model_dump() for u in summary.per_role_usage]} if summary.per_role_usage else {}),
        **({"trials": summary.trials.model_dump()} if summary.trials is not None else {}),
        **({"properties": {"warnings": options.warnings}} if options.warnings else {}),
    }


def data_source_object(data_source: dict[str, Any]) -> dict[str, Any]:
    """The run's data source as sent, with template messages in the spec's own example form
    (``{type: message, role, content: {type: input_text, text}}``): a plain ``{role, content: "..."}``
    is valid under both branches of the spec's ``EvalItem | EasyInputMessage`` oneOf, so no
    validator can accept it. Same meaning; the engine renders the stored original."""
    messages = data_source.get("input_messages")
    if not isinstance(messages, dict) or not isinstance(messages.get("template"), list):
        return data_source
    template = [_template_message(m) for m in messages["template"]]
    return {**data_source, "input_messages": {**messages, "template": template}}


def _template_message(message: Any) -> Any:
    if not isinstance(message, dict) or "role" not in message:
        return message
    content = message.get("content")
    if isinstance(content, list) and len(content) == 1:
        content = content[0]
    if isinstance(content, str):
        content = {"type": "input_text", "text": content}
    return {"type": "message", **message, "content": content}


def output_item_id(run_id: str, index: int) -> str:
    return f"outputitem_{run_id.split('_', 1)[-1][:16]}_{index}"


def item_index(item_id: str) -> int | None:
    tail = item_id.rsplit("_", 1)[-1]
    # ASCII digits only, and few enough for a database integer (an index past 2^63 names nothing).
    return int(tail) if tail.isascii() and tail.isdigit() and len(tail) <= 18 else None


def result_object(
    result: dict[str, Any], ids: dict[str, str] | None = None, *, foundry: bool = False
) -> dict[str, Any]:
    """OpenAI's spec types ``score`` as a number and ``passed`` as a boolean: on its paths a result
    that errored, was skipped or has no threshold says so in ``status`` / ``label`` and carries 0
    and false there. Foundry's paths (``foundry``) give a skipped result a null score and verdict, as
    Foundry does (it was not scored; 0 would read as the worst score). ``name`` is the criterion's
    id, as OpenAI names results (the id is the name unless given)."""
    score, passed = result.get("score"), result.get("passed")
    name = result.get("name")
    if ids and isinstance(name, str):
        name = ids.get(name, name)
    if foundry and result.get("status") in ("skipped", "undetermined", "filtered"):
        return {**result, "name": name, "score": None, "passed": None, "sample": None}
    return {**result, "name": name, "score": 0.0 if score is None else score, "passed": bool(passed), "sample": None}


def criterion_ids(criteria: list[Criterion]) -> dict[str, str]:
    """Each criterion's id by its name."""
    return {c["name"]: str(c["id"]) for c in criteria if isinstance(c.get("name"), str) and c.get("id")}


def output_item_object(
    row: dict[str, Any], eval_id: str, ids: dict[str, str] | None = None, *, foundry: bool = False
) -> dict[str, Any]:
    results = [result_object(result, ids, foundry=foundry) for result in row["results"]]
    status = {"pass": "pass", "fail": "fail"}.get(row["status"], row["status"])
    item, sample = row["datasource_item"], row["sample"] or {}
    if _shown_in_item(sample):
        # Foundry shows what a target generated inside the item too, under these literal keys.
        item = {**item, "sample.output_text": sample.get("output_text")}
        item["sample.output_items"] = sample.get("output_items") or []
    return {
        "id": output_item_id(row["run_id"], row["datasource_item_id"]),
        "object": "eval.run.output_item",
        "eval_id": eval_id,
        "run_id": row["run_id"],
        "created_at": row["created_at"],
        "status": status,
        "datasource_item_id": row["datasource_item_id"],
        "datasource_item": item,
        "results": results,
        "sample": sample_object(sample),
    }


def _shown_in_item(sample: dict[str, Any]) -> bool:
    return "output_text" in sample or bool(sample.get("error"))


JSON_COLUMNS = ("datasource_item", "sample", "results")


def output_item_page(
    texts: list[dict[str, Any]], eval_id: str, limit: int, ids: dict[str, str] | None = None, *, foundry: bool = False
) -> bytes:
    """A page of output items (``Store.output_item_texts``: JSON columns as stored text) as the
    answer's bytes. Each item's ``datasource_item``, often most of its size, is spliced in as stored
    (an ``orjson.Fragment``) unless its sample adds to it; only results and samples are decoded. A
    page holding what the store tagged, or what orjson cannot write (an integer past 64 bits), is
    decoded whole and encoded with care."""
    more = len(texts) > limit
    texts = texts[:limit]  # the row past the page only said there is more
    if not any(_needs_care(row[name]) for row in texts for name in JSON_COLUMNS):
        listed = []
        for row in texts:
            sample = None if row["sample"] in _NO_SAMPLE else jsonfast.loads(row["sample"])
            spliced = sample is None or not _shown_in_item(sample)
            item = orjson.Fragment(row["datasource_item"]) if spliced else jsonfast.loads(row["datasource_item"])
            decoded = {**row, "datasource_item": item, "sample": sample, "results": jsonfast.loads(row["results"])}
            listed.append(output_item_object(decoded, eval_id, ids, foundry=foundry))
        try:
            return orjson.dumps(page(listed, limit, has_more=more))
        except orjson.JSONEncodeError:
            pass
    rows = [{**row, **{name: _decoded(row[name]) for name in JSON_COLUMNS}} for row in texts]
    listed = [output_item_object(row, eval_id, ids, foundry=foundry) for row in rows]
    return bytes(WireJSON(page(listed, limit, has_more=more)).body)


_TAGGED = f'"{values.TAG}"'
_NO_SAMPLE = (None, "null")
"""A sample column holding nothing: SQL NULL, or JSON null (what a JSON column writes for None)."""


def _needs_care(text: str | None) -> bool:
    """Whether stored JSON text holds what the store tagged, or a non-finite number written bare
    (as stores older than the tags did): neither may be spliced into an answer as it is."""
    return text is not None and (_TAGGED in text or "NaN" in text or "Infinity" in text)


def _decoded(text: str | None) -> Any:
    return None if text is None else values.loads(text)


def sample_object(sample: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's sample shape: input and output messages as ``{role, content: str}``, model, integer
    usage, error. What assay keeps beyond it (output items, latency, cache) rides along."""
    if not sample:
        return dict(EMPTY_SAMPLE)
    output = [] if sample.get("output_text") is None else [{"role": "assistant", "content": str(sample["output_text"])}]
    numbers = {
        key: sample[key] if isinstance(sample.get(key), int | float) else EMPTY_SAMPLE[key]
        for key in ("temperature", "max_completion_tokens", "top_p", "seed")
    }
    return {
        **sample,
        **numbers,
        "input": [_message(m) for m in sample.get("input") or []],
        "output": output,
        "usage": _usage(sample.get("usage")),
        "model": str(sample.get("model") or ""),
        "finish_reason": str(sample.get("finish_reason") or ""),
        "error": api_error(sample.get("error")),
    }


def api_error(error: Any) -> dict[str, str]:
    if not error:
        return dict(NO_ERROR)
    if not isinstance(error, dict):
        return {"code": "error", "message": str(error)}
    return {**error, "code": str(error.get("code") or "error"), "message": str(error.get("message") or "")}


def _message(message: Any) -> dict[str, Any]:
    if not isinstance(message, dict):
        return {"role": "user", "content": message if isinstance(message, str) else json.dumps(message)}
    return {**message, "role": str(message.get("role") or "user"), "content": content_text(message.get("content"))}


def content_text(content: Any) -> str:
    """A message's content as one string: text parts joined (``input_text``, ``text``, ...)."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        parts = [p.get("text") if isinstance(p, dict) else p for p in content]
        return "".join(p for p in parts if isinstance(p, str))
    return json.dumps(content)


def _usage(usage: Any) -> dict[str, int]:
    """Chat Completions and Responses usage alike, as the four integer counts the spec names."""
    usage = usage if isinstance(usage, dict) else {}
    details = usage.get("input_tokens_details") or usage.get("prompt_tokens_details") or {}
    counts = {
        "prompt_tokens": usage.get("prompt_tokens", usage.get("input_tokens")),
        "completion_tokens": usage.get("completion_tokens", usage.get("output_tokens")),
        "total_tokens": usage.get("total_tokens"),
        "cached_tokens": usage.get("cached_tokens", details.get("cached_tokens") if isinstance(details, dict) else 0),
    }
    return {key: int(value) if isinstance(value, int | float) else 0 for key, value in counts.items()}
