"""Foundry's older RedTeam-object API (``project_client.red_teams``), served as a thin alias onto
the Evals flow: ``POST /redTeams/runs:run`` creates a red-team eval (one criterion per risk) and an
``azure_ai_red_team`` run of it; ``GET /redTeams/runs/{name}`` and the list read them back. The
target is a model assay is configured with (``modelDeploymentName``); the ``model-endpoint`` and
API-key headers are not used, so a client cannot point the server at an endpoint of its choosing."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from assay.api.context import JsonBody, Owner, context
from assay.api.ratelimit import limited
from assay.api.routes_runs import queue_run
from assay.errors import ConfigError, NotFoundError
from assay.redteam.risks import CONTENT_RISKS, RISKS, risk_category
from assay.results.criterion import Criterion
from assay.results.stored import Run

router = APIRouter()
STATUSES = {
    "queued": "NotStarted",
    "in_progress": "Running",
    "completed": "Completed",
    "failed": "Failed",
    "canceled": "Canceled",
}


def red_team_object(run: Run) -> dict[str, Any]:
    """The RedTeam object as it was posted (kept in the run's ``red_team_object`` option), as it is now."""
    posted = dict(run.options.red_team_object or {})
    properties = {**(posted.get("properties") or {}), "eval_id": run.eval_id, "run_id": run.id}
    return {**posted, "id": run.id, "status": STATUSES.get(run.status, run.status), "properties": properties}


@router.post("/redTeams/runs:run", status_code=201, dependencies=[limited("runs")])
def run_red_team(request: Request, body: JsonBody, owner: Owner) -> JSONResponse:
    ctx = context(request)
    target = body.get("target")
    if (
        not isinstance(target, dict)
        or target.get("type") != "AzureOpenAIModel"
        or not isinstance(target.get("modelDeploymentName"), str)
    ):
        raise ConfigError("target: expected {type: AzureOpenAIModel, modelDeploymentName: <a configured model>}")
    if body.get("simulationOnly"):
        raise ConfigError("simulationOnly: not supported; every attack is judged (the conversations are in the items)")
    given = body.get("riskCategories") or [RISKS[r].pascal for r in CONTENT_RISKS[:4]]
    if not isinstance(given, list):
        raise ConfigError("riskCategories: expected a list such as [Violence, HateUnfairness]")
    risks = [risk_category(r, f"riskCategories[{i}]") for i, r in enumerate(given)]
    criteria: list[Criterion] = [
        {"type": "azure_ai_evaluator", "name": r, "evaluator_name": RISKS[r].evaluator, "id": r} for r in risks
    ]
    params: dict[str, Any] = {
        "type": "red_team",
        "risk_categories": risks,
        "attack_strategies": body.get("attackStrategies") or [],
    }
    if body.get("numTurns") is not None:
        params["num_turns"] = body["numTurns"]
    data_source = {
        "type": "azure_ai_red_team",
        "item_generation_params": params,
        "target": {"type": "azure_ai_model", "model": target["modelDeploymentName"]},
    }
    name = body.get("displayName") if isinstance(body.get("displayName"), str) else None
    stored = ctx.store.create_eval(
        name=name or "red team",
        data_source_config={"type": "azure_ai_source", "scenario": "red_team"},
        testing_criteria=criteria,
        project=owner,
    )
    posted = {**body, "riskCategories": [RISKS[r].pascal for r in risks]}
    try:
        run = queue_run(ctx, owner, stored, {"data_source": data_source, "name": name}, {"red_team_object": posted})
    except Exception:
        ctx.store.delete_eval(owner, stored.id)  # nothing is left behind a refused request
        raise
    return JSONResponse(red_team_object(run), status_code=201)


@router.get("/redTeams/runs/{name}")
def get_red_team(request: Request, name: str, owner: Owner) -> dict[str, Any]:
    try:
        run = context(request).store.get_run(name)
    except NotFoundError:
        run = None
    if run is None or run.project != owner or run.options.red_team_object is None:
        raise NotFoundError(f"no red team run {name!r}")
    return red_team_object(run)


@router.get("/redTeams/runs")
def list_red_teams(request: Request, owner: Owner) -> dict[str, Any]:
    runs = context(request).store.list_runs(limit=1000, project=owner)
    return {"value": [red_team_object(r) for r in runs if r.options.red_team_object is not None], "nextLink": None}
