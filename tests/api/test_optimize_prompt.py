"""Foundry's ``prompt_optimization`` jobs through ``azure-ai-projects`` 2.10 against ``assay serve
--tls``: a prompt agent's instructions rewritten once by the optimization model as a steering prompt
asks, with no evaluation; the rewrite listed as a candidate with its instructions mutation, promoted
to the agent's next version, and estimated as one call. The scripted provider plays the model."""

from __future__ import annotations

import json

import pytest
from azure.ai.projects.models import (
    AgentOptimizationFoundryAgentTargetConfiguration,
    AgentOptimizationJob,
    AgentOptimizationModelConfiguration,
    PromptAgentDefinition,
    PromptOptimizationConfiguration,
    SteeringPromptOptimizationContext,
)
from azure.core.exceptions import HttpResponseError

from assay.llm.config import Price
from assay.optimize.estimate import estimate_rewrite
from tests.api.test_foundry_sdk import foundry_client, foundry_server
from tests.cli.test_optimize import BASELINE, RULE

STEER = "Tell customers about the 30-day refund window whenever they ask about returns."
REWRITTEN = BASELINE + RULE


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("prompt-optimization")
    rules = [{"match": "# The developer's guidance", "reply": {"content": json.dumps({"instructions": REWRITTEN})}}]
    with foundry_server(home, rules, model="judge") as served:
        yield served


@pytest.fixture
def project_client(served, monkeypatch):
    with foundry_client(served, monkeypatch) as client:
        yield client


def job(agent: str, context: list | None = None) -> dict:
    config: dict = {"type": "prompt_optimization"}
    if context is not None:
        config["context"] = context
    return {
        "display_name": f"{agent}: steer",
        "target_configuration": {"type": "foundry_agent", "name": agent},
        "optimization_model_configuration": {"model": "judge"},
        "optimization_configuration": config,
    }


def steering(prompt: str = STEER) -> list[dict]:
    return [{"type": "steering_prompt", "prompt": prompt}]


def test_a_prompt_optimization_rewrites_the_instructions_once_and_the_rewrite_becomes_a_version(project_client, served):
    made = project_client.agents.create_version(
        agent_name="desk", definition=PromptAgentDefinition(model="judge", instructions=BASELINE)
    )
    typed = AgentOptimizationJob(  # the SDK's own models, as its samples write a job
        display_name="desk: steer",
        target_configuration=AgentOptimizationFoundryAgentTargetConfiguration(name="desk"),
        optimization_model_configuration=AgentOptimizationModelConfiguration(model="judge"),
        optimization_configuration=PromptOptimizationConfiguration(
            context=[SteeringPromptOptimizationContext(prompt=STEER)]
        ),
    )
    poller = project_client.agents.begin_create_optimization_job(typed, polling_interval=0.2)
    result = poller.result(timeout=120)
    summary = result.candidate_summary
    assert result.termination_reason == "completed" and summary.completed_candidate_count == 1
    assert summary.baseline_id and summary.best_id and summary.best_id != summary.baseline_id
    assert summary.baseline_score is None and summary.best_score is None  # nothing was scored

    asked = served["provider"].stats()["last"]
    assert asked["response_format"]["type"] == "json_schema"
    prompt = json.dumps(asked["messages"])
    assert STEER in prompt and BASELINE.strip() in prompt

    job_id = poller.details["job_id"]
    stored = project_client.agents.get_optimization_job(job_id)
    assert stored.status == "succeeded" and stored.optimization_configuration.type == "prompt_optimization"
    baseline, best = project_client.agents.list_optimization_candidates(job_id, expand=["mutations"], order="asc")
    assert [baseline.candidate_id, best.candidate_id] == [summary.baseline_id, summary.best_id]
    assert baseline.output.type == best.output.type == "prompt_optimization"
    assert baseline.output.mutations == [] and baseline.evaluation is None
    (mutation,) = best.output.mutations
    assert mutation.type == "instructions" and mutation.value.rstrip().endswith(RULE)
    assert best.status == "completed" and best.evaluation is None

    promoted = project_client.agents.promote_optimization_candidate(job_id, best.candidate_id)
    next_version = str(int(made.version) + 1)
    assert promoted.promotion.promoted_agent.version == next_version
    version = project_client.agents.get_version(agent_name="desk", agent_version=next_version)
    assert version.definition["instructions"].rstrip().endswith(RULE) and version.definition["model"] == "judge"


def test_without_guidance_the_rewrite_is_asked_to_clarify(project_client, served):
    project_client.agents.create_version(
        agent_name="plain", definition=PromptAgentDefinition(model="judge", instructions=BASELINE)
    )
    served["provider"].script(
        rules=[{"match": "better organised", "reply": {"content": f"```\n{REWRITTEN}\n```"}}],
        refuse_json_schema=True,  # a server without structured output: the fenced text is read
    )
    try:
        poller = project_client.agents.begin_create_optimization_job(job("plain"), polling_interval=0.2)
        summary = poller.result(timeout=120).candidate_summary
    finally:
        served["provider"].script(
            rules=[
                {"match": "# The developer's guidance", "reply": {"content": json.dumps({"instructions": REWRITTEN})}}
            ]
        )
    best = project_client.agents.get_optimization_candidate(poller.details["job_id"], summary.best_id)
    assert best.output.mutations[0].value.rstrip().endswith(RULE)


def test_an_estimate_counts_one_optimization_call(project_client):
    project_client.agents.create_version(
        agent_name="counted", definition=PromptAgentDefinition(model="judge", instructions=BASELINE)
    )
    before = len(list(project_client.agents.list_optimization_jobs()))
    found = project_client.agents.estimate_optimization_job(job("counted", steering()))
    assert found.call_counts.optimization.as_dict() == {"low": 1, "typical": 1, "ceiling": 1}
    assert found.call_counts.agent.ceiling == 0 and found.call_counts.evaluation.ceiling == 0
    assert len(list(project_client.agents.list_optimization_jobs())) == before


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (job("refused", [{"type": "examples", "prompt": "x"}]), r"context\[0\].type: steering_prompt"),
        (job("refused", [{"type": "steering_prompt", "prompt": " "}]), r"context\[0\].prompt"),
        (job("refused", {"type": "steering_prompt"}), "context: expected a list"),
        (job("nobody", steering()), "target_configuration.name: 'nobody' is not a prompt agent"),
        ({**job("refused", steering()), "optimization_model_configuration": {}}, "optimization_model_configuration"),
    ],
)
def test_bad_prompt_optimization_requests_are_refused_naming_the_field(project_client, body, named):
    project_client.agents.create_version(
        agent_name="refused", definition=PromptAgentDefinition(model="judge", instructions=BASELINE)
    )
    with pytest.raises(HttpResponseError, match=named) as caught:
        project_client.agents.begin_create_optimization_job(body, polling_interval=0.2)
    assert caught.value.status_code == 400


def test_the_rewrite_estimate_prices_its_one_call():
    found = estimate_rewrite("x" * 400, ("be brief",), Price(input=1.0, output=2.0))
    assert found["call_counts"]["optimization"] == {"low": 1, "typical": 1, "ceiling": 1}
    # It reads about 500 + 100 (the instructions) + 2 (the guidance) tokens and writes 100 + 100.
    assert found["cost"]["by_stage"]["optimization"]["ceiling"] == pytest.approx((602 * 1.0 + 200 * 2.0) / 1e6)
    assert found["cost"]["unpriced_stages"] == ["agent", "evaluation"]
    assert "cost" not in estimate_rewrite("x", (), None)  # no price, no cost
