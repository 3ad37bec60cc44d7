"""Start, resume and finish a run: validate everything first, then execute, then summarise.

A run refuses to start on invalid data or criteria and then writes nothing. Once started it
always ends ``completed``, ``failed`` or ``canceled`` (Ctrl-C), with the summary stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa

from assay.collector import frozen_during
from assay.config.settings import settings
from assay.dataset import Dataset, ItemSchema, ScanReport, scan
from assay.errors import ConfigError, store_failure
from assay.evaluators.catalog import Catalog
from assay.llm import ModelRegistry
from assay.llm.batch import BATCH_DISCOUNT
from assay.redteam.summary import add_red_team
from assay.results import RunSummary
from assay.results.records import AgentCriterionSummary, SimulationSummary
from assay.results.stored import Run, RunSettings
from assay.review.events import export_run_verdicts
from assay.run.attack_criteria import AttackCriterion, attack_criteria
from assay.run.clusters import cluster_intervals
from assay.run.criteria import BoundCriterion, bind_criteria
from assay.run.definition import EvalDefinition, RunBinding
from assay.run.engine import ProgressCallback, RunJob, RunOptions, SampleCallback
from assay.run.processes import execute_spread
from assay.run.targets import build_run_target, supplied_fields
from assay.run.tasks import PREFIX as TASK_PREFIX
from assay.run.tasks import TaskCriteria, check_tasks, summarize_tasks, task_criteria
from assay.run.trials import summarize_trials
from assay.store import Store
from assay.store.base import DEFAULT_PROJECT, LOCAL_PREFIX, lease_seconds
from assay.store.tally import RunTally
from assay.targets import Target, TargetSpec

T = TypeVar("T")


@dataclass
class PreparedRun:
    """A checked eval and dataset, ready to execute (nothing has been written yet)."""

    definition: EvalDefinition
    dataset: Dataset
    report: ScanReport
    criteria: list[BoundCriterion]
    models: ModelRegistry | None = None
    target: Target | None = None
    binding: RunBinding | None = None
    """What the criteria and target were built from, for an executor that builds them again elsewhere."""

    @property
    def total(self) -> int:
        """Output items the run makes: one per item, or one per trial with target repeats."""
        return self.report.rows * self.definition.trials


@dataclass
class RunOutcome:
    run: Run
    summary: RunSummary
    evaluated_now: int


def prepare(
    definition: EvalDefinition,
    dataset: Dataset,
    catalog: Catalog,
    models: ModelRegistry | None = None,
    target: TargetSpec | None = None,
) -> PreparedRun:
    """Check the schema, every item, every criterion and the target; raise before anything is stored."""
    schema = ItemSchema(definition.item_schema)
    # A simulation's rows are scenarios: the schema describes the conversations made from them.
    checked = definition.check_items and (target is None or target.simulation is None)
    with frozen_during():  # the rows read here live as long as the run: walking them is wasted
        report = scan(dataset, schema if checked else None)
    report.raise_if_invalid()
    if report.rows == 0:
        raise ConfigError(f"{dataset.name}: the dataset has no items")
    if definition.trials > 1 and target is None:
        raise ConfigError("repeats.target runs the target several times per item: the run needs a target")
    fields = schema.known_fields() or report.fields_in_some_item
    if target is not None and fields is not None:
        fields = set(fields) | supplied_fields(target)
    samples = report.rows_with_sample > 0
    # Only rows with criteria are tasks: the scan saw every field, so most datasets are not read again.
    has_tasks = "criteria" in report.fields_in_some_item and check_tasks(dataset)
    binding = RunBinding(
        definition, catalog, target, fields, has_tasks=has_tasks, samples=samples, list_fields=report.list_fields
    )
    models = models.for_run() if models is not None else None  # the models this run uses, for its pre-flight
    criteria, generate = bind_run(binding, models)
    return PreparedRun(definition, dataset, report, criteria, models, generate, binding)


def bind_run(binding: RunBinding, models: ModelRegistry | None) -> tuple[list[BoundCriterion], Target | None]:
    """The criteria and the target of a run, built against ``models``."""
    definition, catalog, target, fields = binding.definition, binding.catalog, binding.target, binding.fields
    has_sample = target is not None or binding.samples
    criteria = bind_criteria(
        definition.testing_criteria,
        catalog,
        item_fields=fields,
        level=definition.evaluation_level,
        models=models,
        has_sample=has_sample,
        repeats=definition.repeats,
        list_fields=binding.list_fields,
    )
    generate = build_run_target(target, models) if target is not None else None
    if binding.has_tasks:  # task-level criteria, each judged on its own
        tasks = task_criteria(
            definition.testing_criteria,
            criteria,
            catalog,
            models,
            item_fields=fields,
            has_sample=has_sample,
            level=definition.evaluation_level,
        )
        criteria.append(tasks)
    if target is not None and target.red_team is not None:
        criteria = attack_criteria(criteria)  # each risk's criterion judges the attacks on it
    return criteria, generate


def start(
    prepared: PreparedRun,
    store: Store,
    data_source: dict[str, Any] | None = None,
    settings: RunSettings | None = None,
    *,
    queued: bool = False,
    inputs: dict[str, Any] | None = None,
    project: str = DEFAULT_PROJECT,
) -> Run:
    """Store the eval and a run this process executes (``finish_run``) under its own lease, or with
    ``queued`` one left for a worker to claim; ``data_source`` defaults to the dataset's file. A new
    eval and the run belong to ``project``."""
    definition = prepared.definition
    if definition.eval_id is not None:
        stored_eval = store.get_eval(definition.eval_id)
    else:
        stored_eval = store.create_eval(
            name=definition.name,
            data_source_config=definition.data_source_config(),
            testing_criteria=definition.testing_criteria,
            metadata=definition.metadata or None,
            project=project,
        )
    data_source = data_source or {"type": "jsonl", "source": {"type": "file_path", "path": prepared.dataset.name}}
    settings = (settings or RunSettings()).model_copy(
        update={
            "evaluation_level": definition.evaluation_level,
            "total_items": prepared.report.rows,
            "repeats": definition.repeats,
            "trials": definition.trials,
            "cluster_by": definition.cluster_by,
        }
    )
    return store.create_run(
        eval_id=stored_eval.id,
        data_source=data_source,
        options=settings,
        name=definition.name,
        held_by=None if queued else local_worker(),  # no server worker may claim what this process executes
        inputs=inputs,
        project=project,
    )


def finish_run(
    prepared: PreparedRun,
    run: Run,
    store: Store,
    *,
    options: RunOptions | None = None,
    on_stored: ProgressCallback | None = None,
    claimed: bool = False,
    on_sample: SampleCallback | None = None,
) -> RunOutcome:
    """Execute the items the run still lacks, then store and return its summary.

    ``claimed``: a worker already moved the run to ``in_progress`` (and a cancel may have come since,
    which must not be overwritten).
    """
    options = options or RunOptions()
    if run.options.batch:
        options = dataclasses.replace(options, batch=True)
    if not claimed:  # a local process executes the run itself, under a lease of its own
        options = held_locally(store, run, options)
    job = RunJob(
        run.id,
        prepared.dataset,
        prepared.criteria,
        store,
        options,
        on_stored,
        prepared.models,
        prepared.target,
        on_sample,
        binding=prepared.binding,
        trials=prepared.definition.trials,
        tally=RunTally(),
    )
    close = functools.partial(_close, store, run.id, prepared, worker=options.worker)
    try:
        evaluated = execute_spread(job, prepared.report.rows * prepared.definition.trials)
    except (KeyboardInterrupt, asyncio.CancelledError):
        close("canceled")
        raise
    except sa.exc.SQLAlchemyError as exc:
        failure = store_failure(exc, "keep the run's results")
        with contextlib.suppress(sa.exc.SQLAlchemyError):  # the database may still be unable to take it
            close("failed", {"code": "store_error", "message": failure.message})
        raise failure from None
    except Exception as exc:
        close("failed", {"code": type(exc).__name__, "message": str(exc)})
        raise
    # Canceled from elsewhere (the API) while the last items finished: the run stays canceled.
    canceled = job.stopped or store.get_run(run.id).status == "canceled"
    if not canceled and options.before_complete is not None:
        try:
            options.before_complete()
        except Exception as exc:
            close("failed", {"code": type(exc).__name__, "message": str(exc)})
            raise
    summary = close("canceled" if canceled else "completed", written=job.tally)
    events_endpoint = settings().evaluation_events_endpoint
    if events_endpoint and not canceled:
        export_run_verdicts(store, run.id, events_endpoint)
    return RunOutcome(store.get_run(run.id), summary, evaluated)


def local_worker() -> str:
    """The lease holder's name for runs this process (and thread) executes itself."""
    return f"{LOCAL_PREFIX}{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def dead_local_holder(holder: str | None) -> str | None:
    """``holder`` when it names a process of this machine that is gone (an ``assay run`` killed
    with SIGKILL): its lease is void at once, not when it would have run out."""
    if holder is None or not holder.startswith(LOCAL_PREFIX):
        return None
    host, _, rest = holder.removeprefix(LOCAL_PREFIX).partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return holder
    except PermissionError:  # alive, another user's
        return None
    return None


def held_locally(store: Store, run: Run, options: RunOptions) -> RunOptions:
    """Hold the run's lease for this process and renew it while the run executes, as a worker
    does: a server on the same store then leaves the run alone, and a cancel from the API stops it.
    A run this process started a moment ago (``start``) is held already: it is not taken again."""
    worker, run_id = local_worker(), run.id
    # Only this thread of this process takes a run under its name, and no one else can take a run
    # whose lease has not run out: the run as given is the run as stored, but for a cancel since
    # (which the first renewal hears of).
    left = (run.lease_until or 0) - time.time()
    held = run.worker == worker and run.status == "in_progress" and left > lease_seconds() / 2
    if not held:
        store.hold_run(run_id, worker, replacing=dead_local_holder(store.get_run(run_id).worker))
    asked = options.keep_going

    def keep_going() -> bool:
        return store.renew_lease(run_id, worker) == "in_progress" and (asked is None or asked())

    return dataclasses.replace(options, worker=worker, keep_going=keep_going)


def _close(
    store: Store,
    run_id: str,
    prepared: PreparedRun,
    status: str,
    error: dict[str, Any] | None = None,
    *,
    worker: str | None = None,
    written: RunTally | None = None,
) -> RunSummary:
    """Store the run's end; a worker that no longer holds the run's lease changes nothing.
    ``written``: what this execution wrote, counted as it wrote it (``RunTally``)."""
    summary = summary_of(store, run_id, prepared, written)
    store.update_run(run_id, worker=worker, status=status, error=error, summary=summary)
    return summary


def summary_of(store: Store, run_id: str, prepared: PreparedRun, written: RunTally | None = None) -> RunSummary:
    """The summary of a prepared run as it stands in the store."""
    definition = prepared.definition
    return summarize(
        store, run_id, prepared.criteria, prepared.models, definition.cluster_by, definition.trials, written
    )


def summarize(
    store: Store,
    run_id: str,
    criteria: list[BoundCriterion],
    models: ModelRegistry | None = None,
    cluster_by: str | None = None,
    trials: int = 1,
    written: RunTally | None = None,
) -> RunSummary:
    # Task criteria report one row per check (criteria.<name>), not one for themselves.
    named = [(c.name, c.metric) for c in criteria if not isinstance(c, TaskCriteria)]
    summary = store.summarize(run_id, named, written)
    if cluster_by or trials > 1:  # an item's trials are one cluster too
        cluster_intervals(store, run_id, summary, cluster_by, trials)
    _within_scale(summary, criteria)
    if trials > 1:
        summary.trials = summarize_trials(store, run_id, trials)
    for row in summary.per_testing_criteria_results:
        if row.testing_criteria.startswith(TASK_PREFIX) and not row.metric:
            row.metric = "task_adherence"
    fidelity = next((c.name for c in criteria if c.spec.name == FIDELITY), None)
    if fidelity is not None:
        summary.simulation = _attribute(store, run_id, fidelity)
    if any(isinstance(c, TaskCriteria) for c in criteria):
        summary.tasks = summarize_tasks(store, run_id, criteria)
    if any(c.repeats > 1 for c in criteria):
        _count_flaky(store, run_id, summary)
    if any(isinstance(c, AttackCriterion) for c in criteria):
        add_red_team(summary, store, run_id)
    summary.per_agent = _per_agent(store, run_id)
    configs = models.configs if models else {}
    prices = {c.model: c.price for c in configs.values() if c.price}
    # A model whose calls went through the Batch API is costed at its price (the few it retried
    # one by one included).
    batched = {configs[name].model for name, _ in store.model_batches(run_id) if name in configs} if prices else set()
    for usage in [*summary.per_model_usage, *summary.per_role_usage]:
        price = prices.get(usage.model_name)
        if price is not None:
            discount = BATCH_DISCOUNT if usage.model_name in batched else 1.0
            usage.cost_usd = price.cost(usage.prompt_tokens, usage.completion_tokens) * discount
    return summary


def _within_scale(summary: RunSummary, criteria: list[BoundCriterion]) -> None:
    """A mean's interval never reaches past its scale (a 0/1 criterion's is within [0, 1]); a
    criterion whose mean lies off its declared scale (a custom evaluator's own numbers) is left as is."""
    scales = {}
    for c in criteria:
        if not isinstance(c, TaskCriteria) and c.spec.metrics:
            metric = next((m for m in c.spec.metrics if m.name == c.metric), c.spec.primary)
            scales[c.name] = (metric.min_value, metric.max_value)
    for row in summary.per_testing_criteria_results:
        scale, ci = scales.get(row.testing_criteria), row.mean_score_ci
        if scale is None or ci is None or row.mean_score is None or not scale[0] <= row.mean_score <= scale[1]:
            continue
        row.mean_score_ci = [max(scale[0], ci[0]), min(scale[1], ci[1])]


FIDELITY = "builtin.simulator_fidelity"


def _per_agent(store: Store, run_id: str) -> list[AgentCriterionSummary] | None:
    """Each criterion's verdicts per agent, for a workflow's run (its items say which part they
    are); None for any other run, whose items are not read again."""
    # The first item alone says which kind of run this is: a page of a thousand read and validated
    # for it cost an F1-only run of 5,000 items a tenth of its time.
    first = next(store.iter_output_items(run_id, limit=1), None)
    if first is None or "workflow_part" not in first.datasource_item:
        return None
    rows: dict[tuple[str, str], AgentCriterionSummary] = {}
    for output in store.iter_output_items(run_id):
        agent = str(output.datasource_item.get("agent_id") or "unknown")
        for result in output.results:
            row = rows.setdefault(
                (agent, result.name), AgentCriterionSummary(agent=agent, testing_criteria=result.name)
            )
            if result.status == "error":
                row.errored += 1
            elif result.passed is True:
                row.passed += 1
            elif result.passed is False:
                row.failed += 1
    for row in rows.values():
        decided = row.passed + row.failed
        row.pass_rate = row.passed / decided if decided else None
    return sorted(rows.values(), key=lambda r: (r.agent != "workflow", r.agent, r.testing_criteria))


def _count_flaky(store: Store, run_id: str, summary: RunSummary) -> None:
    """Per criterion, the items whose repeats did not agree on the verdict."""
    flaky: dict[str, int] = {}
    for output in store.iter_output_items(run_id):
        for result in output.results:
            if result.properties.get("flaky"):
                flaky[result.name] = flaky.get(result.name, 0) + 1
    for criterion in summary.per_testing_criteria_results:
        criterion.flaky = flaky.get(criterion.testing_criteria, 0)


def _attribute(store: Store, run_id: str, fidelity: str) -> SimulationSummary:
    """Each conversation's outcome put on the simulated user or on the agent."""
    split = SimulationSummary()
    for output in store.iter_output_items(run_id):
        results = output.results
        faithful = any(r.name == fidelity and r.passed is True for r in results)
        others = [r for r in results if r.name != fidelity]
        if not faithful:
            split.simulation_unreliable += 1
        elif all(r.passed is True or r.status == "skipped" for r in others):
            split.agent_passed += 1
        else:
            split.agent_failed += 1
    return split


def check_resumable(run: Run, prepared: PreparedRun, store: Store) -> None:
    """A run resumes only with the eval it started with; anything else would mix results."""
    stored = store.get_eval(run.eval_id)
    if stored.testing_criteria != prepared.definition.testing_criteria:
        raise ConfigError(
            f"run {run.id} was started with different testing criteria",
            hint="resume with the eval.yaml it started with, or start a new run",
        )
    if run.options.total_items not in (None, prepared.report.rows):
        raise ConfigError(
            f"run {run.id} was started on a dataset of {run.options.total_items} items; "
            f"this one has {prepared.report.rows}",
            hint="resume with the same dataset, or start a new run",
        )
