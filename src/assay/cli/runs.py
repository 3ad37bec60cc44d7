"""``assay runs list|show`` and ``assay results RUN --format jsonl|csv``."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

import click
from rich.table import Table

from assay.cli.common import calibration_options, dumps, invoked_as, open_store, out

if TYPE_CHECKING:
    from assay.results import OutputItem
    from assay.stats.compare import Comparison


@click.group("runs")
def runs_group() -> None:
    """Look at stored runs."""


@runs_group.command("list")
@click.option("--limit", default=20, show_default=True)
@click.option("--status", type=click.Choice(["queued", "in_progress", "completed", "failed", "canceled"]))
@click.option("--wide", is_flag=True, help="Whole run ids and every count, however wide.")
@click.option("--json", "as_json", is_flag=True, help="The runs as a JSON array (for scripts: jq -r '.[0].id').")
def list_runs(limit: int, status: str | None, wide: bool, as_json: bool) -> None:
    """The most recent runs (ids shortened: any unique start of an id works in every command; `last` is
    the newest run)."""
    import time

    from assay.cli.summary import short_id
    from assay.results import RunSummary

    store = open_store()
    runs = store.list_runs(limit=limit, status=status)
    if as_json:
        keys = ("id", "name", "status", "created_at", "finished_at", "summary")
        sys.stdout.write(dumps([{key: run.as_dict()[key] for key in keys} for run in runs]) + "\n")
        return
    if not runs:
        where = f" with status {status}" if status else ""
        out.print(f"no runs{where} in {store.url} (ASSAY_HOME or ASSAY_DATABASE_URL chooses the store)", soft_wrap=True)
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("run", no_wrap=True)
    table.add_column("name", overflow="ellipsis", no_wrap=True, max_width=24)
    for column in ("created (UTC)", "status", "items", "pass rate", *(("passed", "failed", "errored") if wide else ())):
        table.add_column(column, no_wrap=True, justify="right" if column not in ("created (UTC)", "status") else "left")
    for run in runs:
        summary = run.summary or RunSummary()
        counts, rate = summary.result_counts, summary.pass_rate()
        created = time.strftime("%m-%d %H:%M", time.gmtime(run.created_at))
        row = [
            run.id if wide else short_id(run.id),
            run.name or "",
            created,
            run.status,
            str(counts.total),
            "–" if rate is None else f"{rate:.0%}",
        ]
        if wide:
            row += [str(counts.passed), str(counts.failed), str(counts.errored)]
        table.add_row(*row)
    out.print(table)
    out.print(f"[dim]store {store.url}[/]")
    # A line of its own, never folded: the command runs as printed.
    out.print(f"[dim]{invoked_as()} runs show RUN · --wide: whole ids[/]", soft_wrap=True)


@runs_group.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="The run as JSON: its id, eval, status, options and summary.")
def show_run(run_id: str, as_json: bool) -> None:
    """A run's summary table and where its results are."""
    from assay.cli.summary import print_summary
    from assay.results import RunSummary

    store = open_store()
    run = store.get_run(store.run_id_for(run_id))
    if as_json:
        keys = ("id", "eval_id", "name", "status", "created_at", "finished_at", "options", "error", "summary")
        sys.stdout.write(dumps({key: run.as_dict()[key] for key in keys}) + "\n")
        return
    summary = run.summary or RunSummary()
    print_summary(run, summary, store.url)
    if run.error:
        out.print(f"[red]error[/]: {run.error.get('message')}")


@runs_group.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option(
    "--fail-on",
    "fail_on",
    type=click.Choice(["regression"]),
    help="Exit 1 when a criterion degraded: Holm-adjusted p < 0.05 and its interval of B − A below 0 (or -margin).",
)
@click.option(
    "--margin",
    "margins",
    multiple=True,
    metavar="[CRITERION=]M",
    help="A non-inferiority margin: a drop smaller than M (0.02 = two points) is not a regression; "
    "CRITERION=M for one criterion (repeatable).",
)
@click.option(
    "--flips",
    "shown_flips",
    type=click.IntRange(0),
    default=10,
    show_default=True,
    help="Flipped items listed per criterion.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@calibration_options
def compare(
    run_a: str,
    run_b: str,
    fail_on: str | None,
    margins: tuple[str, ...],
    shown_flips: int,
    as_json: bool,
    require_calibrated: bool,
    min_kappa: float,
) -> None:
    """Compare RUN_B with RUN_A item by item: paired intervals, McNemar, Holm, the flipped items."""
    from assay.stats.compare import MAX_UNDETERMINED, compare_runs

    store = open_store()
    run_a, run_b = store.run_id_for(run_a), store.run_id_for(run_b)
    found = compare_runs(store, run_a, run_b, margin=parse_margins(margins))
    if as_json:
        out.print_json(dumps(found.as_dict()))
    else:
        # No box and short headers: the table fits 80 columns with the criterion's name whole.
        table = Table(title=f"{run_b} against {run_a}", title_justify="left", box=None, pad_edge=False)
        for column in ("criterion", "n", "A", "B", "B−A [95%]", "p Holm", "MDD", "verdict"):
            table.add_column(
                column,
                justify="left" if column in ("criterion", "verdict") else "right",
                no_wrap=column not in ("criterion", "verdict"),
                min_width=len(column),
            )
        for c in found.criteria:
            low, high = c.interval or (0.0, 0.0)
            style = VERDICT_STYLES.get(c.verdict)
            table.add_row(
                c.name,
                str(c.n),
                f"{c.passed_a / c.n:.0%}",
                f"{c.passed_b / c.n:.0%}",
                f"{c.delta * 100:+.1f} [{low * 100:+.1f}, {high * 100:+.1f}]",
                f"{c.p_holm:.3f}",
                f"{(c.minimum_detectable or 0) * 100:.1f}",
                c.verdict,
                style=style,
            )
        out.print(table)
        out.print("[dim]points of pass rate; MDD: the smallest difference these paired items could detect[/]")
        for c in found.criteria:
            if c.flip_rate is not None and c.noise_floor is not None:
                out.print(
                    f"{c.name}: identical runs flip {c.flip_rate:.1%} of verdicts (from the target's repeats); "
                    f"differences under {c.noise_floor * 100:.1f} points are within that noise",
                    soft_wrap=True,
                )
        if found.scores:
            out.print(score_table(found))
        for c in found.criteria:
            for flip in c.flips[:shown_flips]:
                way = "pass → fail" if flip.before else "fail → pass"
                out.print(
                    f"  {c.name} item {flip.item}: {way}" + (f" ({flip.reason})" if flip.reason else ""),
                    markup=False,
                    soft_wrap=True,
                )
            if len(c.flips) > shown_flips:
                out.print(f"  {c.name}: ... {len(c.flips) - shown_flips} more flipped items (--flips N)")
        if found.unpaired:
            out.print(f"[yellow]{found.unpaired} items are in one run only and were left out[/]")
    if fail_on == "regression" and require_calibrated:
        from assay.cli.run import refuse_uncalibrated

        refuse_uncalibrated(run_b, min_kappa)
    if fail_on == "regression" and found.undecidable:
        named = ", ".join(f"{c.name} ({c.undetermined[0]} and {c.undetermined[1]} items)" for c in found.undecidable)
        out.print(
            f"[red]too many undetermined verdicts[/]: {named}; the judge's readable verdicts cannot vouch for "
            f"the rest (more than {MAX_UNDETERMINED:.0%} undetermined)"
        )
    if fail_on == "regression" and found.regressed:
        named = ", ".join(f"{c.name} ({c.delta * 100:+.1f} points)" for c in found.regressed)
        out.print(f"[red]regression[/]: {named}")
    if fail_on == "regression" and (found.regressed or found.undecidable):
        sys.exit(1)


VERDICT_STYLES = {"degraded": "red", "improved": "green", "changed": "yellow", "too many undetermined": "red"}


def parse_margins(given: tuple[str, ...]) -> float | dict[str, float]:
    """``--margin 0.02`` for every criterion, or ``--margin name=0.02`` (repeatable) for some."""
    whole: float | None = None
    named: dict[str, float] = {}
    for text in given:
        name, _, value = text.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not 0 <= number <= 1:
            raise click.BadParameter(f"{text!r}: give a number in 0..1 or CRITERION=0..1", param_hint="--margin")
        if name:
            named[name] = number
        else:
            whole = number
    if whole is not None and named:
        raise click.BadParameter("give one margin for all criteria, or margins by name, not both")
    return named if named else (whole or 0.0)


def score_table(found: Comparison) -> Table:
    """Criteria with scores beyond pass/fail; the test's name is in the caption (``--json`` has it per
    row), so the table fits 80 columns."""
    tests = sorted({f"{c.test} ({c.kind})" for c in found.scores})
    table = Table(
        title="scores (beyond pass/fail)",
        title_justify="left",
        caption=f"p: {', '.join(tests)}, Holm-adjusted",
        caption_justify="left",
        box=None,
        pad_edge=False,
    )
    for column in ("criterion", "n", "A", "B", "B−A [95%]", "p Holm", "verdict"):
        wrap = column in ("criterion", "verdict")
        table.add_column(
            column,
            justify="left" if column in ("criterion", "verdict") else "right",
            no_wrap=not wrap,
            overflow="fold",
            min_width=len(column),
        )
    for c in found.scores:
        low, high = c.interval or (0.0, 0.0)
        table.add_row(
            c.name,
            str(c.n),
            f"{c.mean_a:.3g}",
            f"{c.mean_b:.3g}",
            f"{c.mean_b - c.mean_a:+.3g} [{low:+.3g}, {high:+.3g}]",
            f"{c.p_holm:.3f}",
            c.verdict,
            style=VERDICT_STYLES.get(c.verdict),
        )
    return table


@click.command("results")
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl", show_default=True)
@click.option(
    "--status",
    type=click.Choice(["pass", "fail", "error", "undetermined", "filtered", "skipped"]),
    help="Only items with this status.",
)
@click.option(
    "--output", "-o", type=click.File("w", encoding="utf-8"), default="-", help="File to write (default stdout)."
)
def results(run_id: str, fmt: str, status: str | None, output: IO[str]) -> None:
    """Write a run's output items as JSONL (full) or CSV (one column per criterion field)."""
    store = open_store()
    run_id = store.run_id_for(run_id)
    outputs = store.iter_output_items(run_id, status=status)
    if fmt == "jsonl":
        for output_item in outputs:
            output.write(dumps(output_item.model_dump(include=PUBLIC_FIELDS)) + "\n")
        return
    _write_csv(outputs, output)


PUBLIC_FIELDS = {"datasource_item_id", "status", "datasource_item", "sample", "results"}


def _write_csv(outputs: Iterator[OutputItem], stream: IO[str]) -> None:
    writer: Any = None
    for output in outputs:
        flat: dict[str, Any] = {"datasource_item_id": output.datasource_item_id, "status": output.status}
        for key, value in output.datasource_item.items():
            flat[f"item.{key}"] = value if isinstance(value, str) else dumps(value)
        for result in output.results:
            for key in ("score", "passed", "label", "status", "reason"):
                flat[f"{result.name}.{key}"] = getattr(result, key)
        if writer is None:
            writer = csv.DictWriter(stream, fieldnames=list(flat), extrasaction="ignore")
            writer.writeheader()
        writer.writerow(flat)
    if writer is None and stream is sys.stdout:
        out.print("[dim]no output items[/]")


@click.command("plan")
@click.option("--baseline", "run_id", required=True, metavar="RUN", help="A run of the eval to plan for.")
@click.option("--mde", type=click.FloatRange(0.001, 1), required=True, help="The pass-rate drop to detect (0.05).")
@click.option("--power", type=click.FloatRange(0.5, 0.999), default=0.8, show_default=True)
@click.option("--alpha", type=click.FloatRange(0.001, 0.5), default=0.05, show_default=True)
@click.option(
    "--discordance",
    type=click.FloatRange(0, 1),
    help="The share of items expected to flip between two runs (default: the drop plus the baseline's "
    "judge noise, from its repeats).",
)
@click.option("--json", "as_json", is_flag=True)
def plan_command(run_id: str, mde: float, power: float, alpha: float, discordance: float | None, as_json: bool) -> None:
    """How many items a comparison needs to detect a pass-rate drop of --mde."""
    from assay.stats.plan import plan

    store = open_store()
    run_id = store.run_id_for(run_id)
    plans = plan(store, run_id, mde=mde, alpha=alpha, power=power, discordance=discordance)
    if as_json:
        out.print_json(dumps([p.as_dict() for p in plans]))
        return
    table = Table(
        title=f"to detect a drop of {mde * 100:.1f} points (power {power:.0%}, α {alpha})", title_justify="left"
    )
    for column in ("criterion", "pass rate", "flips assumed", "design effect", "items needed", "items in run"):
        table.add_column(column, justify="left" if column == "criterion" else "right", no_wrap=True)
    for p in plans:
        needed = "–" if p.needed is None else f"{p.needed:,}"
        style = None if p.needed is None else "green" if p.items >= p.needed else "yellow"
        table.add_row(
            p.name,
            f"{p.pass_rate:.0%}",
            f"{p.discordance:.1%}",
            f"{p.design_effect:.2f}",
            needed,
            f"{p.items:,}",
            style=style,
        )
    out.print(table)
    out.print("[dim]Connor's sample size for McNemar's test; α split over the criteria (Holm's first step)[/]")
