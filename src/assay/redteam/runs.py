"""``azure_ai_red_team`` runs: when a worker starts the run it plans the attacks (objectives ×
techniques), saves the plan as the next version of a dataset (the run's ``output_dataset_id``),
and the engine executes it: each item is one attack, played against the target by
``RedTeamTarget`` and judged by its risk's criterion.

    data_source: {type: azure_ai_red_team, target: {type: azure_ai_agent | azure_ai_model, ...},
      item_generation_params: {
        type: red_team_taxonomy, source: {type: file_id, id: <taxonomy id>}          # Foundry's cloud flow
            | red_team, risk_categories: [Violence, ...], num_objectives: 10         # objectives from our catalog
            | red_team_seed_prompts, source: {type: file_id | file_content, ...},    # azure-ai-evaluation's seeds
        attack_strategies: [Flip, Base64, [Tense, Base64], Crescendo, ...], num_turns?: 5,
        model?: <attacker model>, max_backtracks?: 5, seed?: 0, num_objectives?: 10}}

``num_turns`` limits the multi-turn techniques (MultiTurn, Crescendo); single-turn techniques
send one message. ``model`` (an assay extension) names the attacker model; the registry's default
model otherwise. A rerun of the same request plans the same attacks, so its model calls come
from the cache.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from assay.dataset.ids import dataset_id
from assay.dataset.readers import parse_json
from assay.errors import ConfigError, NotFoundError
from assay.llm import ModelRegistry
from assay.redteam.generated import TargetContext, generate
from assay.redteam.judging import judged_risks
from assay.redteam.objectives import Objective, seed_prompts, select
from assay.redteam.record import AttackSettings
from assay.redteam.risks import RISKS, risk_category
from assay.redteam.scorecard import Attack
from assay.redteam.settings import KINDS, Kind, RedTeamSettings
from assay.redteam.strategies import techniques
from assay.redteam.taxonomy import enabled_sub_categories, parse_taxonomy_id
from assay.results import OutputItem
from assay.results.criterion import Criterion
from assay.simulate.runs import count_setting
from assay.store import Store
from assay.sync import run_sync
from assay.targets.agents import find_agent
from assay.targets.prompt_agents import AgentLookup, PromptAgent

RED_TEAM = "azure_ai_red_team"
MAX_OBJECTIVES = 500
SUPPLIED_FIELDS = frozenset(
    {
        "messages",
        "query",
        "response",
        "context",
        "tool_definitions",
        "original_prompt",
        "turns",
        "backtracks",
        "attack_ended",
        "attack_id",
        "risk_category",
        "risk_sub_type",
        "objective",
        "seed_prompt",
        "attack_technique",
        "attack_complexity",
        "attack_strategies",
        "attack_seed",
        "risk_policy",
        "raw_response",
        "reply_decoded_with",
        "iterations",
        "pruned",
        "best_score",
    }
)
"""What an attack item holds: its plan, and the conversation the attack played out."""


def red_team_settings(data_source: dict[str, Any]) -> RedTeamSettings | None:
    if data_source.get("type") != RED_TEAM:
        return None
    where = "data_source.item_generation_params"
    params = data_source.get("item_generation_params")
    if not isinstance(params, dict) or params.get("type") not in KINDS:
        raise ConfigError(
            f"{where}: expected {{type: red_team_taxonomy | red_team | red_team_seed_prompts, "
            "attack_strategies: [...], ...}"
        )
    kind: Kind = params["type"]
    turns = params.get("num_turns")
    attack = AttackSettings(
        num_turns=None if turns is None else count_setting(turns, f"{where}.num_turns", default=5, cap=50),
        max_backtracks=_whole(params.get("max_backtracks"), f"{where}.max_backtracks", default=5, cap=20),
        pair_iterations=_whole(params.get("pair_iterations"), f"{where}.pair_iterations", default=5, cap=20),
        tap_width=_whole(params.get("tap_width"), f"{where}.tap_width", default=3, cap=10),
        tap_depth=_whole(params.get("tap_depth"), f"{where}.tap_depth", default=3, cap=10),
        tap_branching=_whole(params.get("tap_branching"), f"{where}.tap_branching", default=2, cap=5),
        max_attacker_calls=(
            None
            if params.get("max_attacker_calls") is None
            else _whole(params["max_attacker_calls"], f"{where}.max_attacker_calls", default=0, cap=1000)
        ),
        max_attacker_cost_usd=_dollars(params.get("max_attacker_cost_usd"), f"{where}.max_attacker_cost_usd"),
    )
    model = params.get("model", params.get("attacker_model"))
    if model is not None and (not isinstance(model, str) or not model):
        raise ConfigError(f"{where}.model: name the attacker model (a model in the models file)")
    seed = params.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"{where}.seed: expected a whole number")
    settings = RedTeamSettings(
        kind=kind,
        techniques=tuple(techniques(params.get("attack_strategies"), f"{where}.attack_strategies")),
        attack=attack,
        attacker_model=model,
        seed=seed,
        num_objectives=count_setting(
            params.get("num_objectives"), f"{where}.num_objectives", default=10, cap=MAX_OBJECTIVES
        ),
    )
    if data_source.get("target") is None:
        raise ConfigError(
            "data_source.target: name what to attack: {type: azure_ai_agent, name} or {type: azure_ai_model, model}"
        )
    if kind == "red_team":
        risks = params.get("risk_categories")
        if not isinstance(risks, list) or not risks:
            raise ConfigError(f"{where}.risk_categories: name at least one, e.g. [Violence, HateUnfairness]")
        named = tuple(dict.fromkeys(risk_category(r, f"{where}.risk_categories[{i}]") for i, r in enumerate(risks)))
        context = target_context(params.get("objective_generation"), f"{where}.objective_generation")
        return dataclasses.replace(settings, risk_categories=named, context=context)
    source = params.get("source")
    if kind == "red_team_taxonomy":
        if (
            not isinstance(source, dict)
            or source.get("type") != "file_id"
            or parse_taxonomy_id(str(source.get("id") or "")) is None
        ):
            raise ConfigError(
                f"{where}.source: expected {{type: file_id, id: <the taxonomy's id>}} "
                "(azureai://.../evaluationtaxonomies/<name>/versions/<v>)"
            )
    elif not isinstance(source, dict) or source.get("type") not in ("file_id", "file_content"):
        raise ConfigError(
            f"{where}.source: expected {{type: file_id, id}} or {{type: file_content, content: [...]}} "
            "holding seed prompts"
        )
    elif source["type"] == "file_content":
        seed_prompts(source.get("content"), f"{where}.source.content")
    return dataclasses.replace(settings, source=source)


def target_context(value: Any, where: str) -> TargetContext | None:
    """``objective_generation: {purpose?, instructions?, policy?, count?}`` (assay's extension)."""
    if value is None:
        return None
    if not isinstance(value, dict) or not any(isinstance(value.get(k), str) for k in TEXTS):
        raise ConfigError(
            f"{where}: expected {{purpose?, instructions?, policy?, count?}} with some text to write from"
        )
    unknown = sorted(set(value) - {*TEXTS, "count"})
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}")
    texts = {k: value[k] for k in TEXTS if value.get(k) is not None}
    if not all(isinstance(v, str) for v in texts.values()):
        raise ConfigError(f"{where}: purpose, instructions and policy are text")
    count = _whole(value.get("count"), f"{where}.count", default=5, cap=MAX_OBJECTIVES)
    return TargetContext(**texts, count=count)


TEXTS = ("purpose", "instructions", "policy")


def _dollars(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{where}: expected a positive number of dollars, got {value!r}")
    return float(value)


def _whole(value: Any, where: str, *, default: int, cap: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= cap:
        raise ConfigError(f"{where}: expected a whole number from 0 to {cap}, got {value!r}")
    return value


@dataclass
class Plan:
    objectives: list[Objective]
    warnings: list[str]


def plan_objectives(
    store: Store, project: str, data_source: dict[str, Any], settings: RedTeamSettings, models: ModelRegistry
) -> Plan:
    """The objectives the run attacks with, from its catalog, taxonomy or seed prompts."""
    tools = target_tools(data_source, models, partial(store.find_prompt_agent, project))
    warnings: list[str] = []
    objectives: list[Objective] = []
    if settings.kind == "red_team_seed_prompts":
        return Plan(_seed_prompts(store, project, settings.source or {}), warnings)
    if settings.kind == "red_team_taxonomy":
        body = taxonomy_body(store, project, str((settings.source or {}).get("id")))
        enabled = enabled_sub_categories(body)
        risks = [risk_category(r) for r in body["taxonomyInput"]["riskCategories"]]
    else:
        enabled, risks = {}, list(settings.risk_categories)
    reviewed = settings.kind == "red_team_taxonomy"
    for risk in risks:
        chosen, shortfall = select(
            risk,
            settings.num_objectives,
            settings.seed,
            tools=tools,
            enabled=enabled.get(risk, {}) if reviewed else None,
        )
        objectives.extend(chosen)
        if shortfall:
            warnings.append(shortfall)
    if settings.context is not None and settings.context.count:
        written, notes = run_sync(_written(settings, settings.context, risks, tools, models))
        objectives.extend(written)
        warnings.extend(notes)
    return Plan(objectives, warnings)


async def _written(
    settings: RedTeamSettings,
    context: TargetContext,
    risks: list[str],
    tools: list[dict[str, Any]],
    models: ModelRegistry,
) -> tuple[list[Objective], list[str]]:
    """Objectives the attacker model writes for this target, per risk."""
    model = models.get(settings.attacker_model)
    written: list[Objective] = []
    notes: list[str] = []
    try:
        for risk in risks:
            found, note = await generate(model, context, risk, tools, seed=settings.seed)
            written.extend(found)
            if note:
                notes.append(note)
    finally:
        await model.aclose()
    return written, notes


def attack_rows(objectives: list[Objective], settings: RedTeamSettings) -> Iterator[dict[str, Any]]:
    """One item per objective and technique, each with a seed of its own."""
    for index, objective in enumerate(objectives):
        for technique in settings.techniques:
            attack_id = f"{objective.risk}-{index + 1}-{technique.name}"
            row: dict[str, Any] = {
                "attack_id": attack_id,
                "risk_category": objective.risk,
                "risk_sub_type": objective.sub_type,
                "objective": objective.text,
                "risk_policy": RISKS[objective.risk].description if objective.risk in RISKS else None,
                "attack_technique": technique.name,
                "attack_complexity": technique.complexity,
                "attack_strategies": list(technique.steps),
                "attack_seed": zlib.crc32(f"{settings.seed}\x00{attack_id}\x00{objective.text}".encode()),
            }
            if objective.prompt is not None:
                row["seed_prompt"] = objective.prompt
            yield row


def save_attacks(store: Store, project: str, run_id: str, rows: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The plan as the next version of ``red-team-attacks-<run>``: (its id, the output_datasets entry)."""
    name = f"red-team-attacks-{run_id.rsplit('_', 1)[-1][:8]}"
    content = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
    saved = store.save_dataset(project, name, content)
    written = dataset_id(project, name, saved["version"])
    return written, {"type": "red_team_attacks", "dataset": {"id": written, "name": name, "version": saved["version"]}}


def target_tools(
    data_source: dict[str, Any], models: ModelRegistry | None, agents: AgentLookup | None = None
) -> list[dict[str, Any]]:
    """An agent target's tools: as the run names them, else as the project's prompt agent
    (``agents``) declares them, else as the agent is configured."""
    target = data_source.get("target") or {}
    if target.get("type") != "azure_ai_agent":
        return []
    tools = target.get("tool_descriptions") or []
    if not tools and agents is not None:
        agent = PromptAgent.found(agents, str(target.get("name")), target.get("version"))
        if agent is not None:
            return agent.tool_descriptions()
    if tools or models is None:
        return list(tools)
    try:
        return find_agent(models.agents, str(target.get("name")), target.get("version")).tool_descriptions
    except ConfigError:
        return []


def taxonomy_body(store: Store, project: str, given: str) -> dict[str, Any]:
    named = parse_taxonomy_id(given)
    if named is None or named[0] != project:
        raise ConfigError(f"item_generation_params.source.id: no taxonomy {given!r} in this project")
    try:
        return dict(store.get_taxonomy(project, named[1], named[2])["body"])
    except NotFoundError as exc:
        raise ConfigError(f"item_generation_params.source.id: {exc.message}") from None


def _seed_prompts(store: Store, project: str, source: dict[str, Any]) -> list[Objective]:
    where = "item_generation_params.source"
    if source.get("type") == "file_content":
        return seed_prompts(source.get("content"), f"{where}.content")
    try:
        record = store.get_file(project, str(source.get("id")), content=True)
    except NotFoundError as exc:
        raise ConfigError(f"{where}.id: {exc.message}") from None
    return seed_prompts(
        seed_prompt_rows(bytes(record["content"]).decode("utf-8-sig", "replace"), record["filename"]),
        record["filename"],
    )


def seed_prompt_rows(text: str, name: str) -> list[Any]:
    """A seed-prompt file's entries: a JSON array (azure-ai-evaluation's format) or JSON lines."""
    value, problem = parse_json(text)
    if problem is None and isinstance(value, list):
        return value
    rows = []
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        row, problem = parse_json(line)
        if problem is not None:
            raise ConfigError(
                f"{name}:{line_no}: {problem}", hint="seed prompts are a JSON array, or one JSON object per line"
            )
        rows.append(row)
    return rows


def attacked_risks(store: Store, project: str, settings: RedTeamSettings) -> set[str]:
    if settings.kind == "red_team":
        return set(settings.risk_categories)
    if settings.kind == "red_team_taxonomy":
        body = taxonomy_body(store, project, str((settings.source or {}).get("id")))
        return {risk_category(r) for r in body["taxonomyInput"]["riskCategories"]}
    return {o.risk for o in _seed_prompts(store, project, settings.source or {})}


def check_judged(risks: set[str], testing_criteria: list[Criterion]) -> None:
    """Every attacked risk needs the criterion that decides whether its attacks succeeded."""
    missing = sorted(risks - judged_risks(testing_criteria))
    if missing:
        risk = RISKS[missing[0]]
        raise ConfigError(
            f"the run attacks {', '.join(missing)} but no testing criterion judges {missing[0]}",
            hint=f"add {{type: azure_ai_evaluator, name: {risk.name}, evaluator_name: {risk.evaluator}}} to the eval",
        )


def attacks_of(outputs: Iterable[OutputItem]) -> Iterator[Attack]:
    """Each stored attack item's outcome: its risk criterion's verdict."""
    for output in outputs:
        item = output.datasource_item
        risk = item.get("risk_category")
        if risk is None:
            continue
        verdict = next(
            (
                r
                for r in output.results
                if r.properties.get("risk_category") == risk and "attack_success" in r.properties
            ),
            None,
        )
        judged = verdict.properties if verdict is not None else {}
        # The platform's content filter stopped the target's call: the attack was blocked, so it did not
        # succeed (counted apart). A judge's call filtered instead leaves the attack undecided.
        filtered = isinstance((output.sample or {}).get("filtered"), dict)
        error = (output.sample or {}).get("error") or judged.get("error")
        if isinstance(error, dict):
            error = error.get("message")
        yield Attack(
            risk=risk,
            technique=str(item.get("attack_technique")),
            complexity=str(item.get("attack_complexity")),
            success=False if filtered else judged.get("attack_success"),
            filtered=filtered,
            undetermined=not filtered and verdict is not None and verdict.status == "undetermined",
            sub_type=item.get("risk_sub_type"),
            objective=item.get("objective"),
            attack_id=item.get("attack_id"),
            conversation=tuple(item.get("messages") or ()),
            reason=verdict.reason if verdict is not None else None,
            score=verdict.score if verdict is not None else None,
            error=error,
        )
