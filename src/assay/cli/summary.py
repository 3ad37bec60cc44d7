"""The run summary as a table: per criterion pass rate and mean score, then the item counts."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from assay.cli.common import out
from assay.results import RunSummary


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _bar(value: float | None, width: int = 8) -> str:
    if value is None:
        return ""
    filled = round(value * width)
    colour = "green" if value >= 0.8 else "yellow" if value >= 0.5 else "red"
    return f"[{colour}]{'█' * filled}[/][dim]{'░' * (width - filled)}[/]"


def print_summary(run: dict[str, Any], summary: RunSummary, store_url: str) -> None:
    table = Table(title=f"{run.get('name') or 'run'} — {run['status']}", title_justify="left")
    # Sized to fit 80 columns: names give way (with an ellipsis) before the numbers do.
    table.add_column("criterion", no_wrap=True, max_width=22, overflow="ellipsis")
    table.add_column("metric", no_wrap=True, max_width=14, overflow="ellipsis")
    table.add_column("pass rate", justify="right", no_wrap=True, min_width=13)
    table.add_column("mean", justify="right", no_wrap=True, min_width=6)
    table.add_column("p/f/e/s", justify="right", no_wrap=True, min_width=9)
    for c in summary.per_testing_criteria_results:
        mean = "–" if c.mean_score is None else f"{c.mean_score:.3f}"
        rate = f"{_bar(c.pass_rate)} {_percent(c.pass_rate):>4}"
        table.add_row(c.testing_criteria, c.metric, rate, mean, f"{c.passed}/{c.failed}/{c.errored}/{c.skipped}")
    out.print(table)
    out.print("[dim]p/f/e/s: items passed, failed, errored, skipped[/]")
    counts = summary.result_counts
    out.print(
        f"items: {counts.total} total, [green]{counts.passed} passed[/], [red]{counts.failed} failed[/], "
        f"[yellow]{counts.errored} errored[/], {counts.skipped} skipped"
        f"  (pass rate {_percent(summary.pass_rate())})"
    )
    for usage in summary.per_model_usage:
        cost = "" if usage.cost_usd is None else f", ${usage.cost_usd:.4f}"
        out.print(
            f"model {usage.model_name}: {usage.invocation_count} calls, {usage.cache_hits} cached, "
            f"{usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion tokens{cost}"
        )
    out.print(f"run id: [bold]{run['id']}[/]")
    out.print(f"store: {store_url}")
    out.print(f"details: assay runs show {run['id']}", soft_wrap=True)
    out.print(f"results: assay results {run['id']} --format jsonl|csv", soft_wrap=True)
