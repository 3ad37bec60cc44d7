"""``assay run eval.yaml``: validate, evaluate with a progress bar, print the summary, gate CI."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from assay.cli.common import (
    DEFAULT_PROJECT,
    calibration_options,
    counted,
    executor_options,
    invoked_as,
    make_executor,
    open_store,
    out,
)
from assay.collector import tune_for_throughput

if TYPE_CHECKING:
    from rich.progress import Progress

    from assay.config.evalyaml import EvalConfig
    from assay.errors import RunStopped
    from assay.llm import CacheMode, ModelRegistry
    from assay.results.stored import Run
    from assay.run import PreparedRun, RunOutcome
    from assay.run.estimate import Estimate
    from assay.store import Store


def parse_fail_on(value: str | None) -> float | None:
    """``any-failure`` → every item must pass; ``pass-rate=0.9`` → at least that share."""
    if value is None:
        return None
    if value == "any-failure":
        return 1.0
    if value.startswith("pass-rate="):
        try:
            rate = float(value.split("=", 1)[1])
        except ValueError:
            rate = -1.0
        if 0.0 <= rate <= 1.0:
            return rate
    raise click.BadParameter("use any-failure or pass-rate=<0..1>, e.g. pass-rate=0.9", param_hint="--fail-on")


@click.command("run")
@click.argument("eval_yaml", type=click.Path(path_type=Path))
@click.option("--resume", "resume_id", metavar="RUN_ID", help="Finish an interrupted run without redoing items.")
@click.option("--retry-errors", is_flag=True, help="With --resume, evaluate errored items again.")
@click.option("--concurrency", type=click.IntRange(1, 1024), help="Items evaluated at once (default 64).")
@click.option("--fail-on", "fail_on", metavar="any-failure|pass-rate=R", help="Exit 1 when the gate is missed.")
@calibration_options
@click.option(
    "--cache",
    "cache_mode",
    type=click.Choice(["use", "replay", "off", "refresh"]),
    help="Model-call cache, default use (a resumed run keeps its own); replay: no new calls.",
)
@click.option("--estimate", is_flag=True, help="Print the calls, tokens and cost the run would need; call nothing.")
@click.option("--repeats", type=click.IntRange(1, 50), help="Judge each item K times (eval.yaml repeats:).")
@click.option(
    "--repeats-target",
    "trials",
    type=click.IntRange(1, 50),
    help="Run the target K times per item, each trial judged: pass@k, pass^k (repeats: {target: K}).",
)
@click.option("--limit", type=click.IntRange(1), metavar="N", help="Only the first N items: a quick look first.")
@click.option(
    "--batch",
    is_flag=True,
    help="Send model calls through the provider's Batch API: half the price, results within 24 h (options: batch).",
)
@click.option(
    "--processes",
    type=click.IntRange(1, 256),
    help="Processes a run that calls no model spreads over (default ASSAY_RUN_PROCESSES: auto, one per core).",
)
@executor_options
def run_command(
    eval_yaml: Path,
    resume_id: str | None,
    retry_errors: bool,
    concurrency: int | None,
    fail_on: str | None,
    require_calibrated: bool,
    min_kappa: float,
    cache_mode: CacheMode | None,
    estimate: bool,
    repeats: int | None,
    trials: int | None,
    limit: int | None,
    batch: bool,
    processes: int | None,
    executor: str,
    ray_address: str | None,
    actors: int | None,
) -> None:
    """Evaluate the dataset of EVAL_YAML with its evaluators and store the results.

    Exit codes: 0 the run ended (and passed its --fail-on gate); 1 the gate was missed, or the run
    stopped on the way (a model unreachable, a full disk: --resume it); 2 a usage error (a bad
    eval.yaml, tools that cannot be opened), said before any item; 3 nothing could be evaluated
    (every item errored, no verdict given); 130 interrupted."""
    from assay.formats.promptfoo import is_promptfoo_config

    gate = parse_fail_on(fail_on)
    run_executor = make_executor(executor, ray_address, actors, concurrency)
    paths = [eval_yaml]
    if resume_id is None and is_promptfoo_config(eval_yaml):
        paths = imported_promptfoo(eval_yaml)
    outcomes = [
        run_eval(
            path,
            resume_id,
            retry_errors,
            concurrency,
            cache_mode,
            estimate,
            repeats,
            trials,
            limit,
            run_executor,
            processes=processes,
            batch=batch,
        )
        for path in paths
    ]
    for outcome in outcomes:
        if outcome is not None:
            refuse_nothing_evaluated(outcome)
            gate_on(outcome, gate, min_kappa if require_calibrated else None)


NOTHING_EVALUATED = 3
"""The exit code of a run in which every item errored (the others: ``run_command``'s help)."""


def refuse_nothing_evaluated(outcome: RunOutcome) -> None:
    """Exit ``NOTHING_EVALUATED`` when every item errored and no criterion gave any verdict:
    whatever the cause, such a run measured nothing and must not pass a pipeline."""
    counts, criteria = outcome.summary.result_counts, outcome.summary.per_testing_criteria_results
    decided = sum(criterion.passed + criterion.failed for criterion in criteria)
    if counts.total and counts.errored == counts.total and not decided:  # no criterion judged any item
        out.print(
            f"[red]nothing could be evaluated[/]: all {counts.total} items errored "
            f"(each item's error: {invoked_as()} results {outcome.run.id} --format csv)",
            highlight=False,
        )
        sys.exit(NOTHING_EVALUATED)


def imported_promptfoo(config: Path) -> list[Path]:
    """A promptfoo config written as assay's files (under ASSAY_HOME): the eval.yaml of each provider."""
    from assay.config.settings import settings
    from assay.formats.promptfoo import load_suite, work_folder, write_files

    suite = load_suite(config)
    paths = write_files(suite, work_folder(suite, settings().home))
    out.print(f"[dim]promptfoo: {len(suite.tests)} tests × {len(suite.prompts)} prompts, {len(paths)} provider(s)[/]")
    return paths


def run_eval(
    eval_yaml: Path | EvalConfig,
    resume_id: str | None,
    retry_errors: bool,
    concurrency: int | None,
    cache_mode: CacheMode | None,
    estimate: bool,
    repeats: int | None,
    trials: int | None,
    limit: int | None,
    run_executor: Any,
    *,
    processes: int | None = None,
    batch: bool = False,
) -> RunOutcome | None:
    """One eval.yaml run (or resumed, or estimated); its outcome, for the gate."""
    from assay.cli.interrupt import interruptible
    from assay.cli.summary import TargetStats, print_error_causes, print_summary, print_target_stats
    from assay.config.evalyaml import load_eval_config
    from assay.errors import RunStopped
    from assay.report.causes import error_causes
    from assay.run import RunOptions, check_resumable, finish_run
    from assay.run.engine import DEFAULT_CONCURRENCY
    from assay.run.estimate import estimate as estimate_run
    from assay.run.from_config import config_request, prepare_config
    from assay.run.request import start_request
    from assay.run.runner import summary_of
    from assay.simulate.datasets import save_conversations

    config = load_eval_config(eval_yaml) if isinstance(eval_yaml, Path) else eval_yaml
    if repeats is not None:
        config.definition.repeats = repeats
    if trials is not None:
        config.definition.trials = trials
    store = open_store()
    resumed = store.get_run(store.run_id_for(resume_id)) if resume_id else None
    # A resumed run keeps the cache mode it started with unless told otherwise.
    mode: CacheMode = cache_mode or (resumed.options.cache if resumed is not None else None) or "use"
    notes: list[str] = []
    request = config_request(config, store, cache=mode, limit=limit, resumed=resumed, notes=notes, batch=batch)
    for note in notes:
        out.print(f"[dim]traces: {note}[/]")
    prepared = prepare_config(config, request, store)
    dataset = prepared.dataset
    simulation = config.target.simulation if config.target is not None else None
    if estimate:
        assert prepared.models is not None
        print_estimate(estimate_run(prepared, prepared.models))
        return None
    if resumed is not None:
        run = resumed
        check_resumable(run, prepared, store)
        if retry_errors:
            errored = [output.datasource_item_id for output in store.iter_output_items(run.id, status="error")]
            store.delete_output_items(run.id, errored)
    else:
        run = start_request(prepared, store, request)
    total = prepared.total
    done = len(store.done_item_ids(run.id))
    options = RunOptions(
        concurrency=concurrency or int(config.options.get("concurrency", DEFAULT_CONCURRENCY)),
        executor=run_executor,
        processes=processes,
    )
    if done:
        out.print(f"[dim]resuming: {done} items already stored are kept[/]")
    criteria = counted(len(prepared.criteria), "criterion", "criteria")
    # Soft-wrapped: at 80 columns the terminal folds the line, never a newline inside a path or the run id.
    out.print(f"[dim]{dataset.name}: {counted(total, 'item')} checked · {criteria} · run {run.id}[/]", soft_wrap=True)
    target_stats = TargetStats()
    tune_for_throughput()
    with progress_bar(prepared.models) as progress:
        # With a target, generating and judging move at their own pace: one bar each.
        generating = None
        if prepared.target:
            generating = progress.add_task("generating", total=total, completed=done, resumed=done)
        task = progress.add_task("evaluating", total=total, completed=done, resumed=done)

        def sampled(sample: dict[str, Any]) -> None:
            target_stats.add(sample)
            if generating is not None:
                progress.advance(generating)

        def advance(stored: int) -> None:
            progress.advance(task, stored)

        def mark_canceled() -> None:
            summary = summary_of(store, run.id, prepared)
            store.update_run(run.id, status="canceled", summary=summary)

        try:
            with interruptible(mark_canceled):
                outcome = finish_run(prepared, run, store, options=options, on_stored=advance, on_sample=sampled)
        except KeyboardInterrupt:
            progress.stop()
            out.print(f"[yellow]canceled[/]: resume with  {invoked_as()} run {eval_yaml} --resume {run.id}")
            sys.exit(130)
        except RunStopped as exc:
            progress.stop()
            exc.hint = resume_hint(exc, f"{invoked_as()} run {eval_yaml} --resume {run.id}")
            raise
    print_summary(outcome.run, outcome.summary, store.url)
    print_error_causes(error_causes(store, run.id), outcome.summary)
    if target_stats.latencies_ms and simulation is None:
        print_target_stats(target_stats)
    if simulation is not None and simulation.save_as:
        saved = save_conversations(store, DEFAULT_PROJECT, run.id, simulation.save_as)["dataset"]
        out.print(f"conversations saved as dataset {saved['name']} version {saved['version']}")
    return outcome


def refuse_uncalibrated(run_id: str, min_kappa: float) -> None:
    from assay.stats.calibration import uncalibrated

    missing = uncalibrated(open_store(), run_id, min_kappa)
    if missing:
        for name, why in sorted(missing.items()):
            out.print(f"[red]gate refused[/]: {name}: {why}", highlight=False)
        out.print("[dim]calibrate: assay judges agreement RUN --labels human.jsonl --save[/]")
        sys.exit(1)


def print_estimate(found: Estimate) -> None:
    out.print(f"estimate for {found.items} items (no model was called):")
    if not found.models:
        out.print("  no model calls: every evaluator here runs locally")
    for entry in found.models.values():
        cost = "" if entry.cost_usd is None else f", about ${entry.cost_usd:.4f}"
        out.print(
            f"  {entry.model}: {entry.calls} calls ({entry.cached} cached), ~{entry.prompt_tokens:,} prompt "
            f"tokens, ≤{entry.completion_tokens:,} completion tokens{cost}"
        )


def resume_hint(stopped: RunStopped, resume: str) -> str:
    """What to do about a run that stopped part-way, ending with the command that resumes it."""
    from assay.errors import StoreError

    if isinstance(stopped, StoreError):
        return f"nothing stored is lost; once there is room, resume: {resume}"
    first = f"{stopped.hint}; " if stopped.hint else ""
    return f"{first}what was stored is kept; resume: {resume}"


def progress_bar(models: ModelRegistry | None = None) -> Progress:
    """``evaluating ━━━━━━━━━━━━  412/1000 items  0:00:31  13.2/s  0:00:44 left`` in 80 columns,
    and while model calls wait to be retried, how many and why."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Items per second since the start (not rich's short window, which a burst of cache hits sends
        into the hundreds of thousands); items a resumed run already had do not count."""

        def render(self, task: Task) -> Text:
            elapsed, done = task.elapsed or 0.0, task.completed - task.fields.get("resumed", 0)
            return Text(f"{done / elapsed:.1f}/s" if elapsed > 0.2 and done else "–/s", style="progress.data.speed")

    class RetriesColumn(ProgressColumn):
        """Read at every refresh, so a stalled bar says it is waiting on retries, not hanging; else
        the limits a provider stated, which pace the run."""

        def render(self, task: Task) -> Text:
            used = models.used() if models is not None else []
            waiting = [model for model in used if model.retrying]
            if not waiting:
                paced = [f"{m.name} {m.provider_limits.describe()}" for m in used if m.provider_limits is not None]
                return Text(f"paced: {paced[0]}"[:40] if paced else "", style="dim")
            count = sum(model.retrying for model in waiting)
            why = waiting[0].last_failure or ""
            return Text(f"retrying {count}: {why[:40]}", style="yellow")

    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(bar_width=20),
        MofNCompleteColumn(),
        TextColumn("items"),
        TimeElapsedColumn(),
        RateColumn(),
        TimeRemainingColumn(),
        TextColumn("left"),
        RetriesColumn(),
        console=out,
        transient=False,
    )


def finish_with_progress(
    prepared: PreparedRun, run: Run, store: Store, *, label: str, concurrency: int, canceled_hint: str
) -> RunOutcome:
    """``finish_run`` under one progress bar; Ctrl-C marks the run canceled, says ``canceled_hint``
    and exits 130."""
    from assay.cli.interrupt import interruptible
    from assay.run import RunOptions, finish_run
    from assay.run.runner import summary_of

    done = len(store.done_item_ids(run.id))
    tune_for_throughput()
    with progress_bar() as progress:
        task = progress.add_task(label, total=prepared.total, completed=done, resumed=done)

        def mark_canceled() -> None:
            summary = summary_of(store, run.id, prepared)
            store.update_run(run.id, status="canceled", summary=summary)

        try:
            with interruptible(mark_canceled):
                return finish_run(
                    prepared,
                    run,
                    store,
                    options=RunOptions(concurrency=concurrency),
                    on_stored=lambda stored: progress.advance(task, stored),
                )
        except KeyboardInterrupt:
            progress.stop()
            out.print(f"[yellow]canceled[/]: {canceled_hint}")
            sys.exit(130)


def gate_on(outcome: RunOutcome, required: float | None, min_kappa: float | None = None) -> None:
    """Exit 1 when the pass rate misses ``required``; with ``min_kappa``, also when a judge that
    decided verdicts has no calibration against people at that κ (``assay.stats.calibration``)."""
    if required is None:
        return
    if min_kappa is not None:
        refuse_uncalibrated(outcome.run.id, min_kappa)
    counts = outcome.summary.result_counts
    decided = counts.passed + counts.failed
    rate = counts.passed / decided if decided else 0.0
    if required >= 1.0 and (counts.failed or counts.errored or counts.undetermined):
        out.print(
            f"[red]gate missed[/]: {counts.failed} failed, {counts.errored} errored and {counts.undetermined} "
            "undetermined items (--fail-on any-failure)"
        )
        sys.exit(1)
    from assay.stats.compare import MAX_UNDETERMINED

    judged = decided + counts.undetermined
    if judged and counts.undetermined / judged > MAX_UNDETERMINED:  # the pass rate would stand on too few items
        out.print(
            f"[red]gate missed[/]: {counts.undetermined} of {judged} items undetermined (over "
            f"{MAX_UNDETERMINED:.0%}): the judge's readable verdicts cannot vouch for the rest"
        )
        sys.exit(1)
    if rate < required:
        out.print(f"[red]gate missed[/]: pass rate {rate:.1%} is below {required:.1%}")
        sys.exit(1)
