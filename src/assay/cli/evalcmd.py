"""``assay eval generate``: azd's ``ai agent eval generate`` on assay. From the agent's
instructions (``-g``, ``--gen-instruction-file`` or ``.agent_configs/baseline``) and its tools
(``tools.json``), the generator model writes tasks with criteria and a rubric, and the files land
where azd puts them, with an ``eval.yaml`` that ``assay run`` runs as it is. In a terminal it asks
what azd asks; ``--no-prompt`` takes the flags and defaults.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from assay.cli.common import CACHE_OPTION, counted, invoked_as, open_store, out, print_table
from assay.cli.serve import models_from_file
from assay.errors import ConfigError, ItemError
from assay.evalgen import CATEGORIES, MAX_SAMPLES, MIN_SAMPLES

if TYPE_CHECKING:
    from assay.config.agents import AgentDefinition
    from assay.evalgen.generate import Generated
    from assay.llm import CacheMode
    from assay.store import Store


@click.group("eval")
def eval_group() -> None:
    """Evals as code: azure.eval.yaml (init, create, run) and eval.yaml."""


def _add_azd_commands() -> None:
    from assay.cli.azdeval import create_command, init_command, results_group, run_group

    for command in (init_command, create_command, run_group, results_group):
        eval_group.add_command(command)


_add_azd_commands()


@eval_group.command("generate")
@click.option("--name", help="The eval suite's name (default: the agent's; smoke-core without one).")
@click.option("--agent", "agent_name", metavar="NAME", help="The agent the suite is for.")
@click.option("-g", "--gen-instruction", metavar="TEXT", help="What the agent does and what to test.")
@click.option(
    "--gen-instruction-file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="The agent's instructions from a file.",
)
@click.option(
    "--tools",
    "tools_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="The agent's tools (OpenAI function definitions; default: tools.json in the project).",
)
@click.option("--eval-model", metavar="MODEL", help="Generates and judges (default: $AZURE_AI_MODEL_DEPLOYMENT_NAME).")
@click.option("--max-samples", type=click.IntRange(MIN_SAMPLES, MAX_SAMPLES), default=MIN_SAMPLES, show_default=True)
@click.option("--evaluator", "evaluators", multiple=True, metavar="NAME", help="Another evaluator (repeatable).")
@click.option(
    "--dataset",
    "dataset",
    metavar="FILE|NAME",
    help="Use this dataset (a local file or a registered name) instead of generating tasks.",
)
@click.option("--out-file", type=click.Path(path_type=Path, dir_okay=False), default="eval.yaml", show_default=True)
@click.option(
    "--trace-days",
    type=click.IntRange(0, 90),
    default=0,
    show_default=True,
    help="Show the generator the requests in the agent's stored traces of the last N days.",
)
@click.option("--no-prompt", is_flag=True, help="Ask nothing; use the flags and defaults.")
@click.option("--reset-defaults", is_flag=True, help="Regenerate even when eval.yaml exists.")
@click.option(
    "--project",
    "project",
    type=click.Path(path_type=Path, file_okay=False),
    default=".",
    help="The agent project (default: here).",
)
@click.option("--models", "models_file", type=click.Path(path_type=Path, exists=True), help="models: YAML.")
@click.option("--seed", type=int, default=0, show_default=True)
@CACHE_OPTION
def generate_command(
    name: str | None,
    agent_name: str | None,
    gen_instruction: str | None,
    gen_instruction_file: Path | None,
    tools_file: Path | None,
    eval_model: str | None,
    max_samples: int,
    evaluators: tuple[str, ...],
    dataset: str | None,
    out_file: Path,
    trace_days: int,
    no_prompt: bool,
    reset_defaults: bool,
    project: Path,
    models_file: Path | None,
    seed: int,
    cache_mode: CacheMode,
) -> None:
    """Write tasks, a rubric and eval.yaml for an agent."""
    from assay.evalgen.generate import generate
    from assay.evalgen.layout import write_project
    from assay.sync import run_sync

    interactive = not no_prompt and sys.stdin.isatty()
    if gen_instruction and gen_instruction_file:
        raise ConfigError("give -g/--gen-instruction or --gen-instruction-file, not both")
    out_path = out_file if out_file.is_absolute() else project / out_file
    tasks_wanted, rubric_wanted, kept_dataset = dataset is None, True, _dataset_entry(project, dataset)
    if out_path.exists() and not reset_defaults:
        existing = _existing(out_path)
        if interactive:
            tasks_wanted = tasks_wanted and click.confirm(
                f"Existing dataset: {existing['dataset']}. Do you want to regenerate?", default=False
            )
            rubric_wanted = click.confirm(
                f"Existing evaluator: {existing['rubric']}. Do you want to regenerate?", default=False
            )
        if not interactive:  # nobody to ask: writing nothing and succeeding would read as done
            raise ConfigError(
                f"{out_path} exists, and generate writes nothing over it unasked",
                hint="--reset-defaults writes it again; --out-file OTHER.yaml writes another beside it",
            )
        if not (tasks_wanted or rubric_wanted):
            out.print(f"Keeping existing eval config unchanged ({out_path}); --reset-defaults writes it again")
            return
        kept_dataset = kept_dataset or (None if tasks_wanted else existing["entry"])
    agent = _agent(project, agent_name, gen_instruction, gen_instruction_file, tools_file, interactive)
    if name is None:
        name = agent.name or "smoke-core"
        if interactive:
            name = click.prompt("Eval suite name", default=name)
    eval_model = eval_model or os.environ.get("AZURE_AI_MODEL_DEPLOYMENT_NAME")
    if interactive and not eval_model:
        eval_model = click.prompt("Select the model for evaluation and generation")
    if not eval_model:
        raise ConfigError(
            "name the model that generates and judges: --eval-model MODEL", hint="or set AZURE_AI_MODEL_DEPLOYMENT_NAME"
        )
    if interactive and tasks_wanted:
        max_samples = click.prompt(
            f"Max samples (between {MIN_SAMPLES} and {MAX_SAMPLES})",
            default=max_samples,
            type=click.IntRange(MIN_SAMPLES, MAX_SAMPLES),
        )
    store = open_store()
    if (
        interactive
        and not trace_days
        and click.confirm("Include agent traces for evaluator generation?", default=False)
    ):
        trace_days = click.prompt("Select trace time range (days)", default=7, type=click.IntRange(1, 90))
    observed = _traced_requests(store, agent.name, trace_days) if trace_days else []
    if trace_days:
        out.print(f"[dim]{counted(len(observed), 'request')} from the agent's traces of the last {trace_days} days[/]")
    model = models_from_file(models_file, store, cache_mode).get(eval_model)
    model.check_credentials()

    async def write() -> Generated:
        try:
            return await generate(
                model, agent, max_samples, seed=seed, observed=observed, tasks=tasks_wanted, rubric=rubric_wanted
            )
        finally:
            await model.aclose()

    with out.status(f"writing {max_samples} tasks and a rubric with {eval_model} ..."):
        try:
            generated = run_sync(write())
        except ItemError as exc:  # the generator model failed or answered nothing usable
            raise ConfigError(
                f"{eval_model}: {exc}", hint="check the model, or run again (the cache keeps what worked)"
            ) from None
    files = write_project(
        project,
        name,
        agent,
        generated.tasks if tasks_wanted else None,
        generated.dimensions if rubric_wanted else None,
        out_file=out_path,
        eval_model=eval_model,
        evaluators=list(evaluators),
        max_samples=max_samples,
        trace_days=trace_days,
        dataset=kept_dataset,
    )
    _report(generated, files, project, out_path)


def _agent(
    project: Path,
    name: str | None,
    instruction: str | None,
    instruction_file: Path | None,
    tools_file: Path | None,
    interactive: bool,
) -> AgentDefinition:
    from assay.config.agents import BASELINE, AgentDefinition, load_agent_config, parse_tools

    baseline = project / BASELINE / "metadata.yaml"
    found = load_agent_config(baseline) if baseline.is_file() else None
    text = instruction_file.read_text(encoding="utf-8-sig") if instruction_file else instruction
    if text is None and found is not None:
        text = found.instructions
    if text is None and interactive:
        how = click.prompt(
            "How would you like to provide the agent instruction?",
            type=click.Choice(["Type inline", "Load from file"]),
            default="Type inline",
        )
        if how == "Load from file":
            path = click.prompt(
                "Path to agent instruction file", type=click.Path(path_type=Path, exists=True, dir_okay=False)
            )
            text = path.read_text(encoding="utf-8-sig")
        else:
            text = click.prompt("Describe what this agent does and what scenarios to test")
    if not text or not text.strip():
        raise ConfigError(
            "the agent's instructions are needed: -g TEXT or --gen-instruction-file FILE",
            hint="or write .agent_configs/baseline/metadata.yaml with its instruction_file",
        )
    tools = list(found.tools) if found is not None else []
    path = tools_file or (project / "tools.json")
    if tools_file is not None or (not tools and path.is_file()):
        tools = parse_tools(path.read_text(encoding="utf-8-sig"), str(path))
    return AgentDefinition(
        instructions=text.strip() + "\n",
        tools=tuple(tools),
        skills=found.skills if found else (),
        model=found.model if found else None,
        name=name or (found.name if found else None),
    )


def _dataset_entry(project: Path, dataset: str | None) -> dict[str, Any] | None:
    """``--dataset``: a local file (relative to the project, as eval.yaml reads it) or a registered name."""
    if dataset is None:
        return None
    path = Path(dataset)
    if (project / path).is_file() or path.is_file():
        local = path if (project / path).is_file() else path.resolve()
        return {"local_uri": str(local)}
    return {"name": dataset}


def _existing(path: Path) -> dict[str, Any]:
    from assay.config.yamlfile import safe_load

    raw = safe_load(path.read_text(encoding="utf-8-sig"), str(path)) or {}
    entry = raw.get("dataset") if isinstance(raw.get("dataset"), dict) else None
    rubric = next(
        (e.get("name") for e in raw.get("evaluators") or [] if isinstance(e, dict) and e.get("local_uri")), "none"
    )
    return {
        "entry": entry,
        "dataset": (entry or {}).get("name") or (entry or {}).get("local_uri") or "none",
        "rubric": rubric,
    }


def _report(generated: Generated, files: list[Path], project: Path, out_path: Path) -> None:
    by_category = Counter(task["category"] for task in generated.tasks)
    if not generated.tasks:
        out.print("tasks: kept as they are")
    else:
        _coverage(generated, by_category)
    if generated.dimensions:
        out.print(
            f"rubric: {counted(len(generated.dimensions), 'dimension')} "
            f"({', '.join(d['id'] for d in generated.dimensions)})"
        )
    for warning in generated.warnings:
        out.print(f"[yellow]warning:[/] {warning}")
    for path in files:
        out.print(f"wrote {path.relative_to(project) if path.is_relative_to(project) else path}")
    out.print(f"next: {invoked_as()} run {out_path}")


def _coverage(generated: Generated, by_category: Counter[str]) -> None:
    out.print(
        f"{counted(len(generated.tasks), 'task')}: "
        + ", ".join(f"{category} {by_category[category]}" for category in CATEGORIES if by_category[category])
    )
    table = Table(title="coverage: tasks per rule and tool", title_justify="left")
    table.add_column("", no_wrap=True)
    table.add_column("rule or tool", overflow="fold", max_width=60)
    table.add_column("tasks", justify="right")
    for index, rule in enumerate(generated.rules):
        table.add_row(f"R{index + 1}", rule, str(generated.coverage.get(f"R{index + 1}", 0)))
    for tool in generated.tools:
        table.add_row("tool", tool, str(generated.coverage.get(tool, 0)))
    print_table(table)


@eval_group.command("update")
@click.option(
    "--config",
    "config",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default="eval.yaml",
    show_default=True,
)
@click.option("--dataset-only", is_flag=True, help="Store only the dataset's new version.")
@click.option("--evaluator-only", is_flag=True, help="Store only the evaluators' new versions.")
def update_command(config: Path, dataset_only: bool, evaluator_only: bool) -> None:
    """Store an edited dataset or rubric as a new version and name it in eval.yaml."""
    from assay.evalgen.update import update

    if dataset_only and evaluator_only:
        raise ConfigError("give --dataset-only or --evaluator-only, not both")
    store = open_store()
    done = update(config, store, datasets=not evaluator_only, evaluators=not dataset_only)
    if done.dataset:
        out.print(f"dataset {done.dataset[0]}: stored as version {done.dataset[1]}")
    elif done.unchanged_dataset:
        out.print("dataset: no local changes")
    for name, version, changed in done.evaluators:
        state = f"stored as version {version}" if changed else f"unchanged (version {version})"
        out.print(f"evaluator {name}: {state}")
    out.print(f"store: {store.url}")


@eval_group.command("lint")
@click.option(
    "--config",
    "config",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default="eval.yaml",
    show_default=True,
)
@click.option("--repeats", type=click.IntRange(2, 20), default=3, show_default=True, help="Judgings per criterion.")
@click.option("--run", "run_id", metavar="RUN_ID", help="Lint against a stored run's responses instead of asking anew.")
@CACHE_OPTION
def lint_command(config: Path, repeats: int, run_id: str | None, cache_mode: CacheMode) -> None:
    """Flag task criteria a judge cannot apply consistently; exit 1 when any is flagged."""
    from assay.config.evalyaml import load_eval_config
    from assay.dataset import Dataset
    from assay.evalgen.lint import lint
    from assay.llm import ModelRegistry
    from assay.run.targets import build_run_target
    from assay.sync import run_sync

    loaded = load_eval_config(config)
    if loaded.dataset.local_path is None:
        raise ConfigError(f"{config}: lint reads a local dataset (dataset.local_uri)")
    tasks = [item for item in Dataset.from_path(loaded.dataset.local_path).items() if item.get("criteria")]
    if not tasks:
        raise ConfigError(f"{loaded.dataset.local_path}: no task has criteria to lint")
    store = open_store()
    models = ModelRegistry(
        loaded.models, cache=store, cache_mode=cache_mode, default=loaded.eval_model, agents=loaded.agents
    )
    judge = models.get(loaded.eval_model)
    judge.check_credentials()

    async def check() -> list[Any]:
        try:
            if run_id:
                responses = _stored_responses(store, store.run_id_for(run_id))
            else:
                responses = await _responses(loaded.target, tasks)
            return await lint(judge, tasks, responses, repeats)
        finally:
            await models.aclose()

    async def _responses(target: Any, items: list[dict[str, Any]]) -> dict[str, str]:
        if target is None:
            raise ConfigError(f"{config}: name the agent (agent: or target:) whose responses are judged, or --run")
        generate = build_run_target(target, models)
        samples = await asyncio.gather(*(generate({**item}) for item in items))
        return {str(i["name"]): str(s.get("output_text") or "") for i, s in zip(items, samples, strict=True)}

    with out.status(f"judging each criterion {repeats} times ..."):
        found = run_sync(check())
    table = Table(title="task criteria", title_justify="left")
    for column in ("task", "criterion", "verdicts", "empty", "off-topic", "problem"):
        table.add_column(column, overflow="fold")
    mark = {True: "✓", False: "✗", None: "?"}
    for entry in found:
        table.add_row(
            entry.task,
            entry.criterion,
            "".join(mark[v] for v in entry.verdicts),
            mark[entry.empty],
            mark[entry.off_topic],
            "; ".join(entry.reasons) or "[green]ok[/]",
        )
    print_table(table)
    flagged = [e for e in found if e.reasons]
    out.print(f"{counted(len(flagged), 'criterion', 'criteria')} flagged of {len(found)}")
    if flagged:
        sys.exit(1)


def _stored_responses(store: Store, run_id: str) -> dict[str, str]:
    return {
        str(output.datasource_item.get("name")): str((output.sample or {}).get("output_text") or "")
        for output in store.iter_output_items(run_id)
    }


def _traced_requests(store: Store, agent_name: str | None, days: int) -> list[str]:
    """The distinct last user messages of the agent's traced turns of the last ``days`` days."""
    import time as clock

    from assay.evalgen.observed import traced_requests
    from assay.store import DEFAULT_PROJECT

    if not agent_name:
        raise ConfigError("--trace-days needs --agent NAME: the traces are the ones of that agent")
    since = int((clock.time() - days * 86_400) * 1e9)
    return traced_requests(store, DEFAULT_PROJECT, agent_name, start_ns=since)
