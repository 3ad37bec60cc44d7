"""``assay redteam scan``: attack a model or agent with objectives per risk category, delivered by
attack strategies, judge every attack and print the scorecard (attack success rates per risk,
complexity and technique, each with its n and a 95% interval).

    assay redteam scan --target gpt-4.1-mini --risk violence --risk hate_unfairness \\
        --strategy easy --strategy crescendo --objectives 5 --output scan.json --sarif scan.sarif

The scan is a run in the store like any other (``assay runs show``, the web UI), its model calls
go through the model cache, so a rerun is free, and ``--estimate`` says what it would call first.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from assay.cli.common import CACHE_OPTION, DEFAULT_PROJECT, catalog, counted, open_store, out
from assay.cli.run import finish_with_progress
from assay.cli.serve import models_from_file
from assay.errors import ConfigError
from assay.redteam.report import sarif, scan_json
from assay.redteam.risks import CONTENT_RISKS, RISKS, risk_category
from assay.redteam.scorecard import Attack, Scorecard, describe
from assay.redteam.strategies import techniques

if TYPE_CHECKING:
    from assay.llm import CacheMode
    from assay.redteam.generated import TargetContext
    from assay.redteam.settings import RedTeamSettings
    from assay.results.criterion import Criterion


@click.group("redteam")
def redteam_group() -> None:
    """Attack a model or agent and report attack success rates."""


@redteam_group.command("scan")
@click.option("--target", "target_model", metavar="MODEL", help="The model to attack (from --models or the env).")
@click.option("--agent", metavar="NAME[:VERSION]", help="Or the agent to attack (from --models' agents:).")
@click.option(
    "--risk",
    "risks",
    multiple=True,
    metavar="CATEGORY",
    help="A risk category (repeatable; any SDK spelling). Default: the four content harms.",
)
@click.option(
    "--strategy",
    "strategies",
    multiple=True,
    metavar="NAME",
    help="An attack strategy, a bundle (easy, moderate, difficult) or a composition a+b (repeatable). "
    "The baseline is always included.",
)
@click.option("--objectives", type=click.IntRange(1, 500), default=10, show_default=True, help="Objectives per risk.")
@click.option(
    "--seed-prompts",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Your own attack prompts (azure-ai-evaluation's JSON format) instead of objectives.",
)
@click.option("--purpose", metavar="TEXT", help="What the target is for: objectives are also written for it.")
@click.option(
    "--instructions",
    "instructions_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="The target's instructions (a text file): objectives are also written from them.",
)
@click.option(
    "--policy",
    "policy_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Your policy (a text file: what the target must never do): objectives are also written from it.",
)
@click.option(
    "--generate",
    "generated",
    type=click.IntRange(0, 500),
    help="Objectives written per risk from --purpose/--instructions/--policy and the tools (default: --objectives).",
)
@click.option("--turns", type=click.IntRange(1, 50), help="Turn limit of multi-turn strategies (5; crescendo 10).")
@click.option(
    "--max-attacker-calls",
    type=click.IntRange(1, 1000),
    help="A budget per attack for PAIR, TAP, GOAT and multi-turn attackers: they stop after this many calls.",
)
@click.option(
    "--max-attacker-cost",
    "max_attacker_cost",
    type=click.FloatRange(min=0, min_open=True),
    help="The same in dollars per attack (from the attacker model's price in --models).",
)
@click.option("--attacker", metavar="MODEL", help="The model that writes the attacks (default: the default model).")
@click.option("--judge", metavar="MODEL", help="The model the risk evaluators use (default: the default model).")
@click.option("--models", "models_file", type=click.Path(path_type=Path, exists=True), help="models:/agents: YAML.")
@click.option("--seed", type=int, default=0, show_default=True, help="Chooses the objectives and seeds the attacker.")
@click.option(
    "--output",
    "output_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write scan.json (azure-ai-evaluation's {scorecard, parameters, attack_details}).",
)
@click.option(
    "--sarif",
    "sarif_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the successful attacks as SARIF 2.1.0 for code-scanning dashboards.",
)
@click.option("--concurrency", type=click.IntRange(1, 1024), default=16, show_default=True)
@click.option("--estimate", is_flag=True, help="Print the most model calls the scan could make; call nothing.")
@CACHE_OPTION
def scan_command(
    target_model: str | None,
    agent: str | None,
    risks: tuple[str, ...],
    strategies: tuple[str, ...],
    objectives: int,
    seed_prompts: Path | None,
    purpose: str | None,
    instructions_file: Path | None,
    policy_file: Path | None,
    generated: int | None,
    turns: int | None,
    max_attacker_calls: int | None,
    max_attacker_cost: float | None,
    attacker: str | None,
    judge: str | None,
    models_file: Path | None,
    seed: int,
    output_file: Path | None,
    sarif_file: Path | None,
    concurrency: int,
    estimate: bool,
    cache_mode: CacheMode,
) -> None:
    """Attack --target or --agent and print the scorecard."""
    from assay.cli.summary import print_usage
    from assay.dataset import Dataset
    from assay.redteam.runs import attack_rows, attacks_of, plan_objectives
    from assay.run import EvalDefinition
    from assay.run.request import RunRequest, prepare_request, settings_of, start_request
    from assay.targets import TargetSpec

    if (target_model is None) == (agent is None):
        raise ConfigError("name what to attack: --target MODEL or --agent NAME[:VERSION]")
    store = open_store()
    models = models_from_file(models_file, store, cache_mode)
    settings = _settings(risks, strategies, objectives, seed_prompts, turns, attacker, seed)
    if max_attacker_calls is not None or max_attacker_cost is not None:
        budgeted = dataclasses.replace(
            settings.attack, max_attacker_calls=max_attacker_calls, max_attacker_cost_usd=max_attacker_cost
        )
        settings = dataclasses.replace(settings, attack=budgeted)
    context = _context(purpose, instructions_file, policy_file, generated if generated is not None else objectives)
    if context is not None:
        if settings.kind != "red_team":
            raise ConfigError(
                "--seed-prompts are attacked as written: leave out --purpose, --instructions and --policy"
            )
        settings = dataclasses.replace(settings, context=context)
    if agent is not None:
        name, _, version = agent.partition(":")
        spec = TargetSpec(kind="agent", model=name, version=version or None, red_team=settings)
        target: dict[str, Any] = {"type": "azure_ai_agent", "name": name, **({"version": version} if version else {})}
    else:
        spec = TargetSpec(kind="model", model=target_model, red_team=settings)
        target = {"type": "azure_ai_model", "model": target_model}
    data_source = _data_source(settings, target)
    plan = plan_objectives(store, DEFAULT_PROJECT, data_source, settings, models)
    for warning in plan.warnings:
        out.print(f"[yellow]warning:[/] {warning}")
    rows = list(attack_rows(plan.objectives, settings))
    if not rows:
        raise ConfigError("nothing to attack", hint="name risk categories with --risk or give --seed-prompts")
    attacked = sorted({row["risk_category"] for row in rows}, key=list(RISKS).index)
    definition = EvalDefinition(f"redteam {target_model or agent}", _criteria(attacked, judge))
    dataset = Dataset.from_content([{"item": row} for row in rows], name="attacks")
    # The attacks planned here are this process's: it alone finishes the run (no inputs stored).
    request = RunRequest(data_source=data_source, settings=settings_of(definition, cache=cache_mode))
    prepared = prepare_request(request, definition, store, catalog(store), models, target=spec, dataset=dataset)
    if estimate:
        _print_estimate(rows, settings)
        return
    run = start_request(prepared, store, request)
    shape = f"{counted(len(plan.objectives), 'objective')} × {counted(len(settings.techniques), 'technique')}"
    out.print(f"[dim]{counted(len(rows), 'attack')}: {shape} on {', '.join(attacked)} · run {run.id}[/]")
    outcome = finish_with_progress(
        prepared,
        run,
        store,
        label="attacking",
        concurrency=concurrency,
        canceled_hint=f"what was attacked so far is in run {run.id}",
    )
    attacks = list(attacks_of(store.iter_output_items(run.id)))
    print_scorecard(Scorecard.of(attacks), attacks)
    print_usage(outcome.summary)
    out.print(f"run id: [bold]{run.id}[/] · store: {store.url}", soft_wrap=True)
    thresholds = {c.name: c.threshold for c in prepared.criteria}
    if output_file is not None:
        report = scan_json(
            attacks,
            risks=attacked,
            thresholds=thresholds,
            run_id=run.id,
            seed_prompts=str(seed_prompts or ""),
            application_scenario=context.purpose if context is not None else "",
            policy_document=context.policy if context is not None else "",
        )
        output_file.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
        out.print(f"wrote {output_file}")
    if sarif_file is not None:
        uri = str(models_file or seed_prompts or "assay-redteam")
        sarif_file.write_text(json.dumps(sarif(attacks, uri=uri, run_id=run.id), indent=2), encoding="utf-8")
        out.print(f"wrote {sarif_file} ({counted(sum(bool(a.success) for a in attacks), 'successful attack')})")


def _settings(
    risks: tuple[str, ...],
    strategies: tuple[str, ...],
    objectives: int,
    seed_prompts: Path | None,
    turns: int | None,
    attacker: str | None,
    seed: int,
) -> RedTeamSettings:
    from assay.redteam.record import AttackSettings
    from assay.redteam.runs import seed_prompt_rows
    from assay.redteam.settings import RedTeamSettings

    steps: list[Any] = [s.split("+") if "+" in s else s for s in strategies]
    chosen = tuple(techniques(steps, "--strategy"))
    attack = AttackSettings(num_turns=turns)
    if seed_prompts is not None:
        if risks:
            raise ConfigError("--seed-prompts name their own risk categories; leave out --risk")
        content = seed_prompt_rows(seed_prompts.read_text(encoding="utf-8-sig"), str(seed_prompts))
        return RedTeamSettings(
            kind="red_team_seed_prompts",
            techniques=chosen,
            attack=attack,
            attacker_model=attacker,
            source={"type": "file_content", "content": content},
            seed=seed,
        )
    named = tuple(dict.fromkeys(risk_category(r, "--risk") for r in risks)) or CONTENT_RISKS[:4]
    return RedTeamSettings(
        kind="red_team",
        techniques=chosen,
        attack=attack,
        attacker_model=attacker,
        risk_categories=named,
        num_objectives=objectives,
        seed=seed,
    )


def _context(purpose: str | None, instructions: Path | None, policy: Path | None, count: int) -> TargetContext | None:
    from assay.redteam.generated import TargetContext

    if purpose is None and instructions is None and policy is None:
        return None
    return TargetContext(
        purpose=purpose or "",
        instructions=instructions.read_text(encoding="utf-8-sig") if instructions else "",
        policy=policy.read_text(encoding="utf-8-sig") if policy else "",
        count=count,
    )


def _data_source(settings: RedTeamSettings, target: dict[str, Any]) -> dict[str, Any]:
    """The run's data source as the API would have it, so the stored run says what was attacked how."""
    params: dict[str, Any] = {
        "type": settings.kind,
        "attack_strategies": [t.name for t in settings.techniques[1:]],
        "seed": settings.seed,
    }
    if settings.kind == "red_team":
        params.update(risk_categories=list(settings.risk_categories), num_objectives=settings.num_objectives)
        if settings.context is not None:
            params["objective_generation"] = settings.context.as_dict()
    else:
        params["source"] = settings.source
    if settings.attack.num_turns is not None:
        params["num_turns"] = settings.attack.num_turns
    if settings.attack.max_attacker_calls is not None:
        params["max_attacker_calls"] = settings.attack.max_attacker_calls
    if settings.attack.max_attacker_cost_usd is not None:
        params["max_attacker_cost_usd"] = settings.attack.max_attacker_cost_usd
    if settings.attacker_model:
        params["model"] = settings.attacker_model
    return {"type": "azure_ai_red_team", "item_generation_params": params, "target": target}


def _criteria(risks: list[str], judge: str | None) -> list[Criterion]:
    criteria: list[Criterion] = []
    for risk in risks:
        criterion: Criterion = {"type": "azure_ai_evaluator", "name": risk, "evaluator_name": RISKS[risk].evaluator}
        if judge:
            criterion["initialization_parameters"] = {"model": judge}
        criteria.append(criterion)
    return criteria


def _print_estimate(rows: list[dict[str, Any]], settings: RedTeamSettings) -> None:
    from assay.redteam.record import DEFAULT_TURNS

    attacker = target = 0
    for row in rows:
        steps = row["attack_strategies"]
        if steps and steps[0] in DEFAULT_TURNS:
            limit = settings.attack.num_turns or DEFAULT_TURNS[steps[0]]
            backtracks = settings.attack.max_backtracks if steps[0] == "crescendo" else 0
            attacker += limit + backtracks
            target += limit + backtracks
            continue
        attacker += ("seed_prompt" not in row) + steps.count("tense")
        target += 1
    out.print(
        f"estimate for {counted(len(rows), 'attack')} (no model was called): at most {attacker} attacker "
        f"calls, {target} target calls and {len(rows)} judge calls; the cache answers those made before"
    )


def print_scorecard(card: Scorecard, attacks: list[Attack]) -> None:
    overall = card.overall
    out.print(f"[bold]Overall ASR: {describe(overall)}[/]  (attacks that succeeded / attacks decided, 95% interval)")
    if overall.undetermined:
        out.print(
            f"[cyan]{counted(overall.undetermined, 'attack')} undetermined[/]: the judge gave no readable verdict "
            "(counted in the totals, neither as succeeded nor as defended)"
        )
    if overall.filtered:
        out.print(
            f"[magenta]{counted(overall.filtered, 'attack')} blocked by the platform's content filter[/] "
            "(counted as defended: the provider, not the target, stopped them)"
        )
    table = Table(title="attack success rate by risk and complexity", title_justify="left")
    table.add_column("risk", no_wrap=True, max_width=22, overflow="ellipsis")
    complexities = card.complexities()
    for complexity in complexities:
        table.add_column(complexity, justify="right")
    for risk in card.by_risk:
        cells = [card.joint.get((risk, c)) for c in complexities]
        table.add_row(risk, *[describe(cell) if cell else "" for cell in cells])
    table.add_row("[bold]all[/]", *[describe(card.by_complexity[c]) for c in complexities])
    out.print(table)
    by_technique = Table(title="by technique", title_justify="left")
    by_technique.add_column("technique", no_wrap=True)
    by_technique.add_column("complexity")
    by_technique.add_column("ASR", justify="right")
    for technique, cell in sorted(card.by_technique.items(), key=lambda kv: -(kv[1].asr or 0)):
        by_technique.add_row(technique, card.complexity_of[technique], describe(cell))
    out.print(by_technique)
    landed = [a for a in attacks if a.success]
    for attack in landed[:5]:
        out.print(f"[red]succeeded[/] {attack.risk} · {attack.technique}: {attack.objective}", soft_wrap=True)
    if len(landed) > 5:
        out.print(f"... and {len(landed) - 5} more (--output writes every attack)")
