"""What a run page shows, built once for the web UI and the files of ``assay report``: the
pass-rate bars with their intervals, score histograms, errors by cause and items as rows."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from assay.report.causes import error_causes
from assay.report.charts import histogram, pass_rate_bars
from assay.report.transcript import exchange, transcript
from assay.results import CriterionSummary, OutputItem, Result, RunSummary
from assay.results.stored import Run
from assay.store import Store

TEMPLATES = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=select_autoescape())
TEMPLATES.filters["datetime"] = lambda seconds: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds)) + " UTC"


def judged_criteria(summary: RunSummary) -> list[CriterionSummary]:
    """The criteria rows, without a red-team run's per-technique rows (shown in their own section)."""
    return [c for c in summary.per_testing_criteria_results if c.attack_strategy is None]


def criterion_names(store: Store, run: Run, summary: RunSummary) -> list[str]:
    names = [c.testing_criteria for c in judged_criteria(summary)]
    if not names:  # still running: name the criteria from the eval
        names = [c.get("name", "") for c in store.get_eval(run.eval_id).testing_criteria]
    return names


def summary_bars(summary: RunSummary) -> str:
    judged = judged_criteria(summary)
    notes = {
        c.testing_criteria: f"({c.errored} errored, {c.skipped} skipped"
        + (f", {c.undetermined} undetermined" if c.undetermined else "")
        + (f", {c.filtered} filtered)" if c.filtered else ")")
        for c in judged
        if c.pass_rate is None
    }
    return pass_rate_bars(
        [(c.testing_criteria, c.pass_rate) for c in judged], notes, {c.testing_criteria: c.pass_rate_ci for c in judged}
    )


def duration_of(run: Run) -> str:
    """How long a finished run took (``42 s``, ``3 min 5 s``); ``–`` while it runs."""
    if not run.finished_at or not run.created_at:
        return "–"
    seconds = max(0, run.finished_at - run.created_at)
    return f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"


def finished_summary(run: Run, summary: RunSummary) -> RunSummary | None:
    """The summary when it is final (a run still going has none worth trusting for the charts)."""
    return summary if run.status in ("completed", "failed", "canceled") else None


def top_causes(store: Store, run_id: str, summary: RunSummary | None = None) -> dict[str, list[tuple[str, int]]]:
    """The commonest error causes per criterion; none to look for when a final summary counts no error."""
    if summary is not None and not any(c.errored for c in summary.per_testing_criteria_results):
        return {}
    return {name: counter.most_common(3) for name, counter in error_causes(store, run_id).items()}


def item_row(output: OutputItem, criteria: list[str]) -> dict[str, Any]:
    """An output item as the items table shows it: a preview, each criterion's verdict and reason."""
    by_name = {r.name: r for r in output.results}
    results = []
    for name in criteria:
        result = by_name.get(name)
        if result is None:
            results.append({"name": name, "shown": "", "css": "", "reason": None})
            continue
        score = result.score
        shown = result.status if score is None else f"{score:.3g} {result.label or ''}"
        css = result.label or result.status
        results.append({"name": name, "shown": shown, "css": css, "reason": result.reason})
    item = output.datasource_item
    preview = " · ".join(f"{k}: {short(v)}" for k, v in list(item.items())[:3])
    # Items made from traces name them: a turn its trace_id, a conversation its trace_ids.
    traces = [item["trace_id"]] if isinstance(item.get("trace_id"), str) else list(item.get("trace_ids") or [])
    return {
        "datasource_item_id": output.datasource_item_id,
        "status": output.status,
        "datasource_item": item,
        "sample": output.sample,
        "results": results,
        "preview": preview,
        "traces": [str(t) for t in traces],
        "transcript": transcript(item),
        "exchange": exchange(item, output.sample),
    }


def result_view(result: Result) -> dict[str, Any]:
    """One criterion's result as the item page shows it: verdict, score, reason, and from its
    properties the judge's raw answer, tokens and latency (the rest of the properties as JSON)."""
    properties = dict(result.properties)
    usage = properties.pop("usage", None) or {}
    raw = properties.pop("raw_answer", None) or properties.pop("raw_answers", None)
    latency = properties.pop("latency_ms", None)
    if raw is not None and not isinstance(raw, str):
        raw = json.dumps(raw, indent=2, ensure_ascii=False)  # a failed judging keeps every answer it got
    score = result.score
    return {
        "name": result.name,
        "type": result.type,
        "metric": result.metric,
        "status": result.status,
        "label": result.label,
        "passed": result.passed,
        "score": "–" if score is None else f"{score:.4g}",
        "threshold": result.threshold,
        "reason": result.reason,
        "raw": raw,
        "tokens": f"{usage.get('prompt_tokens', 0)} in / {usage.get('completion_tokens', 0)} out" if usage else None,
        "model": usage.get("model"),
        "latency": None if latency is None else f"{latency:.0f} ms",
        "properties": json.dumps(properties, indent=2, ensure_ascii=False, default=str) if properties else None,
    }


def short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def score_histograms(store: Store, run_id: str, summary: RunSummary | None = None) -> list[tuple[str, str]]:
    """One histogram per criterion with scores, on the scale the scores use (0–1, 1–5 or 0–7): from
    the finished run's summary, else counted now."""
    steps = summary.score_steps if summary is not None and summary.score_steps is not None else None
    if steps is None:
        steps = store.score_steps(run_id)
    first = next(iter(store.iter_output_items(run_id, limit=1)), None)
    thresholds = {r.name: r.threshold for r in first.results} if first is not None else {}
    charts = []
    for name, counted in sorted(steps.items()):
        values, weights = [value for value, _ in counted], [count for _, count in counted]
        if set(values) <= {0.0, 1.0}:
            continue  # a pass/fail criterion: its pass-rate bar says all a histogram of 0s and 1s would
        low, high = min(0.0, min(values)), max(1.0, max(values))
        if high > 1 and high <= 7:
            low, high = (1.0, 5.0) if min(values) >= 1 and high <= 5 else (0.0, 7.0)
        charts.append((name, histogram(name, values, low, high, threshold=thresholds.get(name), weights=weights)))
    return charts
