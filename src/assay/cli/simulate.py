"""``assay simulate SCENARIOS.jsonl``: a model plays the user of each scenario against a model or
agent target, with a progress bar, the model-call cache (a rerun costs nothing) and ``--resume``;
the conversations are evaluated, summarised by how they ended, and saved when asked.

Scenario rows are ``{id?, test_case_id?, test_case_description, desired_num_turns?}``. Without
``--evaluator`` each conversation is checked only for whether the user ended it (its goal met);
with them (``builtin.task_completion``, ``builtin.customer_satisfaction``, ...) they judge each
whole conversation, given only its messages.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from assay.cli.common import CACHE_OPTION, DEFAULT_PROJECT, catalog, invoked_as, open_store, out
from assay.cli.run import finish_with_progress
from assay.cli.serve import models_from_file
from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.llm import CacheMode
    from assay.results.criterion import Criterion
    from assay.run import EvalDefinition

GOAL_REACHED: Criterion = {
    "type": "string_check",
    "name": "user_ended",
    "input": "{{item.termination_reason}}",
    "reference": "user_stop",
    "operation": "eq",
}


@click.command("simulate")
@click.argument("scenarios", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--target", "target_model", metavar="MODEL", help="The model the simulated user talks to.")
@click.option("--agent", metavar="NAME[:VERSION]", help="Or the agent it talks to (from --models' agents:).")
@click.option("--model", "user_model", required=True, metavar="MODEL", help="The model that plays the user.")
@click.option(
    "--models", "models_file", type=click.Path(path_type=Path, exists=True), help="YAML with models:/agents:."
)
@click.option("--max-turns", type=click.IntRange(1, 50), default=10, show_default=True)
@click.option(
    "--repetitions", type=click.IntRange(1, 50), default=1, show_default=True, help="Conversations per scenario."
)
@click.option("--evaluator", "evaluators", multiple=True, metavar="NAME", help="Judge each conversation (repeatable).")
@click.option("--judge", metavar="MODEL", help="The model the evaluators use (default: --model).")
@click.option("--save", "save_as", metavar="NAME", help="Save the conversations as the next version of this dataset.")
@click.option("--out", "out_file", type=click.Path(path_type=Path, dir_okay=False), help="Write them as JSONL too.")
@click.option("--concurrency", type=click.IntRange(1, 1024), default=16, show_default=True)
@click.option("--resume", "resume_id", metavar="RUN_ID", help="Finish an interrupted simulation.")
@click.option("--estimate", is_flag=True, help="Print the most model calls it could make; call nothing.")
@CACHE_OPTION
def simulate_command(
    scenarios: Path,
    target_model: str | None,
    agent: str | None,
    user_model: str,
    models_file: Path | None,
    max_turns: int,
    repetitions: int,
    evaluators: tuple[str, ...],
    judge: str | None,
    save_as: str | None,
    out_file: Path | None,
    concurrency: int,
    resume_id: str | None,
    estimate: bool,
    cache_mode: CacheMode,
) -> None:
    """Simulate a user for each scenario of SCENARIOS against --target or --agent."""
    from assay.cli.summary import print_summary
    from assay.run.request import RunInputs, RunRequest, prepare_request, settings_of, start_request
    from assay.simulate.datasets import save_conversations
    from assay.simulate.settings import SimulationSettings
    from assay.targets import TargetSpec

    if (target_model is None) == (agent is None):
        raise ConfigError("give the simulated user someone to talk to: --target MODEL or --agent NAME[:VERSION]")
    store = open_store()
    models = models_from_file(models_file, store, cache_mode)
    settings = SimulationSettings(model=user_model, max_turns=max_turns, repetitions=repetitions)
    if agent is not None:
        name, _, version = agent.partition(":")
        spec = TargetSpec(kind="agent", model=name, version=version or None, simulation=settings)
    else:
        spec = TargetSpec(kind="model", model=target_model, simulation=settings)
    definition = _definition(scenarios, evaluators, judge or user_model)
    # Stored whole (the scenarios file, the models, the target): a worker can finish it too.
    request = RunRequest.for_file(
        scenarios, RunInputs.of_registry(models, spec), settings_of(definition, cache=cache_mode)
    )
    prepared = prepare_request(request, definition, store, catalog(store), None)
    total = prepared.report.rows
    if estimate:
        calls = total * max_turns * 2
        out.print(
            f"estimate for {total} conversations (no model was called): at most {calls} calls "
            f"({total * max_turns} to {user_model}, as many to the target) and {total * len(prepared.criteria)} "
            "judge calls; the cache answers any made before"
        )
        return
    run = store.get_run(store.run_id_for(resume_id)) if resume_id else start_request(prepared, store, request)
    out.print(
        f"[dim]{scenarios.name}: {total} conversations ({repetitions} per scenario, at most {max_turns} "
        f"turns) · run {run.id}[/]"
    )
    resume = f"resume with  {invoked_as()} simulate {scenarios} ... --resume {run.id}"
    outcome = finish_with_progress(
        prepared, run, store, label="simulating", concurrency=concurrency, canceled_hint=resume
    )
    print_summary(outcome.run, outcome.summary, store.url)
    ended = Counter(output.datasource_item.get("termination_reason") for output in store.iter_output_items(run.id))
    out.print("ended: " + ", ".join(f"{reason} {count}" for reason, count in ended.most_common()))
    if save_as:
        saved = save_conversations(store, DEFAULT_PROJECT, run.id, save_as)["dataset"]
        out.print(f"saved as dataset {saved['name']} version {saved['version']}")
    if out_file is not None:
        _write_jsonl(out_file, (output.datasource_item for output in store.iter_output_items(run.id)))
        out.print(f"wrote {out_file}")


def _definition(scenarios: Path, evaluators: tuple[str, ...], judge: str) -> EvalDefinition:
    from assay.run import EvalDefinition

    if not evaluators:
        return EvalDefinition(f"simulate {scenarios.name}", [GOAL_REACHED])
    criteria: list[Criterion] = [
        {
            "type": "azure_ai_evaluator",
            "name": name.removeprefix("builtin."),
            "evaluator_name": name,
            "initialization_parameters": {"model": judge},
            "data_mapping": {"messages": "{{item.messages}}"},
        }
        for name in evaluators
    ]
    return EvalDefinition(f"simulate {scenarios.name}", criteria, evaluation_level="conversation")


def _write_jsonl(path: Path, items: Any) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
