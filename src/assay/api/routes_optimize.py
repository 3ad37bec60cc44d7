"""Foundry's ``/agent_optimization_jobs``, for azd's ``optimize --endpoint``, azure-ai-projects'
``agents.*_optimization_job*`` (``assay.optimize.foundry`` reads its request) and Microsoft's
``load_config()`` resolver. Create a job (201, ``Operation-Location``), read, list, cancel or delete
it; list its candidates, read one with its config and files; promote one. A job runs on the server
in a thread of its own, as ``assay optimize`` runs it, its state under
``$ASSAY_HOME/optimize/<project>/<job>/``."""

from __future__ import annotations

import dataclasses
import functools
import json
import shutil
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import yaml
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse

from assay.api.context import JsonBody, OptionalJsonBody, Owner, context
from assay.api.ratelimit import limited
from assay.api.wire import Paging
from assay.config.agents import AgentDefinition
from assay.config.settings import settings
from assay.errors import ConfigError, NotFoundError
from assay.evaluators.catalog import Catalog
from assay.llm import ModelRegistry
from assay.optimize.candidate import config_from, foundry_config
from assay.optimize.estimate import estimate, estimate_rewrite
from assay.optimize.foundry import azd_request, candidate_object, is_foundry_request, target_of
from assay.optimize.jobs import job_object, job_request
from assay.optimize.rewrite import PromptJob, PromptRewrite, is_prompt_optimization, prompt_job
from assay.optimize.search import Optimizer, Settings, State
from assay.run.criteria import bind_criteria
from assay.run.definition import EvalDefinition
from assay.store import Store
from assay.targets.agents import find_agent
from assay.targets.prompt_agents import PromptAgent

router = APIRouter()
ROUTE = "/agent_optimization_jobs"


def _jobs(project: str) -> Path:
    return settings().home / "optimize" / project


def _state(project: str, job_id: str) -> State:
    path = _jobs(project) / job_id / "state.json"
    if not path.is_file():
        raise NotFoundError(f"no optimization job {job_id!r}")
    return State.load(path)


@router.post(ROUTE, status_code=201, dependencies=[limited("runs")])
def create_job(request: Request, body: JsonBody, owner: Owner) -> JSONResponse:
    ctx = context(request)
    if is_prompt_optimization(body):
        return _create_prompt_job(request, body, owner)
    asked = _as_azd(ctx.store, owner, body)
    resolved = job_request(asked, ctx.store, owner)
    models = ctx.models()
    settings = Settings(**resolved["settings"])
    registry = ModelRegistry(
        models.configs.values(),
        cache=models.cache,
        cache_mode=models.cache_mode,
        default=resolved["eval_model"] or models.default,
        agents=models.agents,
    )
    registry.get(settings.optimization_model).check_credentials()  # refused now, not later in the thread
    _check_evaluators(resolved, ctx.catalog(owner), registry)
    baseline: AgentDefinition = resolved["baseline"]
    served = [a for a in models.agents if a.name == baseline.name]
    version = str(asked["agent"].get("agent_version") or "") or None
    if served:  # an agent the operator serves: candidates are scored by calling it with their configuration
        find_agent(served, str(baseline.name), version)
        settings.hosted_agent = {"name": baseline.name, "version": version}
    elif baseline.model is None:
        baseline = dataclasses.replace(baseline, model=registry.default)
    state = State(
        id=f"optjob_{uuid.uuid4().hex[:12]}",
        settings=dataclasses.asdict(settings),
        status="queued",
        project=owner,
        request=body,
    )
    path = _jobs(owner) / state.id / "state.json"
    state.save(path)
    definition = EvalDefinition(
        f"optimize {resolved['baseline'].name}", resolved["criteria"], evaluation_level=resolved["level"]
    )
    optimizer = Optimizer(
        definition,
        resolved["train"],
        baseline,
        ctx.store,
        ctx.catalog(owner),
        registry,
        settings,
        path,
        state=state,
        validation=resolved["validation"],
    )
    return _started(request, optimizer)


def _create_prompt_job(request: Request, body: dict[str, Any], owner: str) -> JSONResponse:
    """A ``prompt_optimization`` job: the target prompt agent's instructions rewritten once, as the
    request's steering prompts ask (``assay.optimize.rewrite``)."""
    ctx = context(request)
    job = _prompt_job(ctx.store, owner, body)
    models = ctx.models()
    models.get(job.optimization_model).check_credentials()  # refused now, not later in the thread
    state = State(
        id=f"optjob_{uuid.uuid4().hex[:12]}",
        settings={"optimization_model": job.optimization_model},
        status="queued",
        project=owner,
        request=body,
    )
    path = _jobs(owner) / state.id / "state.json"
    state.save(path)
    return _started(request, PromptRewrite(job, models, state, path))


def _prompt_job(store: Store, project: str, body: dict[str, Any]) -> PromptJob:
    """A ``prompt_optimization`` request checked against the project's prompt agent it names."""
    name, version = target_of(body)
    return prompt_job(body, name, _stored_baseline(store, project, name, version))


def _started(request: Request, job: Optimizer | PromptRewrite) -> JSONResponse:
    """The job run in a thread of its own, answered as Foundry answers a create."""
    state = job.state
    threading.Thread(target=_run, args=(job,), name=f"assay-{state.id}", daemon=True).start()
    # The SDK's poller follows this to the job until it has ended, and reads its result there.
    location = request.url.replace(path=f"{request.url.path}/{state.id}")
    return JSONResponse(job_object(state), status_code=201, headers={"Operation-Location": str(location)})


@router.post(ROUTE + ":estimate")
def estimate_job(request: Request, body: JsonBody, owner: Owner) -> dict[str, Any]:
    """What a job would call and cost, from the request a create would take; nothing is called."""
    ctx = context(request)
    if is_prompt_optimization(body):
        job = _prompt_job(ctx.store, owner, body)
        price = getattr(ctx.models().configs.get(job.optimization_model), "price", None)
        return estimate_rewrite(job.baseline.instructions, job.guidance, price)
    resolved = job_request(_as_azd(ctx.store, owner, body), ctx.store, owner)
    settings = Settings(**resolved["settings"])
    catalog, models = ctx.catalog(owner), ctx.models()
    judges = sum(catalog.get(c["evaluator_name"], c.get("evaluator_version")).uses_model for c in resolved["criteria"])
    judges += max((len(t.get("criteria") or []) for t in resolved["train"]), default=0)  # task checks, each judged
    baseline: AgentDefinition = resolved["baseline"]
    stage_models = {
        "agent": baseline.model or models.default,
        "evaluation": resolved["eval_model"] or models.default,
        "optimization": settings.optimization_model,
    }
    prices = {stage: getattr(models.configs.get(name or ""), "price", None) for stage, name in stage_models.items()}
    return estimate(
        resolved["train"],
        resolved["validation"],
        settings,
        judges=judges,
        instructions=baseline.system_prompt(),
        prices=prices,
    )


def _check_evaluators(resolved: dict[str, Any], catalog: Catalog, models: ModelRegistry) -> None:
    """The job's evaluators bound once, as each scoring will bind them: an unknown one, or one that
    cannot judge at the job's level (a conversation, on scenarios), is refused now, not by a job
    that fails later."""
    try:
        bind_criteria(
            resolved["criteria"], catalog, item_fields=None, has_sample=True, level=resolved["level"], models=models
        )
    except ConfigError as exc:
        if exc.criterion_index is not None:
            exc.message = f"evaluators[{exc.criterion_index}]: {exc.message}"
        raise


def _as_azd(store: Store, project: str, body: dict[str, Any]) -> dict[str, Any]:
    """A create request in azd's shape: azure-ai-projects' read into it, azd's as it is."""
    if not is_foundry_request(body):
        return body
    return azd_request(body, _stored_baseline(store, project, *target_of(body)))


def _stored_baseline(store: Store, project: str, name: str, version: str | None) -> dict[str, Any] | None:
    """The project's prompt agent ``name`` as a baseline (its instructions, model and tools); None
    when the project has none of that name (the request then gives the baseline)."""
    agent = PromptAgent.found(functools.partial(store.find_prompt_agent, project), name, version)
    if agent is None:
        return None
    return {"system_prompt": agent.instructions, "model": agent.model, "tools": agent.tool_descriptions()}


def _run(job: Optimizer | PromptRewrite) -> None:
    state = job.state
    state.status = "in_progress"
    state.save(job.state_path)
    try:
        job.run()
    except Exception as exc:  # noqa: BLE001 - the job records why it failed; the server goes on
        state.status, state.error = "failed", {"code": type(exc).__name__, "message": str(exc)}
        state.save(job.state_path)


@router.get(ROUTE)
def list_jobs(
    request: Request, owner: Owner, paging: Paging, status: str | None = None, agent_name: str | None = None
) -> dict[str, Any]:
    states = sorted((State.load(p) for p in _jobs(owner).glob("*/state.json")), key=lambda s: (s.created_at, s.id))
    jobs = [job_object(s) for s in states if agent_name is None or _agent_name(s) == agent_name]
    found = paging.page([j for j in jobs if status is None or j["status"] == status])
    return found | {"value": found["data"]}  # azd reads value


def _agent_name(state: State) -> str | None:
    """The agent a job optimizes, as the SDK (``target_configuration``) or azd (``agent``) named it."""
    request = state.request or {}
    named = request.get("target_configuration") or request.get("agent") or {}
    return named.get("name") or named.get("agent_name")


@router.delete(ROUTE + "/{job_id}", status_code=204)
def delete_job(request: Request, job_id: str, owner: Owner) -> Response:
    state = _state(owner, job_id)
    if state.status in ("queued", "in_progress"):
        raise ConfigError(f"job {job_id} is {state.status}", hint="cancel it first (:cancel), then delete it")
    shutil.rmtree(_jobs(owner) / job_id)
    return Response(status_code=204)


@router.get(ROUTE + "/{job_id}")
def get_job(request: Request, job_id: str, owner: Owner) -> dict[str, Any]:
    return job_object(_state(owner, job_id))


@router.post(ROUTE + "/{job_id}:cancel")
def cancel_job(request: Request, job_id: str, owner: Owner) -> dict[str, Any]:
    state = _state(owner, job_id)
    if state.status in ("queued", "in_progress"):
        (_jobs(owner) / job_id / "cancel").touch()  # the search stops after its current step
    return job_object(state)


def _scored(state: State, candidate_id: str) -> dict[str, Any]:
    """The candidate as the job's ``result.candidates`` shows it (its scores, its runs)."""
    return next(c for c in job_object(state)["result"]["candidates"] if c["candidate_id"] == candidate_id)


def _candidate(owner: str, job_id: str, candidate_id: str) -> tuple[State, dict[str, Any]]:
    state = _state(owner, job_id)
    if candidate_id not in state.candidates:
        raise NotFoundError(f"job {job_id} has no candidate {candidate_id!r}")
    return state, state.candidates[candidate_id]


FILES = {"instructions.md": "instructions", "tools.json": "tools", "metadata.yaml": "metadata"}


@router.get(ROUTE + "/{job_id}/candidates")
def list_candidates(
    request: Request, job_id: str, owner: Owner, paging: Paging, expand: str | None = None
) -> dict[str, Any]:
    """The job's candidates in the SDK's shape, in the order they were made; ``expand=mutations``
    gives what each mutation changed to."""
    state = _state(owner, job_id)
    scored = job_object(state)["result"]["candidates"]
    wanted = "mutations" in (expand or "").split(",")
    return paging.page([candidate_object(state, entry, expand=wanted) for entry in scored], key="candidate_id")


@router.get(ROUTE + "/{job_id}/candidates/{candidate_id}")
def get_candidate(request: Request, job_id: str, candidate_id: str, owner: Owner) -> dict[str, Any]:
    """The candidate in the SDK's shape, with azd's manifest (its files) beside."""
    state, entry = _candidate(owner, job_id, candidate_id)
    files = [
        {"path": path, "type": kind} for path, kind in FILES.items() if path != "tools.json" or entry["config"]["tools"]
    ]
    files += [{"path": f"skills/{s['name']}/SKILL.md", "type": "skill"} for s in entry["config"]["skills"]]
    scores = {name: task["score"] for name, task in entry["tasks"].items()}
    scored = _scored(state, candidate_id)
    return {
        **candidate_object(state, scored, expand=True),
        "candidate_id": candidate_id,
        "mutations": entry["mutation"],
        "parent": entry["parent"],
        "files": files,
        "avg_score": sum(scores.values()) / len(scores) if scores else None,
        "task_scores": scores,
    }


@router.get(ROUTE + "/{job_id}/candidates/{candidate_id}/config")
def get_candidate_config(request: Request, job_id: str, candidate_id: str, owner: Owner) -> dict[str, Any]:
    """What an agent's ``load_config()`` takes as ``OPTIMIZATION_CONFIG``."""
    _, entry = _candidate(owner, job_id, candidate_id)
    return foundry_config(candidate_id, config_from(entry["config"]))


@router.get(ROUTE + "/{job_id}/candidates/{candidate_id}/files")
def get_candidate_file(request: Request, job_id: str, candidate_id: str, owner: Owner, path: str) -> PlainTextResponse:
    _, entry = _candidate(owner, job_id, candidate_id)
    config = config_from(entry["config"])
    skills = {
        f"skills/{s.name}/SKILL.md": f"---\nname: {s.name}\ndescription: {s.description}\n---\n{s.body}"
        for s in config.skills
    }
    meta = {
        "model": config.model,
        "instruction_file": "instructions.md",
        **({"tools_file": "tools.json"} if config.tools else {}),
    }
    contents = {
        "instructions.md": config.instructions,
        "tools.json": json.dumps(list(config.tools), indent=2),
        "metadata.yaml": yaml.safe_dump(meta, sort_keys=False),
        **skills,
    }
    if path not in contents:
        raise NotFoundError(f"candidate {candidate_id} has no file {path!r} (it has {', '.join(sorted(contents))})")
    return PlainTextResponse(contents[path])


@router.post(ROUTE + "/{job_id}/candidates/{candidate_id}:promote")
def promote_candidate(
    request: Request, job_id: str, candidate_id: str, body: OptionalJsonBody, owner: Owner
) -> JSONResponse:
    """Make the candidate the agent's next version. azd names the agent (``agent_name``,
    ``agent_version``) and is told it was promoted. The SDK sends nothing: the job's target is
    meant, and a prompt agent of the project gets the candidate's instructions, model and tools as
    its next version. An agent served elsewhere keeps the promotion on the job only."""
    store = context(request).store
    state, entry = _candidate(owner, job_id, candidate_id)
    name = body.get("agent_name") or _agent_name(state)
    if not isinstance(name, str) or not name:
        raise ConfigError("agent_name: name the agent the candidate becomes a version of")
    version = str(body.get("agent_version") or "")
    made = None if body else PromptAgent.found(functools.partial(store.find_prompt_agent, owner), name)
    if made is not None:
        config = config_from(entry["config"])
        tools = [{"type": "function", **tool} for tool in config.tools] if config.tools else made.tools
        definition = made.model_dump(exclude_none=True) | {
            "instructions": config.system_prompt(),
            "model": config.model or made.model,
            "tools": tools,
        }
        saved = store.save_prompt_agent(
            owner, name, {"definition": definition, "metadata": {"optimization_job": job_id}}
        )
        version = str(saved["version"])
    promotion = {
        "candidate_id": candidate_id,
        "agent_name": name,
        "agent_version": version,
        "status": "promoted",
        "promoted_at": int(time.time()),
    }
    state.promotions.append(promotion)
    state.save(_jobs(owner) / job_id / "state.json")
    if body:
        return JSONResponse(promotion)
    scored = _scored(state, candidate_id)
    return JSONResponse(candidate_object(state, scored, expand=True))
