"""``assay optimize``: azd's ``ai agent optimize`` on assay, run here instead of in a service.

    assay optimize --config eval.yaml --optimize-model gpt-5 [--max-candidates 5] [--max-stalls 5]
        [--max-metric-calls N] [--max-cost USD] [--max-wall-seconds S] [--seed 0] [--estimate]
    assay optimize status [JOB] [--output json] · list · cancel JOB · apply --candidate CID [--job JOB]

A job's state lives in ``.assay/optimize/<job>/state.json`` beside eval.yaml; ``--resume JOB``
carries on a job that was stopped or killed. Each scoring is an ordinary run (``assay runs show``,
the web UI); the table shows each candidate's validation score, its eval run and what changed.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from assay.cli.common import CACHE_OPTION, dumps, invoked_as, open_store, out
from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.config.agents import AgentDefinition
    from assay.config.evalyaml import EvalConfig
    from assay.llm import CacheMode
    from assay.optimize.search import Settings, State

JOBS = Path(".assay") / "optimize"


@click.group("optimize", invoke_without_command=True)
@click.option(
    "--config", "config_path", type=click.Path(path_type=Path, dir_okay=False), default="eval.yaml", show_default=True
)
@click.option("--optimize-model", metavar="MODEL", help="The reflection model (eval.yaml options.optimization_model).")
@click.option("--eval-model", metavar="MODEL", help="The judges' model (default: options.eval_model).")
@click.option("--max-candidates", type=click.IntRange(1, 100), help="Accepted candidates to stop at (5).")
@click.option("--max-stalls", type=click.IntRange(1, 100), help="Rejections in a row to stop at (5).")
@click.option("--max-metric-calls", type=click.IntRange(1), help="Task scorings to spend at most.")
@click.option("--max-cost", "max_cost", type=float, help="Dollars to spend at most (priced models).")
@click.option("--max-wall-seconds", type=float, help="Wall time to spend at most.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--task-repeats",
    type=click.IntRange(1, 20),
    help="Score each task K times, the agent run once per trial (default 3; options.task_repeats).",
)
@click.option("--resume", "resume_id", metavar="JOB", help="Carry on a job that was stopped or killed.")
@click.option("--estimate", is_flag=True, help="Print the most it could call; call nothing.")
@click.option("--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@CACHE_OPTION
@click.pass_context
def optimize_group(
    ctx: click.Context,
    config_path: Path,
    optimize_model: str | None,
    eval_model: str | None,
    max_candidates: int | None,
    max_stalls: int | None,
    max_metric_calls: int | None,
    max_cost: float | None,
    max_wall_seconds: float | None,
    seed: int,
    task_repeats: int | None,
    resume_id: str | None,
    estimate: bool,
    output: str,
    cache_mode: CacheMode,
) -> None:
    """Search for a better agent configuration, scored by the eval in eval.yaml."""
    if ctx.invoked_subcommand is not None:
        return
    from assay.config.evalyaml import load_eval_config
    from assay.optimize.jobs import job_object
    from assay.optimize.search import Optimizer, Settings, State
    from assay.run.from_config import config_catalog, config_models

    config = load_eval_config(config_path)
    options = config.options
    settings = Settings(
        optimization_model=optimize_model or options.get("optimization_model") or "",
        max_candidates=max_candidates or int(options.get("max_candidates", 5)),
        max_stalls=max_stalls or int(options.get("max_stalls", 5)),
        max_metric_calls=max_metric_calls or (options.get("budget") or {}).get("max_metric_calls"),
        max_cost_usd=max_cost if max_cost is not None else (options.get("budget") or {}).get("max_cost_usd"),
        max_wall_seconds=max_wall_seconds or (options.get("budget") or {}).get("max_wall_seconds"),
        seed=seed,
        task_repeats=task_repeats or int(options.get("task_repeats", 3)),
        model_search_space=[str(m) for m in (options.get("optimization_config") or {}).get("model_search_space") or []],
        tool_sources=list(config.target.tools) if config.target is not None else [],
        hosted_agent=_hosted(config),
    )
    if not settings.optimization_model:
        raise ConfigError(
            "name the reflection model: --optimize-model MODEL", hint="or options.optimization_model in eval.yaml"
        )
    tasks = _tasks(config)
    baseline = _baseline(config, eval_model)
    if settings.hosted_agent is None:
        _refuse_unimplemented_tools(config, baseline, settings.tool_sources)
    if estimate:
        _print_estimate(tasks, settings, config)
        return
    store = open_store()
    models = config_models(config, store, cache_mode, default=eval_model)
    evaluators = config_catalog(config, store)
    jobs = config.path.parent / JOBS
    if resume_id:
        state = _load(config.path.parent, resume_id)
        settings = Settings(**state.settings)  # a resumed job goes on exactly as it started
    else:
        state = State(id=f"optjob_{uuid.uuid4().hex[:12]}", settings=dataclasses.asdict(settings))
    optimizer = Optimizer(
        config.definition,
        tasks,
        baseline,
        store,
        evaluators,
        models,
        settings,
        jobs / state.id / "state.json",
        state=state,
        on_event=_print_event,
    )
    parts = optimizer.parts
    out.print(
        f"[dim]job {optimizer.state.id}: {len(tasks)} tasks (train {len(parts['train'])}, validation "
        f"{len(parts['validation'])}, test {len(parts['test'])}) · store {store.url}[/]"
    )
    finished = optimizer.run()
    if output == "json":
        out.print_json(json.dumps(job_object(finished)))
    else:
        print_job(finished)


def _tasks(config: EvalConfig) -> list[dict[str, Any]]:
    from assay.dataset import Dataset

    if config.dataset.local_path is None:
        raise ConfigError(f"{config.path.name}: optimize reads a local dataset (dataset.local_uri)")
    tasks = list(Dataset.from_path(config.dataset.local_path).items())
    names = [t.get("name") for t in tasks]
    if not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
        raise ConfigError(f"{config.dataset.local_path}: every task needs a unique name to be split by")
    return tasks


def _baseline(config: EvalConfig, eval_model: str | None) -> AgentDefinition:
    if config.agent is None:
        hint = "agent: {name, config: .agent_configs/baseline/metadata.yaml} (assay eval generate writes it)"
        raise ConfigError(f"{config.path.name}: optimize needs the agent's configuration", hint=hint)
    if config.agent.model or _hosted(config):  # a hosted agent runs on its own model unless told another
        return config.agent
    return dataclasses.replace(config.agent, model=eval_model)


def _refuse_unimplemented_tools(config: EvalConfig, baseline: AgentDefinition, sources: list[dict[str, Any]]) -> None:
    """A prompt agent whose tools.json describes tools no source implements would be offered them,
    call them, get nothing back and be judged on an empty answer: refuse, naming them."""
    from assay.sync import run_sync
    from assay.targets.tools import open_tools

    described = [str(tool.get("name")) for tool in baseline.tools]
    if not described:
        return
    tools = open_tools(sources)

    async def implemented() -> set[str]:
        try:
            await tools.ready() if sources else None
            return set(tools.tools)
        finally:
            await tools.aclose()

    missing = [name for name in described if name not in run_sync(implemented())]
    if missing:
        raise ConfigError(
            f"{config.path.name}: the agent's tools {', '.join(missing)} are described (tools.json) but nothing "
            "implements them, so they would never run and the agent would be scored on empty answers",
            hint="implement them as functions with docstrings and type hints in a module and list it under "
            "agent: tools: [{python: tools.py}] (or an MCP server: {mcp: {command: [...]}})",
        )


def _hosted(config: EvalConfig) -> dict[str, str | None] | None:
    """The ``agents:`` entry serving the agent, when one does: candidates are scored by calling it."""
    target = config.target
    if target is None or target.kind != "agent" or config.agent is None:
        return None
    return {"name": target.model, "version": target.version}


def _print_estimate(tasks: list[dict[str, Any]], settings: Settings, config: EvalConfig) -> None:
    from assay.optimize.estimate import plan
    from assay.optimize.search import split

    ceiling = plan(split(tasks, settings), settings)
    iterations, scorings = int(ceiling.iterations.ceiling), int(ceiling.scorings.ceiling)
    criteria = len(config.definition.testing_criteria) + max((len(t.get("criteria") or []) for t in tasks), default=0)
    out.print(
        f"estimate (no model was called): at most {iterations} iterations and {scorings} task scorings; each "
        f"scoring is an agent call and up to {criteria} judge calls; each iteration one reflection call"
    )


def _print_event(event: dict[str, Any]) -> None:
    score = f" {event['score']:.3f}" if "score" in event else ""
    reason = f": {event['reason']}" if event.get("reason") else ""
    line = f"{event['iteration']:>3} {event['event']:<9} {event['candidate']}{score} ({event['strategy']}){reason}"
    out.print(f"  {line}")


def print_job(state: State) -> None:
    from assay.optimize.jobs import split_mean

    result = state.result or {}
    table = Table(title=f"{state.id} — {state.status} ({state.stop_reason})", title_justify="left")
    table.add_column("Candidate", no_wrap=True)
    table.add_column("Val", justify="right", no_wrap=True)
    table.add_column("Test", justify="right", no_wrap=True)
    table.add_column("Strategy")
    table.add_column("Eval", no_wrap=True, overflow="ellipsis", max_width=24)
    splits = result.get("splits") or {}
    for cid in state.accepted:
        entry = state.candidates[cid]
        scores = {name: t["score"] for name, t in entry["tasks"].items()}
        runs = sorted({t["run_id"] for t in entry["tasks"].values()})
        star = " ★" if result.get("starred") and cid == result.get("best") else ""
        style = "green" if cid == result.get("best") else None
        validation, test = split_mean(scores, splits.get("validation")), split_mean(scores, splits.get("test"))
        table.add_row(
            f"{cid}{star}",
            "" if validation is None else f"{validation:.3f}",
            "" if test is None else f"{test:.3f}",
            ", ".join(entry["mutation"]) or "baseline",
            runs[0] if runs else "",
            style=style,
        )
    out.print(table)
    for warning in result.get("warnings") or []:
        out.print(f"[yellow]warning:[/] {warning}")
    if result:
        low, high = result["interval"] or (0.0, 0.0)
        where = "validation (optimistic: no test split)" if result["optimistic"] else "test"
        verdict = "★ better than the baseline" if result["starred"] else "keep the baseline (no gain beyond noise)"
        out.print(f"best {result['best']}: gain {result['gain']:+.3f} [{low:+.3f}, {high:+.3f}] on {where}: {verdict}")
    out.print(
        f"{state.metric_calls} task scorings, {state.tokens:,} tokens, ${state.cost_usd:.4f}, "
        f"{state.elapsed_seconds:.1f} s"
    )
    roles = [f"{role} {u['calls']} calls / {u['tokens']:,} tokens" for role, u in sorted(state.usage.items())]
    if roles:
        out.print("by role: " + " · ".join(roles))
    if result.get("starred"):
        out.print(f"next: {invoked_as()} optimize apply --candidate {result['best']} --job {state.id}")


def _load(project: Path, job: str | None) -> State:
    from assay.optimize.search import State

    jobs = project / JOBS
    if job is None:
        found = sorted(jobs.glob("*/state.json"), key=lambda p: p.stat().st_mtime)
        if not found:
            raise ConfigError(f"no optimization job in {jobs}", hint="start one with assay optimize")
        return State.load(found[-1])
    path = jobs / job / "state.json"
    if not path.is_file():
        raise ConfigError(f"no optimization job {job!r} in {jobs}", hint=f"{invoked_as()} optimize list shows them")
    return State.load(path)


PROJECT = click.option(
    "--project",
    type=click.Path(path_type=Path, file_okay=False),
    default=".",
    show_default=True,
    help="The folder of eval.yaml.",
)


@optimize_group.command("status")
@click.argument("job", required=False)
@click.option("--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@PROJECT
def status_command(job: str | None, output: str, project: Path) -> None:
    """A job's candidates and result (the latest job by default)."""
    from assay.optimize.jobs import job_object

    state = _load(project, job)
    if output == "json":
        out.print_json(json.dumps(job_object(state)))
    else:
        print_job(state)


@optimize_group.command("list")
@PROJECT
@click.option("--json", "as_json", is_flag=True, help="Print the jobs as JSON.")
def list_command(project: Path, as_json: bool) -> None:
    """The optimization jobs of this project."""
    from assay.optimize.search import State

    found = sorted((project / JOBS).glob("*/state.json"), key=lambda p: p.stat().st_mtime)
    if as_json:
        jobs = [State.load(path) for path in found]
        listed = [
            {
                "id": s.id,
                "status": s.status,
                "candidates": len(s.accepted),
                "best": (s.result or {}).get("best"),
                "stop_reason": s.stop_reason,
            }
            for s in jobs
        ]
        out.print_json(dumps(listed))
        return
    if not found:
        out.print(f"no optimization jobs in {project / JOBS}")
    for path in found:
        state = State.load(path)
        best = (state.result or {}).get("best", "–")
        out.print(
            f"{state.id}  {state.status:<11} {len(state.accepted)} candidates  best {best}  ({state.stop_reason})"
        )


@optimize_group.command("cancel")
@click.argument("job")
@PROJECT
def cancel_command(job: str, project: Path) -> None:
    """Stop a running job after its current step (it can be resumed)."""
    state = _load(project, job)
    (project / JOBS / state.id / "cancel").touch()
    out.print(f"{state.id}: cancel requested")


@optimize_group.command("apply")
@click.option("--candidate", "candidate_id", required=True, metavar="CID")
@click.option("--job", metavar="JOB", help="The job it came from (default: the latest).")
@PROJECT
def apply_command(candidate_id: str, job: str | None, project: Path) -> None:
    """Write a candidate to .agent_configs/<cid>/ as azd does, with diff.patch and lineage.json."""
    from assay.config.agents import write_agent_config
    from assay.optimize.candidate import config_from

    state = _load(project, job)
    if candidate_id not in state.candidates:
        hint = f"{invoked_as()} optimize status lists them"
        raise ConfigError(f"job {state.id} has no candidate {candidate_id!r}", hint=hint)
    entry = state.candidates[candidate_id]
    config = config_from(entry["config"])
    folder = project / ".agent_configs" / candidate_id
    write_agent_config(folder, config)
    baseline = config_from(state.candidates[state.order[0]]["config"])
    diff = "".join(
        difflib.unified_diff(
            baseline.instructions.splitlines(keepends=True),
            config.instructions.splitlines(keepends=True),
            "baseline/instructions.md",
            f"{candidate_id}/instructions.md",
        )
    )
    before, after = json.dumps(list(baseline.tools), indent=2), json.dumps(list(config.tools), indent=2)
    diff += "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            "baseline/tools.json",
            f"{candidate_id}/tools.json",
        )
    )
    (folder / "diff.patch").write_text(diff, encoding="utf-8")
    scores = {name: task["score"] for name, task in entry["tasks"].items()}
    lineage = {
        "candidate": candidate_id,
        "parent": entry["parent"],
        "mutation": entry["mutation"],
        "job": state.id,
        **entry.get("lineage", {}),
        "task_scores": scores,
    }
    (folder / "lineage.json").write_text(json.dumps(lineage, indent=2) + "\n", encoding="utf-8")
    out.print(f"wrote {folder}/ (metadata.yaml, instructions.md, diff.patch, lineage.json)")
    for line in config.instructions.strip().splitlines()[:4]:
        out.print(f"  {line}")
