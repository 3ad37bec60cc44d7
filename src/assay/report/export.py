"""A run as files for people and CI: one self-contained HTML page, JUnit XML, a Markdown summary.

- **HTML**: the run page of the web UI as one file that opens offline (inline CSS and SVG, no
  links to the server): summary, charts, errors by cause, every item with its input, output and
  each criterion's score and reason (up to ``HTML_ITEMS``), and the run's configuration.
- **JUnit**: one ``<testsuite>`` per criterion, one ``<testcase>`` per item × criterion, a failed
  verdict a ``<failure>`` with the reason, an evaluator error an ``<error>``, a skip ``<skipped>``:
  every CI system lists them as tests. Valid against the Surefire JUnit 10 schema.
- **Markdown**: a pull-request comment: the gate-relevant table, and with a baseline the paired
  comparison (interval of B − A, verdict) and the first flipped items.
"""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

from assay.report.run_view import (
    TEMPLATES,
    criterion_names,
    duration_of,
    finished_summary,
    item_row,
    judged_criteria,
    score_histograms,
    summary_bars,
    top_causes,
)
from assay.results import OutputItem, Result, RunSummary
from assay.store import Store

HTML_ITEMS = 5_000
"""Items written into the HTML file; past that it says how many more the store holds."""


def html_report(store: Store, run_id: str, baseline: str | None = None) -> str:
    """One self-contained page; with ``baseline``, the paired comparison with that run too."""
    run = store.get_run(run_id)
    summary = run.summary or RunSummary()
    criteria = criterion_names(store, run, summary)
    outputs = list(store.iter_output_items(run_id, limit=HTML_ITEMS + 1))
    items = [
        {**item_row(output, criteria), "full": _pretty(output.datasource_item), "sample": _sample(output)}
        for output in outputs[:HTML_ITEMS]
    ]
    evaluation = store.get_eval(run.eval_id)
    configuration = {
        "eval": {k: getattr(evaluation, k) for k in ("name", "data_source_config", "testing_criteria")},
        "run": {k: run.as_dict()[k] for k in ("name", "data_source", "options", "metadata")},
    }
    return TEMPLATES.get_template("report.html").render(
        title=run.name or run_id,
        run=run,
        counts=summary.result_counts,
        summary=summary,
        criteria=criteria,
        bars=summary_bars(summary),
        histograms=score_histograms(store, run_id, finished_summary(run, summary)),
        causes=top_causes(store, run_id, finished_summary(run, summary)),
        items=items,
        more=len(outputs) > HTML_ITEMS,
        configuration=json.dumps(configuration, indent=2, default=str),
        written=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        duration=duration_of(run),
        **_comparison(store, baseline, run_id),
    )


def _comparison(store: Store, baseline: str | None, run_id: str) -> dict[str, Any]:
    """The comparison with ``baseline`` and its chart of B − A per criterion, for the page."""
    if baseline is None:
        return {"comparison": None, "comparison_chart": ""}
    from assay.report.charts import difference_bars
    from assay.stats.compare import compare_runs

    found = compare_runs(store, baseline, run_id)
    rows = [
        (
            f"{c.name} (B − A)",
            c.delta * 100,
            (c.interval[0] * 100, c.interval[1] * 100) if c.interval else None,
            f"n={c.n}",
        )
        for c in found.criteria
    ]
    return {"comparison": found, "comparison_chart": difference_bars(rows)}


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _sample(output: OutputItem) -> str | None:
    """The target's output, when the run generated one."""
    return None if not output.sample else _pretty(output.sample)


def junit_report(store: Store, run_id: str) -> str:
    run = store.get_run(run_id)
    summary = run.summary or RunSummary()
    criteria = criterion_names(store, run, summary)
    name = run.name or run_id
    suites = {c: ET.Element("testsuite", name=c) for c in criteria}
    counts = {c: {"tests": 0, "failures": 0, "errors": 0, "skipped": 0} for c in criteria}
    for output in store.iter_output_items(run_id):
        by_name = {r.name: r for r in output.results}
        label = _case_label(output)
        for criterion in criteria:
            case = ET.SubElement(suites[criterion], "testcase", name=label, classname=f"{name}.{criterion}")
            counts[criterion]["tests"] += 1
            kind, message = _verdict(by_name.get(criterion), output)
            if kind is not None:
                counts[criterion][{"failure": "failures", "error": "errors", "skipped": "skipped"}[kind]] += 1
                ET.SubElement(case, kind, message=message[:500], type=kind).text = message
    root = ET.Element("testsuites", name=name)
    for criterion, suite in suites.items():
        for key, value in counts[criterion].items():
            suite.set(key, str(value))
        suite.set("id", run_id)
        root.append(suite)
    totals = {key: sum(c[key] for c in counts.values()) for key in ("tests", "failures", "errors")}
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _case_label(output: OutputItem) -> str:
    item = output.datasource_item
    first = next((v for k, v in item.items() if k in ("query", "question", "input", "prompt")), None)
    text = first if isinstance(first, str) else json.dumps(item, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return f"item {output.datasource_item_id}: {text[:80]}{'…' if len(text) > 80 else ''}"


def _verdict(result: Result | None, output: OutputItem) -> tuple[str | None, str]:
    if result is None:  # the item failed before this criterion ran (a target or input error)
        error = next((r.reason for r in output.results if r.status == "error"), None)
        return ("error", error or "not evaluated") if output.status == "error" else ("skipped", "not evaluated")
    reason = result.reason or ""
    if result.status == "error":
        return "error", reason or "the evaluator failed"
    if result.status == "skipped":
        return "skipped", reason or "skipped"
    if result.status in ("filtered", "undetermined"):  # neither a pass nor a failure: a skip, said why
        return "skipped", f"{result.status}: {reason}" if reason else result.status
    if result.passed is False:
        score = result.score
        told = f"score {score:.4g} against threshold {result.threshold}" if score is not None else "failed"
        return "failure", f"{told}: {reason}" if reason else told
    return None, ""


def markdown_report(store: Store, run_id: str, baseline: str | None = None, *, ui_url: str | None = None) -> str:
    run = store.get_run(run_id)
    summary = run.summary or RunSummary()
    counts = summary.result_counts
    rate = summary.pass_rate()
    lines = [f"### assay: {_cell(run.name or run_id)} — {run.status}", ""]
    lines.append(
        f"**{counts.passed}/{counts.total} items passed**"
        + (f" ({rate:.0%})" if rate is not None else "")
        + f" · {counts.failed} failed · {counts.errored} errored"
        + (f" · {counts.undetermined} undetermined" if counts.undetermined else "")
        + (f" · {counts.filtered} filtered by a content filter" if counts.filtered else "")
        + f" · run `{run_id}`"
    )
    lines += ["", "| criterion | pass rate [95%] | mean | passed / failed / errored |", "|---|---:|---:|---:|"]
    for c in judged_criteria(summary):
        shown = "–" if c.pass_rate is None else f"{c.pass_rate:.0%}"
        if c.pass_rate_ci:
            shown += f" [{c.pass_rate_ci[0]:.0%}–{c.pass_rate_ci[1]:.0%}]"
        mean = "–" if c.mean_score is None else f"{c.mean_score:.3f}"
        lines.append(f"| {_cell(c.testing_criteria)} | {shown} | {mean} | {c.passed} / {c.failed} / {c.errored} |")
    if baseline is not None:
        lines += ["", *_comparison_lines(store, baseline, run_id)]
    if ui_url:
        lines += ["", f"[Open the run]({ui_url})"]
    return "\n".join(lines) + "\n"


def _comparison_lines(store: Store, baseline: str, run_id: str) -> Iterator[str]:
    from assay.stats.compare import compare_runs

    found = compare_runs(store, baseline, run_id)
    yield f"**Against `{baseline}`** (paired by item; B − A in points with its 95% interval)"
    yield ""
    yield "| criterion | n | before | after | B − A [95%] | verdict |"
    yield "|---|---:|---:|---:|---:|---|"
    for c in found.criteria:
        low, high = c.interval or (0.0, 0.0)
        mark = {"degraded": "🔴 degraded", "improved": "🟢 improved"}.get(c.verdict, c.verdict)
        yield (
            f"| {_cell(c.name)} | {c.n} | {c.passed_a / c.n:.0%} | {c.passed_b / c.n:.0%} | "
            f"{c.delta * 100:+.1f} [{low * 100:+.1f}, {high * 100:+.1f}] | {mark} |"
        )
    flips = [(c.name, f) for c in found.criteria for f in c.flips if f.before]
    if flips:
        yield ""
        yield f"<details><summary>{len(flips)} verdicts went from pass to fail (item × criterion)</summary>"
        yield ""
        for name, flip in flips[:20]:
            yield f"- {_cell(name)}, item {flip.item}" + (f": {_cell(flip.reason)}" if flip.reason else "")
        if len(flips) > 20:
            yield f"- ... and {len(flips) - 20} more"
        yield ""
        yield "</details>"
    if found.unpaired:
        yield ""
        yield f"{found.unpaired} items are in one run only and were left out."


def _cell(text: Any) -> str:
    """Text safe inside a Markdown table cell (a pipe or a newline would break the row)."""
    return " ".join(str(text).split()).replace("|", "\\|")[:200]
