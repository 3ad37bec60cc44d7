"""Optimization jobs as azure-ai-projects 2.10 makes and reads them: ``agents.begin_create_optimization_job``,
``get_optimization_job``, ``list_optimization_candidates``, ``promote_optimization_candidate``.

The SDK's create body is read into the request azd's ``optimize --endpoint`` sends (``azd_request``),
so both are resolved by ``job_request`` and run by the same search. Test cases without names are
named ``case_1``, ``case_2``, ... (a scenario by its ``test_case_id``). A
``user_conversation_simulation`` set's scenarios are played by a simulated user against each
candidate, and the conversations judged (``default_simulation_configuration`` as in a simulation
run). The baseline is the body's ``baseline_agent_configuration``, else the project's prompt agent
the target names. ``agent_optimization_space.target_attributes`` says
what may change; Foundry's default is the instructions alone. A job and its candidates are shown with
the SDK's fields (``candidate_summary``, ``termination_reason``, ``output.mutations``,
``evaluation``, ``promotion``) beside the ones azd reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.optimize.search import State

ATTRIBUTES = ("instructions", "model", "skills", "tools")
WHERE = "optimization_configuration"
TERMINATION = {
    "max_candidates": "completed",
    "max_stalls": "candidate_screening_stalled",
    "max_metric_calls": "budget_exhausted",
    "max_cost_usd": "budget_exhausted",
    "max_wall_seconds": "budget_exhausted",
}
"""Why the search stopped, as Foundry's ``termination_reason`` says it."""
STAGES = {"target": "agent", "judge": "evaluation", "reflection": "optimization"}
MUTATIONS = {"system_prompt": "instructions", "model": "model", "tools": "tools"}
SIMULATED = "user_conversation_simulation"


def is_foundry_request(body: dict[str, Any]) -> bool:
    return "target_configuration" in body or "optimization_configuration" in body


def target_of(body: dict[str, Any]) -> tuple[str, str | None]:
    target = body.get("target_configuration")
    if (
        not isinstance(target, dict)
        or target.get("type", "foundry_agent") != "foundry_agent"
        or not isinstance(target.get("name"), str)
        or not target["name"]
    ):
        raise ConfigError("target_configuration: expected {type: foundry_agent, name, version?}")
    version = target.get("version")
    return target["name"], None if version in (None, "") else str(version)


def azd_request(body: dict[str, Any], stored: dict[str, Any] | None) -> dict[str, Any]:
    """The SDK's create body as azd's. ``stored``: the target's prompt agent (``system_prompt``,
    ``model``, ``tools``), for a body that gives no ``baseline_agent_configuration``."""
    name, version = target_of(body)
    config = body.get(WHERE)
    if not isinstance(config, dict) or config.get("type", "agent_optimization") != "agent_optimization":
        raise ConfigError(f"{WHERE}.type: agent_optimization or prompt_optimization")
    evaluation = config.get("evaluation_configuration")
    if not isinstance(evaluation, dict):
        raise ConfigError(f"{WHERE}.evaluation_configuration: expected {{training_set, evaluators}}")
    given = config.get("baseline_agent_configuration") or {}
    baseline = stored or {}
    if not given.get("system_prompt") and not baseline.get("system_prompt"):
        raise ConfigError(
            f"{WHERE}.baseline_agent_configuration.system_prompt: the agent's instructions are needed",
            hint=f"give them, or make {name} a prompt agent of this project (agents.create_version)",
        )
    space = config.get("agent_optimization_space") or {}
    attributes = space.get("target_attributes") or ["instructions"]
    unknown = [a for a in attributes if a not in ATTRIBUTES] if isinstance(attributes, list) else [attributes]
    if unknown:
        raise ConfigError(f"{WHERE}.agent_optimization_space.target_attributes: each one of {', '.join(ATTRIBUTES)}")
    options: dict[str, Any] = {
        "optimization_model": (body.get("optimization_model_configuration") or {}).get("model"),
        "eval_model": evaluation.get("evaluation_model"),
        "target_attributes": attributes,
        "optimization_config": {
            "system_prompt": given.get("system_prompt") or baseline.get("system_prompt"),
            "model": given.get("current_model") or baseline.get("model"),
            "tools": given["tools"] if given.get("tools") is not None else baseline.get("tools") or [],
            "skills": given.get("skills") or [],
            "model_search_space": space.get("model_search_space") or [],
        },
    }
    if not isinstance(options["optimization_model"], str) or not options["optimization_model"]:
        raise ConfigError("optimization_model_configuration.model: name the model that proposes candidates")
    evaluators = evaluation.get("evaluators")
    if not isinstance(evaluators, list) or not evaluators:
        where = f"{WHERE}.evaluation_configuration.evaluators"
        raise ConfigError(f"{where}: name at least one, e.g. [{{name: builtin.task_adherence}}]")
    searched = (config.get("candidate_search_configuration") or {}).get("max_candidates")
    if searched is not None:
        options["max_candidates"] = searched
    training = evaluation.get("training_set")
    simulated = isinstance(training, dict) and training.get("type") == SIMULATED
    defaults = training.get("default_simulation_configuration") if isinstance(training, dict) else None
    where = f"{WHERE}.evaluation_configuration"
    request: dict[str, Any] = {
        "agent": {"agent_name": name, "agent_version": version},
        "train_dataset": _tasks(training, f"{where}.training_set", simulated),
        "evaluators": evaluators,
        "options": options,
    }
    if evaluation.get("validation_set") is not None:
        request["validation_dataset"] = _tasks(evaluation["validation_set"], f"{where}.validation_set", simulated)
    if simulated:
        if not isinstance(defaults or {}, dict):
            raise ConfigError(f"{where}.training_set.default_simulation_configuration: expected an object")
        options["simulation"] = defaults or {}
    return request


def _tasks(value: Any, where: str, simulated: bool) -> dict[str, Any]:
    """An evaluation set as azd's dataset: target-completion test cases, or (``simulated``) the
    scenarios a simulated user plays against each candidate; both sets of a job are of one kind."""
    kind = SIMULATED if simulated else "target_completion"
    if not isinstance(value, dict) or value.get("type") != kind:
        raise ConfigError(
            f"{where}: expected {{type: {kind}, source}}",
            hint="the training and validation sets of a job are both target_completion or both "
            "user_conversation_simulation",
        )
    source = value.get("source")
    source_kind = source.get("type") if isinstance(source, dict) else None
    if source_kind == "inline" and isinstance(source, dict):
        cases = source.get("test_cases")
        shape = "{test_case_description, test_case_id?}" if simulated else "{query, ground_truth?}"
        if not isinstance(cases, list) or not cases or not all(isinstance(c, dict) for c in cases):
            raise ConfigError(f"{where}.source.test_cases: a non-empty list of {shape}")
        items = [_named(case, index, simulated) for index, case in enumerate(cases)]
        return {"type": "inline", "items": items}
    if source_kind == "dataset_reference" and isinstance(source, dict):
        return {"type": "reference", "name": source.get("name"), "version": source.get("version")}
    raise ConfigError(f"{where}.source: expected {{type: inline, test_cases}} or {{type: dataset_reference, name}}")


def _named(case: dict[str, Any], index: int, simulated: bool) -> dict[str, Any]:
    """A test case as a task: its ``test_case_id`` names a scenario, else ``case_<n>``."""
    name = case.get("test_case_id") if simulated else None
    return {"name": str(name) if name else f"case_{index + 1}", **case}


def optimization_type(state: State) -> str:
    """``agent_optimization`` (a search, each candidate scored) or ``prompt_optimization`` (one rewrite)."""
    config = (state.request or {}).get(WHERE)
    kind = config.get("type") if isinstance(config, dict) else None
    return kind if kind == "prompt_optimization" else "agent_optimization"


def foundry_fields(state: State) -> dict[str, Any]:
    """A job's own fields in the SDK's shape: what it was asked (as the SDK sent it) and when."""
    request = state.request or {}  # azd's request holds none of these
    fields = {
        key: request.get(key)
        for key in ("display_name", "target_configuration", "optimization_model_configuration", WHERE)
    }
    fields |= {"created_at": state.created_at, "updated_at": state.updated_at or state.created_at}
    fields["run_duration_ms"] = int(state.elapsed_seconds * 1000)
    warnings = (state.result or {}).get("warnings") or []
    if warnings:
        fields["warnings"] = [str(w) for w in warnings]
    return fields


def foundry_result(state: State, summary: dict[str, Any]) -> dict[str, Any]:
    """A job's ``result`` fields in the SDK's shape (``summary``: its ``candidate_summary``)."""
    usage = [
        {"stage": STAGES.get(role, role), "total_tokens": counts.get("tokens", 0)}
        for role, counts in sorted(state.usage.items())
    ]
    reason = TERMINATION.get(state.stop_reason or "")
    return {"candidate_summary": summary, "token_usage": usage, "termination_reason": reason}


def candidate_object(state: State, scored: dict[str, Any], *, expand: bool) -> dict[str, Any]:
    """A candidate as the SDK's ``AgentOptimizationCandidate``; ``scored``: its entry in the job's
    ``result.candidates``. With ``expand``, each mutation carries what it changed to."""
    cid = scored["candidate_id"]
    entry = state.candidates[cid]
    config = entry["config"]
    mutations = []
    for change in entry["mutation"]:
        kind = MUTATIONS.get(change, "skills" if change.startswith("skill") else change)
        mutation: dict[str, Any] = {"type": kind}
        if expand:
            mutation["value"] = config.get("instructions" if kind == "instructions" else kind)
        mutations.append(mutation)
    promoted = [p for p in state.promotions if p["candidate_id"] == cid]
    job_type = optimization_type(state)
    evaluated = job_type == "agent_optimization"  # a prompt optimization's candidates are made, not scored
    done = bool(entry["tasks"]) or not evaluated
    found: dict[str, Any] = {
        "candidate_id": cid,
        "job_id": state.id,
        "name": cid,
        "status": "completed" if done else "evaluating",
        "output": {"type": job_type, "mutations": mutations},
        "evaluation": {
            "score": scored["avg_score"],
            "eval_id": scored["eval_id"],
            "eval_run_id": scored["eval_run_id"],
        }
        if done and evaluated
        else None,
    }
    if promoted:
        last = promoted[-1]
        agent = {"type": "agent_reference", "name": last["agent_name"], "version": last["agent_version"] or None}
        found["promotion"] = {"promoted_at": last.get("promoted_at"), "promoted_agent": agent}
        found["agent_version"] = last["agent_version"] or None
    return found
