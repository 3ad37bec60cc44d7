"""Stored rows as the OpenAI Evals wire objects (the shapes openai-python parses)."""

from __future__ import annotations

from typing import Any

from assay.results import RunSummary

EMPTY_SAMPLE: dict[str, Any] = {
    "input": [], "output": [], "finish_reason": "", "model": "", "error": None, "temperature": 0.0,
    "max_completion_tokens": 0, "top_p": 0.0, "seed": 0,
    "usage": {"total_tokens": 0, "completion_tokens": 0, "prompt_tokens": 0, "cached_tokens": 0},
}  # fmt: skip


def page(data: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    shown = data[:limit]
    return {
        "object": "list", "data": shown, "first_id": shown[0]["id"] if shown else None,
        "last_id": shown[-1]["id"] if shown else None, "has_more": len(data) > limit,
    }  # fmt: skip


def file_object(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"], "object": "file", "bytes": row["bytes"], "created_at": row["created_at"],
        "filename": row["filename"], "purpose": row["purpose"], "status": "processed", "status_details": None,
        "expires_at": None,
    }  # fmt: skip


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


def eval_object(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"], "object": "eval", "created_at": row["created_at"], "name": row["name"],
        "metadata": row["metadata"] or {}, "data_source_config": schema_of(row["data_source_config"]),
        "testing_criteria": row["testing_criteria"],
    }  # fmt: skip


def run_object(row: dict[str, Any], criteria: list[dict[str, Any]], report_url: str) -> dict[str, Any]:
    summary = RunSummary.model_validate(row["summary"] or {})
    counts = summary.result_counts
    ids = {c.get("name"): c.get("id", c.get("name")) for c in criteria}
    per_criterion = [
        {"testing_criteria": ids.get(c.testing_criteria, c.testing_criteria), "name": c.testing_criteria,
         "passed": c.passed, "failed": c.failed, "errored": c.errored, "skipped": c.skipped, "pass_rate": c.pass_rate}
        for c in summary.per_testing_criteria_results
    ]  # fmt: skip
    usage = [
        {"model_name": u.model_name, "run_model_name": u.model_name, "invocation_count": u.invocation_count,
         "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens, "total_tokens": u.total_tokens,
         "cached_tokens": u.cached_tokens}
        for u in summary.per_model_usage
    ]  # fmt: skip
    options = row["options"] or {}
    return {
        "id": row["id"], "object": "eval.run", "eval_id": row["eval_id"], "name": row["name"] or row["id"],
        "status": row["status"], "created_at": row["created_at"], "model": "", "metadata": row["metadata"] or {},
        "data_source": row["data_source"], "report_url": report_url, "error": row["error"],
        "result_counts": {"total": counts.total, "passed": counts.passed, "failed": counts.failed,
                          "errored": counts.errored, "skipped": counts.skipped},
        "per_model_usage": usage, "per_testing_criteria_results": per_criterion,
        "evaluation_level": options.get("evaluation_level", "turn"),
    }  # fmt: skip


def output_item_id(run_id: str, index: int) -> str:
    return f"outputitem_{run_id.split('_', 1)[-1][:16]}_{index}"


def item_index(item_id: str) -> int | None:
    tail = item_id.rsplit("_", 1)[-1]
    # ASCII digits only, and few enough for a database integer (an index past 2^63 names nothing).
    return int(tail) if tail.isascii() and tail.isdigit() and len(tail) <= 18 else None


def output_item_object(row: dict[str, Any], eval_id: str) -> dict[str, Any]:
    results = [{**result, "sample": None} for result in row["results"]]
    status = {"pass": "pass", "fail": "fail"}.get(row["status"], row["status"])
    item, sample = dict(row["datasource_item"]), row["sample"] or {}
    if "output_text" in sample or sample.get("error"):
        # Foundry shows what a target generated inside the item too, under these literal keys.
        item["sample.output_text"] = sample.get("output_text")
        item["sample.output_items"] = sample.get("output_items") or []
    return {
        "id": output_item_id(row["run_id"], row["datasource_item_id"]), "object": "eval.run.output_item",
        "eval_id": eval_id, "run_id": row["run_id"], "created_at": row["created_at"], "status": status,
        "datasource_item_id": row["datasource_item_id"], "datasource_item": item,
        "results": results, "sample": sample_object(sample),
    }  # fmt: skip


def sample_object(sample: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's sample shape: input and output messages, model, usage, error."""
    if not sample:
        return dict(EMPTY_SAMPLE)
    output = [] if sample.get("output_text") is None else [{"role": "assistant", "content": sample["output_text"]}]
    usage = {**EMPTY_SAMPLE["usage"], **(sample.get("usage") or {})}
    return {**EMPTY_SAMPLE, **sample, "input": sample.get("input") or [], "output": output, "usage": usage,
            "model": sample.get("model") or "", "finish_reason": sample.get("finish_reason") or ""}  # fmt: skip
