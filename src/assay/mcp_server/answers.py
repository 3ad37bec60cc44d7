"""What each MCP tool finds, as a concise text a model reads and the same as JSON.

Each function works on the store the CLI uses and raises ``AssayError`` for a user's mistake (an
unknown run, a bad eval.yaml), whose message and hint the server hands back as the tool's error.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.config.evalyaml import load_eval_config
from assay.evaluators.catalog import Catalog
from assay.report.causes import error_causes
from assay.results import RunSummary
from assay.results.stored import Run
from assay.run.from_config import config_request, prepare_config
from assay.stats.compare import compare_runs
from assay.store import Store

EXAMPLES = 3
"""Failed items shown per criterion and cause."""

REASON_CHARS = 300


@dataclass
class Answer:
    text: str
    data: dict[str, Any]


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def summary_text(run: Run, summary: RunSummary) -> str:
    """A run's outcome in a few lines: its counts, then each criterion's pass rate with its interval."""
    counts = summary.result_counts
    lines = [
        f"run {run.id} ({run.name or 'unnamed'}): {run.status}",
        f"items: {counts.total} total, {counts.passed} passed, {counts.failed} failed, {counts.errored} errored"
        + (f", {counts.undetermined} undetermined" if counts.undetermined else ""),
    ]
    for row in summary.per_testing_criteria_results:
        interval = row.pass_rate_ci
        shown = f" [{interval[0]:.0%}, {interval[1]:.0%}]" if interval else ""
        mean = "" if row.mean_score is None else f", mean score {row.mean_score:.3g}"
        lines.append(
            f"  {row.testing_criteria}: pass rate {percent(row.pass_rate)}{shown} "
            f"({row.passed} passed, {row.failed} failed, {row.errored} errored){mean}"
        )
    for usage in summary.per_model_usage:
        cost = "" if usage.cost_usd is None else f", ${usage.cost_usd:.4f}"
        lines.append(f"  model {usage.model_name}: {usage.invocation_count} calls{cost}")
    return "\n".join(lines)


def run_answer(run: Run) -> Answer:
    summary = run.summary or RunSummary()
    data = {
        "id": run.id,
        "eval_id": run.eval_id,
        "name": run.name,
        "status": run.status,
        "error": run.error,
        "summary": summary.model_dump(mode="json"),
    }
    text = summary_text(run, summary)
    if run.error:
        text += f"\nerror: {run.error.get('message')}"
    return Answer(text, data)


def get_run(store: Store, run_id: str) -> Answer:
    return run_answer(store.get_run(store.run_id_for(run_id)))


def list_runs(store: Store, eval_name: str | None = None, limit: int = 20) -> Answer:
    runs = store.list_runs(limit=limit if eval_name is None else 1000)
    if eval_name is not None:
        runs = [run for run in runs if run.name == eval_name][:limit]
    rows: list[dict[str, Any]] = []
    for run in runs:
        summary = run.summary or RunSummary()
        rows.append(
            {
                "id": run.id,
                "name": run.name,
                "status": run.status,
                "created_at": run.created_at,
                "items": summary.result_counts.total,
                "pass_rate": summary.pass_rate(),
            }
        )
    if not rows:
        return Answer("no runs" + (f" of eval {eval_name!r}" if eval_name else ""), {"runs": []})
    text = "\n".join(
        f"{row['id']}  {row['name'] or ''}  {row['status']}  {row['items']} items  "
        f"pass rate {percent(row['pass_rate'])}"
        for row in rows
    )
    return Answer(text, {"runs": rows})


def compare(store: Store, baseline: str, candidate: str) -> Answer:
    """The gate's verdicts for ``candidate`` against ``baseline`` (``assay runs compare``)."""
    a, b = store.run_id_for(baseline), store.run_id_for(candidate)
    found = compare_runs(store, a, b)
    lines = [f"{b} against {a}: " + ("regression" if found.regressed else "no regression")]
    for c in found.criteria:
        low, high = c.interval or (0.0, 0.0)
        lines.append(
            f"  {c.name}: {c.passed_a}/{c.n} → {c.passed_b}/{c.n} passed, "
            f"B−A {c.delta * 100:+.1f} points [{low * 100:+.1f}, {high * 100:+.1f}], "
            f"p (Holm) {c.p_holm:.3f}: {c.verdict}"
        )
        for flip in c.flips[:EXAMPLES]:
            way = "pass → fail" if flip.before else "fail → pass"
            lines.append(f"    item {flip.item}: {way}" + (f" ({flip.reason[:REASON_CHARS]})" if flip.reason else ""))
    if found.unpaired:
        lines.append(f"  {found.unpaired} items are in one run only and were left out")
    data = found.as_dict()
    data["regressed"] = [c.name for c in found.regressed]
    return Answer("\n".join(lines), data)


def explain_failures(store: Store, run_id: str, criterion: str | None = None) -> Answer:
    """A run's failed and errored results, grouped by criterion and cause, with a few examples each
    and the judges' reasons."""
    run_id = store.run_id_for(run_id)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    counts: Counter[tuple[str, str]] = Counter()
    for status in ("fail", "error"):
        for item in store.iter_output_items(run_id, status=status):
            for result in item.results:
                if criterion is not None and result.name != criterion:
                    continue
                if result.status == "error":
                    cause = "errored"
                elif result.passed is False:
                    cause = "failed"
                else:
                    continue
                key = (result.name, cause)
                counts[key] += 1
                if len(groups[key]) < EXAMPLES:
                    groups[key].append(
                        {
                            "item": item.datasource_item_id,
                            "score": result.score,
                            "threshold": result.threshold,
                            "reason": (result.reason or "")[:REASON_CHARS],
                            "input": _excerpt(item.datasource_item),
                        }
                    )
    if not counts:
        where = f" on {criterion}" if criterion else ""
        return Answer(f"run {run_id}: nothing failed or errored{where}", {"run_id": run_id, "groups": []})
    lines = [f"run {run_id}: {sum(counts.values())} failed or errored results"]
    data_groups = []
    for (name, cause), count in counts.most_common():
        lines.append(f"{name} {cause}: {count} items")
        for example in groups[(name, cause)]:
            score = "" if example["score"] is None else f" score {example['score']:.3g}"
            lines.append(f"  item {example['item']}{score}: {example['reason'] or 'no reason given'}")
            lines.append(f"    input: {example['input']}")
        data_groups.append({"criterion": name, "cause": cause, "count": count, "examples": groups[(name, cause)]})
    errors = error_causes(store, run_id)
    for name, causes in errors.items():
        if criterion is None or name == criterion:
            for cause, count in causes.most_common(EXAMPLES):
                lines.append(f"{name} error cause ({count}): {cause[:REASON_CHARS]}")
    return Answer("\n".join(lines), {"run_id": run_id, "groups": data_groups})


def _excerpt(item: dict[str, Any]) -> str:
    shown = ", ".join(f"{key}={str(value)[:80]!r}" for key, value in list(item.items())[:4])
    return shown[:REASON_CHARS]


def list_evaluators(catalog: Catalog) -> Answer:
    rows: list[dict[str, Any]] = []
    for spec in catalog.specs():
        lines = spec.description.strip().splitlines()
        rows.append(
            {
                "name": spec.name,
                "category": spec.category,
                "calls_a_model": spec.uses_model,
                "inputs": spec.required_inputs,
                "description": lines[0] if lines else "",
            }
        )
    text = "\n".join(
        f"{row['name']} ({row['category']}{', LLM judge' if row['calls_a_model'] else ''}; "
        f"needs {', '.join(row['inputs']) or 'nothing named'}): {row['description']}"
        for row in rows
    )
    return Answer(text, {"evaluators": rows})


def validate(store: Store, path: Path) -> Answer:
    """eval.yaml and its dataset checked as ``assay run`` checks them before any item (nothing is
    run, no model called); a mistake raises with its file:line and a hint."""
    config = load_eval_config(path)
    request = config_request(config, store, cache="replay", limit=None)
    prepared = prepare_config(config, request, store)
    criteria = [criterion.name for criterion in prepared.criteria]
    text = f"{path}: valid: {prepared.total} items, criteria {', '.join(criteria)}"
    return Answer(text, {"path": str(path), "items": prepared.total, "criteria": criteria})
