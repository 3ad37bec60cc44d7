"""The run summary as a table: per criterion pass rate and mean score, then the item counts."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

from assay.api.announce import server_for
from assay.cli.common import counted, invoked_as, out, percent
from assay.results import RunSummary
from assay.results.records import RoleUsage, TrialSummary
from assay.results.stored import Run


def _interval(bounds: list[float] | None) -> str:
    """``[67–89]``: a rate's 95% interval in whole percent."""
    return "" if not bounds else f"[{bounds[0] * 100:.0f}–{bounds[1] * 100:.0f}]"


def _bar(value: float | None, width: int = 8) -> str:
    if value is None:
        return ""
    filled = round(value * width)
    colour = "green" if value >= 0.8 else "yellow" if value >= 0.5 else "red"
    return f"[{colour}]{'█' * filled}[/][dim]{'░' * (width - filled)}[/]"


def print_error_causes(causes: dict[str, Counter[str]], summary: RunSummary) -> None:
    if not causes:
        return
    errored = {c.testing_criteria: c.errored for c in summary.per_testing_criteria_results}
    out.print("[yellow]errors by cause[/] (an item counts as failed when another criterion failed it):")
    for criterion, counter in causes.items():
        out.print(f"  {criterion}: {counted(errored.get(criterion, sum(counter.values())), 'error')}", markup=False)
        for cause, count in counter.most_common(3):
            out.print(f"    {count} × {cause}", markup=False, soft_wrap=True)


def print_summary(run: Run, summary: RunSummary, store_url: str) -> None:
    table = Table(title=f"{run.name or 'run'} — {run.status}", title_justify="left")
    # Sized to fit 80 columns: a long name folds onto a second line before a number gives way; none is cut.
    table.add_column("criterion", max_width=20, overflow="fold")
    table.add_column("metric", max_width=16, overflow="fold")
    table.add_column("pass rate [95%]", justify="right", no_wrap=True, min_width=15)
    table.add_column("mean", justify="right", no_wrap=True, min_width=6)
    # Counts without a verdict beyond errors and skips (u: undetermined, x: filtered) are columns only
    # in a run that has them: most runs keep four.
    rows = summary.per_testing_criteria_results
    extra = [
        (key, name) for key, name in (("u", "undetermined"), ("x", "filtered")) if any(getattr(c, name) for c in rows)
    ]
    keys = "/".join(["p", "f", "e", "s", *(key for key, _ in extra)])
    table.add_column(keys, justify="right", no_wrap=True, min_width=9)
    for c in rows:
        mean = "–" if c.mean_score is None else f"{c.mean_score:.3f}"
        rate = f"{_bar(c.pass_rate, 4)} {percent(c.pass_rate):>4} {_interval(c.pass_rate_ci)}".rstrip()
        if c.pass_rate is None and c.mean_score is not None and not c.n:
            rate = "no pass mark"  # scored, with no threshold to pass at: a mean, not a rate
        counted_items = "/".join(str(n) for n in (c.passed, c.failed, c.errored, c.skipped))
        counted_items += "".join(f"/{getattr(c, name)}" for _, name in extra)
        table.add_row(c.testing_criteria, c.metric, rate, mean, counted_items)
    out.print(table)
    clusters = next((c.clusters for c in rows if c.clusters), None)
    over = f" over {clusters} clusters of items" if clusters else ""
    names = ", ".join(["passed", "failed", "errored", "skipped", *(name for _, name in extra)])
    out.print(f"[dim]{keys}: items {names}; [95%]: Wilson interval{over}[/]")
    counts = summary.result_counts
    undetermined = f", [cyan]{counts.undetermined} undetermined[/] (no readable verdict)" if counts.undetermined else ""
    filtered = f", [magenta]{counts.filtered} filtered[/] (a content filter stopped a call)" if counts.filtered else ""
    decided = counts.passed + counts.failed
    out.print(
        f"items: {counts.total} total, [green]{counts.passed} passed[/], [red]{counts.failed} failed[/], "
        f"[yellow]{counts.errored} errored[/], {counts.skipped} skipped{undetermined}{filtered}"
        f"  (pass rate {percent(summary.pass_rate())} of {decided} decided)",
        soft_wrap=True,
    )
    if summary.tasks is not None and summary.tasks.composite is not None:
        scores = ", ".join(f"{t.name} {t.score:.2f}" for t in summary.tasks.tasks if t.score is not None)
        out.print(
            f"composite score [bold]{summary.tasks.composite:.3f}[/] over {len(summary.tasks.tasks)} tasks "
            f"(0–1; {scores})",
            soft_wrap=True,
        )
    if summary.per_agent:
        print_per_agent(summary)
    if summary.trials is not None:
        print_trials(summary.trials)
    print_usage(summary)
    out.print(f"run id: [bold]{run.id}[/]")
    out.print(f"store: {store_url}")
    short = short_id(run.id)
    me = invoked_as()
    # Each command as it runs when pasted: "--format jsonl|csv" was a pipe to a program named csv.
    out.print(f"details: {me} runs show {short} · results: {me} results {short} --format csv", soft_wrap=True)
    served = server_for(store_url)
    if served is not None:
        out.print(f"view: {served}/ui/runs/{run.id}", soft_wrap=True)
    else:
        out.print(f"view: {me} view {short} · report: {me} report {short} --html report.html", soft_wrap=True)


def print_per_agent(summary: RunSummary) -> None:
    """A multi-agent workflow's verdicts per agent: the workflow overall first, then each agent."""
    assert summary.per_agent is not None
    table = Table(title="per agent", title_justify="left")
    table.add_column("agent", no_wrap=True, max_width=24, overflow="ellipsis")
    table.add_column("criterion", no_wrap=True, max_width=20, overflow="ellipsis")
    table.add_column("pass rate", justify="right", no_wrap=True, min_width=10)
    table.add_column("p/f/e", justify="right", no_wrap=True, min_width=7)
    for row in summary.per_agent:
        rate = f"{_bar(row.pass_rate, 4)} {percent(row.pass_rate):>4}"
        table.add_row(row.agent, row.testing_criteria, rate, f"{row.passed}/{row.failed}/{row.errored}")
    out.print(table)


def short_id(run_id: str) -> str:
    """The first 8 hex digits of a run id: what commands take (``Store.run_id_for``) and lists show."""
    return run_id.removeprefix("evalrun_")[:8]


@dataclass
class TargetStats:
    """What the target did in this invocation: its latency per sample, and its failures by cause."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    filtered: int = 0
    """Samples the provider's content filter stopped."""

    def add(self, sample: dict[str, Any]) -> None:
        self.latencies_ms.append(float(sample.get("latency_ms") or 0.0))
        self.filtered += isinstance(sample.get("filtered"), dict)
        if sample.get("error"):
            message = str(sample["error"].get("message") or sample["error"].get("code"))
            self.errors[message] = self.errors.get(message, 0) + 1


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile: the smallest value with at least ``share`` of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1))]


def print_target_stats(stats: TargetStats) -> None:
    values = stats.latencies_ms
    marks = " · ".join(f"p{int(q * 100)} {percentile(values, q):,.0f} ms" for q in (0.5, 0.9, 0.99))
    failed = sum(stats.errors.values())
    filtered = f", {stats.filtered} filtered" if stats.filtered else ""
    out.print(f"target: {len(values)} samples, {failed} failed{filtered}; latency {marks}, max {max(values):,.0f} ms")
    for message, count in sorted(stats.errors.items(), key=lambda e: -e[1])[:3]:
        out.print(f"  [yellow]{count}×[/] {message}", soft_wrap=True)


def print_trials(trials: TrialSummary) -> None:
    """Per criterion, over each item's trials: pass@k (any of k passed) and pass^k (all k did)."""
    k = trials.trials
    out.print(f"target trials: {k} per item (pass@{k}: any of {k} passed; pass^{k}: all {k} did, τ-bench)")
    for c in trials.per_testing_criteria:
        at, hat = c.pass_at_k.get(k), c.pass_hat_k.get(k)
        out.print(
            f"  {c.testing_criteria}: pass@{k} {percent(at)} {_interval(c.pass_at_k_ci)} · "
            f"pass^{k} {percent(hat)} {_interval(c.pass_hat_k_ci)} · pass@1 {percent(c.pass_at_k.get(1))} "
            f"over {c.items} items",
            soft_wrap=True,
        )


def print_usage(summary: RunSummary) -> None:
    """One line per role and model (the target, a simulated user, an attacker, the judges): calls
    made, answers from the cache, tokens, cost when priced."""
    for usage in summary.per_role_usage or summary.per_model_usage:
        cost = "" if usage.cost_usd is None else f", ${usage.cost_usd:.4f}"
        role = f"{usage.role.replace('_', ' ')} " if isinstance(usage, RoleUsage) else ""
        out.print(
            f"{role}model {usage.model_name}: {usage.invocation_count} calls, {usage.cache_hits} cached, "
            f"{usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion tokens{cost}"
        )
