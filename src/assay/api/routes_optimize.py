"""Foundry's ``/agent_optimization_jobs`` (azd's ``optimize --endpoint``, Microsoft's
``load_config()`` resolver): create a job, read it, list, cancel; a candidate's manifest, its
config and files; promote one. A job runs on the server in a thread of its own, as ``assay
optimize`` runs it, its state under ``$ASSAY_HOME/optimize/<project>/<job>/``."""

from __future__ import annotations

import dataclasses
import json
import threading
import uuid
from pathlib import Path
from typing import Any

import yaml
from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from assay.agentconfig import AgentDefinition
from assay.api.context import JsonBody, Owner, context
from assay.errors import ConfigError, NotFoundError
from assay.llm import ModelRegistry
from assay.optimize.candidate import config_from, foundry_config
from assay.optimize.jobs import job_object, job_request
from assay.optimize.search import Optimizer, Settings, State
from assay.run.runner import EvalDefinition
from assay.settings import settings
from assay.targets.agents import find_agent

router = APIRouter()
ROUTE = "/agent_optimization_jobs"


def _jobs(project: str) -> Path:
    return settings().home / "optimize" / project


def _state(project: str, job_id: str) -> State:
    path = _jobs(project) / job_id / "state.json"
    if not path.is_file():
        raise NotFoundError(f"no optimization job {job_id!r}")
    return State.load(path)


@router.post(ROUTE, status_code=201)
def create_job(request: Request, body: JsonBody, owner: Owner) -> dict[str, Any]:
    ctx = context(request)
    resolved = job_request(body, ctx.store, owner)
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
    baseline: AgentDefinition = resolved["baseline"]
    served = [a for a in models.agents if a.name == baseline.name]
    version = str(body["agent"].get("agent_version") or "") or None
    if served:  # an agent the operator serves: candidates are scored by calling it with their configuration
        find_agent(served, str(baseline.name), version)
        settings.hosted_agent = {"name": baseline.name, "version": version}
    elif baseline.model is None:
        baseline = dataclasses.replace(baseline, model=registry.default)
    state = State(
        id=f"optjob_{uuid.uuid4().hex[:12]}", settings=dataclasses.asdict(settings), status="queued", project=owner
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
    threading.Thread(target=_run, args=(optimizer,), name=f"assay-{state.id}", daemon=True).start()
    return job_object(state)


def _run(optimizer: Optimizer) -> None:
    state = optimizer.state
    state.status = "in_progress"
    state.save(optimizer.state_path)
    try:
        optimizer.run()
    except Exception as exc:  # noqa: BLE001 - the job records why it failed; the server goes on
        state.status, state.error = "failed", {"code": type(exc).__name__, "message": str(exc)}
        state.save(optimizer.state_path)


@router.get(ROUTE)
def list_jobs(
    request: Request, owner: Owner, limit: int = Query(20, ge=1, le=100), status: str | None = None
) -> dict[str, Any]:
    paths = sorted(_jobs(owner).glob("*/state.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    jobs = [job_object(State.load(p)) for p in paths]
    jobs = [j for j in jobs if status is None or j["status"] == status][:limit]
    return {"object": "list", "data": jobs, "value": jobs, "has_more": False}


@router.get(ROUTE + "/{job_id}")
def get_job(request: Request, job_id: str, owner: Owner) -> dict[str, Any]:
    return job_object(_state(owner, job_id))


@router.post(ROUTE + "/{job_id}:cancel")
def cancel_job(request: Request, job_id: str, owner: Owner) -> dict[str, Any]:
    state = _state(owner, job_id)
    if state.status in ("queued", "in_progress"):
        (_jobs(owner) / job_id / "cancel").touch()  # the search stops after its current step
    return job_object(state)


def _candidate(owner: str, job_id: str, candidate_id: str) -> tuple[State, dict[str, Any]]:
    state = _state(owner, job_id)
    if candidate_id not in state.candidates:
        raise NotFoundError(f"job {job_id} has no candidate {candidate_id!r}")
    return state, state.candidates[candidate_id]


FILES = {"instructions.md": "instructions", "tools.json": "tools", "metadata.yaml": "metadata"}


@router.get(ROUTE + "/{job_id}/candidates/{candidate_id}")
def get_candidate(request: Request, job_id: str, candidate_id: str, owner: Owner) -> dict[str, Any]:
    _, entry = _candidate(owner, job_id, candidate_id)
    files = [
        {"path": path, "type": kind} for path, kind in FILES.items() if path != "tools.json" or entry["config"]["tools"]
    ]
    files += [{"path": f"skills/{s['name']}/SKILL.md", "type": "skill"} for s in entry["config"]["skills"]]
    scores = {name: task["score"] for name, task in entry["tasks"].items()}
    return {
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
def promote_candidate(request: Request, job_id: str, candidate_id: str, body: JsonBody, owner: Owner) -> JSONResponse:
    state, _ = _candidate(owner, job_id, candidate_id)
    if not isinstance(body.get("agent_name"), str):
        raise ConfigError("agent_name: name the agent the candidate becomes a version of")
    promotion = {
        "candidate_id": candidate_id,
        "agent_name": body["agent_name"],
        "agent_version": str(body.get("agent_version") or ""),
        "status": "promoted",
    }
    state.promotions.append(promotion)
    state.save(_jobs(owner) / job_id / "state.json")
    return JSONResponse(promotion)
