"""Optimization jobs as Foundry's ``agent_optimization_jobs`` service shows them, and the jobs a
server runs for azd's ``optimize --endpoint``."""

from __future__ import annotations

import json
from typing import Any

from assay.optimize.foundry import foundry_fields, foundry_result
from assay.optimize.search import State


def job_object(state: State) -> dict[str, Any]:
    """The job in Foundry's ``agent_optimization_jobs`` shape."""
    result = state.result or {}
    splits = result.get("splits") or {}
    candidates = []
    for cid in state.order:
        entry = state.candidates[cid]
        scores = {name: t["score"] for name, t in entry["tasks"].items()}
        runs = sorted({(t["eval_id"], t["run_id"]) for t in entry["tasks"].values()})
        validation, test = split_mean(scores, splits.get("validation")), split_mean(scores, splits.get("test"))
        candidates.append(
            {
                "name": cid,
                "candidate_id": cid,
                "mutations": entry["mutation"],
                "task_scores": scores,
                # What ranks candidates: the validation mean (train minibatches and the test split apart).
                "avg_score": validation if splits else (sum(scores.values()) / len(scores) if scores else None),
                "validation_score": validation,
                "test_score": test,
                "eval_id": runs[0][0] if runs else None,
                "eval_run_id": runs[0][1] if runs else None,
                "accepted": cid in state.accepted,
                "is_pareto_optimal": cid in (result.get("pareto") or []),
            }
        )
    by_id = {c["candidate_id"]: c for c in candidates}
    baseline, best = by_id.get(result.get("baseline", "")) or {}, by_id.get(result.get("best", "")) or {}
    completed = len(state.accepted) - 1 if state.accepted else 0
    summary = {
        "completed_candidate_count": completed,
        "baseline_id": baseline.get("candidate_id"),
        "best_id": best.get("candidate_id"),
        "baseline_score": baseline.get("avg_score"),
        "best_score": best.get("avg_score"),
        "latest_promoted_candidate": state.promotions[-1]["candidate_id"] if state.promotions else None,
    }
    return {
        **foundry_fields(state),
        "id": state.id,
        "status": FOUNDRY_STATUS.get(state.status, state.status),
        "error": state.error,
        "stop_reason": state.stop_reason,
        "progress": {
            "candidates_completed": completed,
            "baseline_score": summary["baseline_score"],
            "best_score": summary["best_score"],
            "elapsed_seconds": round(state.elapsed_seconds, 1),
        },
        "result": {
            "baseline": by_id.get(result.get("baseline", "")),
            "best": by_id.get(result.get("best", "")),
            "gain": result.get("gain"),
            "gain_interval": result.get("interval"),
            "starred": result.get("starred"),
            "warnings": result.get("warnings") or [],
            "candidates": candidates,
            **foundry_result(state, summary),
        },
        "metric_calls": state.metric_calls,
        "search_metric_calls": state.search_metric_calls,
        "tokens": state.tokens,
        "cost_usd": state.cost_usd,
        "usage_by_role": state.usage,
    }


def split_mean(scores: dict[str, float], names: list[str] | None) -> float | None:
    """A candidate's mean over one split's tasks, when it was scored on all of them."""
    if not names or any(name not in scores for name in names):
        return None
    return sum(scores[name] for name in names) / len(names)


# -- jobs a server runs -----------------------------------------------------------------------

FOUNDRY_STATUS = {"in_progress": "in_progress", "succeeded": "succeeded", "failed": "failed", "cancelled": "cancelled"}


def job_request(body: dict[str, Any], store: Any, project: str) -> dict[str, Any]:
    """A create request checked and resolved: tasks, criteria, the baseline and the settings.
    Raises ``ConfigError`` naming the field."""
    from assay.config.agents import AgentDefinition, Skill, parse_tools
    from assay.errors import ConfigError

    agent = body.get("agent")
    if not isinstance(agent, dict) or not isinstance(agent.get("agent_name"), str):
        raise ConfigError("agent: expected {agent_name, agent_version?}")
    options = body.get("options")
    if not isinstance(options, dict) or not isinstance(options.get("optimization_model"), str):
        raise ConfigError("options.optimization_model: name the reflection model (required)")
    space = options.get("optimization_config") or {}
    if not isinstance(space, dict) or not isinstance(space.get("system_prompt"), str) or not space["system_prompt"]:
        raise ConfigError("options.optimization_config.system_prompt: the agent's instructions are needed")
    tools = parse_tools(json.dumps(space.get("tools") or []), "options.optimization_config.tools")
    skills = tuple(
        Skill(str(s.get("name")), str(s.get("description") or ""), str(s.get("body") or ""))
        for s in space.get("skills") or []
        if isinstance(s, dict)
    )
    model = space.get("model") if isinstance(space.get("model"), str) else None
    baseline = AgentDefinition(
        instructions=space["system_prompt"], tools=tuple(tools), skills=skills, model=model, name=agent["agent_name"]
    )
    evaluators = body.get("evaluators")
    if not isinstance(evaluators, list) or not evaluators:
        raise ConfigError("evaluators: name at least one, e.g. [{name: builtin.task_adherence}]")
    criteria = []
    for index, entry in enumerate(evaluators):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ConfigError(f"evaluators[{index}]: expected {{name, version?, initialization_parameters?}}")
        criterion = {
            "type": "azure_ai_evaluator",
            "name": entry["name"].removeprefix("builtin."),
            "evaluator_name": entry["name"],
        }
        if entry.get("version"):
            criterion["evaluator_version"] = str(entry["version"])
        if entry.get("initialization_parameters"):
            criterion["initialization_parameters"] = entry["initialization_parameters"]
        criteria.append(criterion)
    train = _dataset(body.get("train_dataset"), "train_dataset", store, project)
    validation = (
        _dataset(body["validation_dataset"], "validation_dataset", store, project)
        if body.get("validation_dataset")
        else None
    )
    simulation = options.get("simulation")
    if simulation is not None:
        _check_scenarios(simulation, train, validation)
    return {
        "train": train,
        "validation": validation,
        "criteria": criteria,
        "baseline": baseline,
        "eval_model": options.get("eval_model"),
        "settings": {
            "optimization_model": options["optimization_model"],
            "model_search_space": [str(m) for m in space.get("model_search_space") or []],
            **{k: options[k] for k in ("max_candidates", "max_stalls") if isinstance(options.get(k), int)},
            **({"target_attributes": options["target_attributes"]} if options.get("target_attributes") else {}),
            **({"simulation": simulation} if simulation is not None else {}),
        },
        # A simulated conversation is judged whole.
        "level": "conversation" if options.get("evaluation_level") == "conversation" or simulation else "turn",
    }


def _check_scenarios(simulation: Any, train: list[dict[str, Any]], validation: list[dict[str, Any]] | None) -> None:
    """The scenarios read as a simulation run reads them (its settings, each row and its own
    ``simulation_configuration``), so what a run would refuse is refused when the job is created."""
    from assay.dataset import Dataset
    from assay.errors import ConfigError
    from assay.simulate.runs import scenario_dataset, user_simulation_settings

    if not isinstance(simulation, dict):
        raise ConfigError("options.simulation: expected the default_simulation_configuration object")
    # The model that plays the user is the job's evaluation model, known when the job runs.
    source = {"model_configuration": {"model": "evaluation model"}, "default_simulation_configuration": simulation}
    try:
        settings = user_simulation_settings(source)
    except ConfigError as exc:  # named as the job's set names it
        exc.message = exc.message.replace("data_source.", "training_set.", 1)
        raise
    for where, tasks in (("train_dataset", train), ("validation_dataset", validation or [])):
        for row in scenario_dataset(Dataset.from_content(tasks, name=where), settings).rows():
            if row.issue is not None:  # an inline row's line is its place in the list, from 1
                raise ConfigError(f"{where}: scenario {tasks[row.line - 1]['name']!r}: {row.issue.message}")


def _dataset(value: Any, where: str, store: Any, project: str) -> list[dict[str, Any]]:
    from assay.dataset import Dataset
    from assay.errors import ConfigError, NotFoundError

    if not isinstance(value, dict) or value.get("type") not in ("inline", "reference"):
        raise ConfigError(f"{where}: expected {{type: inline, items: [...]}} or {{type: reference, name, version}}")
    if value["type"] == "inline":
        items = value.get("items")
        if not isinstance(items, list) or not items:
            raise ConfigError(f"{where}.items: expected a list of tasks {{name, query, criteria?}}")
        rows = list(Dataset.from_content(items, name=where).items())
    else:
        try:
            row = store.get_dataset(str(value.get("name")), value.get("version"), project=project)
        except NotFoundError as exc:
            raise ConfigError(f"{where}: {exc.message}") from None
        content = bytes(store.get_file(project, row["file_id"], content=True)["content"])
        rows = list(Dataset.from_bytes(content, f"{row['name']}.jsonl").items())
    if not any(r.get("name") for r in rows):  # test cases ({query, ground_truth}) or scenarios, not named tasks
        rows = [{"name": str(r.get("test_case_id") or f"case_{i + 1}"), **r} for i, r in enumerate(rows)]
    names = [r.get("name") for r in rows]
    if not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
        raise ConfigError(f"{where}: every task needs a unique name")
    return rows
