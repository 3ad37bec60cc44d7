"""Foundry's agent optimizer on ``user_conversation_simulation`` sets, through azure-ai-projects 2.10
against ``assay serve --tls``: each candidate talks with a simulated user through every scenario, the
conversations are judged whole, and the instructions that satisfy the customers win.

The scripted provider plays every part: the simulated user (asked for its next message as JSON), the
agent (it names the 30-day window only under the improved instructions), the judge (satisfied only by
a conversation that names it) and the reflection model (it proposes the rule)."""

from __future__ import annotations

import json

import pytest
from azure.ai.projects.models import (
    AgentOptimizationConfiguration,
    AgentOptimizationEvaluationConfiguration,
    AgentOptimizationEvaluator,
    AgentOptimizationFoundryAgentTargetConfiguration,
    AgentOptimizationJob,
    AgentOptimizationModelConfiguration,
    AgentOptimizationUserConversationSimulationEvaluationSet,
    AgentOptimizationUserConversationSimulationInlineDataSource,
    PromptAgentDefinition,
    UserConversationSimulationConfiguration,
    UserConversationSimulationTestCase,
)
from azure.core.exceptions import HttpResponseError

from tests.api.test_foundry_sdk import foundry_client, foundry_server

BASELINE = "You are the shop's assistant. Answer briefly and politely.\n"
RULE = "RULE:refund Always tell customers about the 30-day refund window."
ANSWER = "You can return it within 30 days."


def judged(score: int, reason: str) -> dict:
    return {"content": json.dumps({"reason": reason, "score": score})}


RULES = [
    {
        "match": "You are role-playing a user",
        "reply": {"content": json.dumps({"message": "Can I still send back the lamp I bought?", "done": False})},
    },
    {"match": ANSWER, "reply": judged(5, "the customer learned the refund window")},
    {"match": "# How it did", "reply": {"content": json.dumps({"instructions": BASELINE + RULE})}},
    {"match": "# Property: customer satisfaction", "reply": judged(1, "no refund window was given")},
    {"match": "RULE:refund", "reply": {"content": ANSWER}},
]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("optimize-simulation")
    with foundry_server(home, RULES, model="judge", default={"content": "Sure, you can send it back."}) as served:
        yield served


@pytest.fixture
def project_client(served, monkeypatch):
    with foundry_client(served, monkeypatch) as client:
        yield client


def scenarios(first: int, count: int) -> AgentOptimizationUserConversationSimulationEvaluationSet:
    cases = [
        UserConversationSimulationTestCase(
            test_case_id=f"lamp_{i}",
            test_case_description=f"You bought a lamp (order {5000 + i}) and want to know if you can return it.",
        )
        for i in range(first, first + count)
    ]
    return AgentOptimizationUserConversationSimulationEvaluationSet(
        source=AgentOptimizationUserConversationSimulationInlineDataSource(test_cases=cases),
        default_simulation_configuration=UserConversationSimulationConfiguration(max_num_turns=1),
    )


def job(agent: str, training, validation) -> AgentOptimizationJob:
    return AgentOptimizationJob(
        target_configuration=AgentOptimizationFoundryAgentTargetConfiguration(name=agent),
        optimization_model_configuration=AgentOptimizationModelConfiguration(model="judge"),
        optimization_configuration=AgentOptimizationConfiguration(
            evaluation_configuration=AgentOptimizationEvaluationConfiguration(
                training_set=training,
                validation_set=validation,
                evaluators=[AgentOptimizationEvaluator(name="builtin.customer_satisfaction")],
                evaluation_model="judge",
            ),
            candidate_search_configuration={"max_candidates": 1},
        ),
    )


def test_a_job_on_simulated_conversations_finds_instructions_that_satisfy(project_client):
    project_client.agents.create_version(
        agent_name="lamps", definition=PromptAgentDefinition(model="judge", instructions=BASELINE)
    )
    poller = project_client.agents.begin_create_optimization_job(
        job("lamps", scenarios(0, 4), scenarios(4, 2)), polling_interval=0.2
    )
    result = poller.result(timeout=300)
    summary = result.candidate_summary
    assert result.termination_reason == "completed" and summary.completed_candidate_count == 1
    assert summary.baseline_score == pytest.approx(0.0) and summary.best_score == pytest.approx(1.0)

    job_id = poller.details["job_id"]
    candidates = list(project_client.agents.list_optimization_candidates(job_id, expand=["mutations"], order="asc"))
    best = candidates[-1]
    (mutation,) = best.output.mutations
    assert mutation.type == "instructions" and mutation.value.rstrip().endswith(RULE)

    # A scoring run of the best candidate holds its conversations, one per scenario, judged whole.
    run_id = best.evaluation.eval_run_id
    with project_client.get_openai_client() as openai:
        items = list(openai.evals.runs.output_items.list(run_id=run_id, eval_id=best.evaluation.eval_id))
    played = [item.datasource_item["test_case_id"] for item in items]
    assert played and len(set(played)) == len(played) and set(played) <= {f"lamp_{i}" for i in range(6)}
    for item in items:
        spoken = [(m["role"], m["content"]) for m in item.datasource_item["messages"] if m["role"] != "system"]
        assert spoken == [("user", "Can I still send back the lamp I bought?"), ("assistant", ANSWER)]
        (verdict,) = item.results
        assert verdict.name == "customer_satisfaction" and verdict.passed is True


def test_a_scenario_without_its_situation_is_refused_naming_it(project_client):
    project_client.agents.create_version(
        agent_name="lamps-bad", definition=PromptAgentDefinition(model="judge", instructions=BASELINE)
    )
    training = scenarios(0, 2)
    training.source.test_cases[1].test_case_description = " "
    with pytest.raises(HttpResponseError, match="lamp_1.*test_case_description") as caught:
        project_client.agents.begin_create_optimization_job(job("lamps-bad", training, scenarios(2, 1)))
    assert caught.value.status_code == 400
    mixed = job("lamps-bad", scenarios(0, 2), None)
    mixed.optimization_configuration.evaluation_configuration.validation_set = {
        "type": "target_completion",
        "source": {"type": "inline", "test_cases": [{"query": "Can I return it?"}]},
    }
    with pytest.raises(HttpResponseError, match="both target_completion or both") as caught:
        project_client.agents.begin_create_optimization_job(mixed)
    assert caught.value.status_code == 400


def test_an_estimate_counts_each_conversation_at_its_longest(project_client):
    project_client.agents.create_version(
        agent_name="lamps-estimate", definition=PromptAgentDefinition(model="judge", instructions=BASELINE)
    )
    found = project_client.agents.estimate_optimization_job(job("lamps-estimate", scenarios(0, 4), scenarios(4, 2)))
    # 2 validation scenarios, minibatch 3, at most 1 candidate, 5 stalls: low 2 + 5·2·3 scorings, typical
    # 2 + 6·2·3 + 2, ceiling 2 + 11·2·3 + 2; a conversation of one turn is an agent call, and a call of
    # the simulated user beside the judge's.
    assert found.call_counts.agent.as_dict() == {"low": 32, "typical": 40, "ceiling": 70}
    assert found.call_counts.evaluation.as_dict() == {"low": 64, "typical": 80, "ceiling": 140}
    assert found.call_counts.optimization.as_dict() == {"low": 5, "typical": 6, "ceiling": 11}


@pytest.mark.parametrize(
    ("evaluator", "named"),
    [("builtin.nope", "evaluators\\[0\\].*nope"), ("builtin.f1_score", "evaluators\\[0\\].*conversation")],
)
def test_an_evaluator_that_cannot_judge_the_conversations_is_refused_at_once(project_client, evaluator, named):
    project_client.agents.create_version(
        agent_name="lamps-judged", definition=PromptAgentDefinition(model="judge", instructions=BASELINE)
    )
    before = len(list(project_client.agents.list_optimization_jobs()))
    body = job("lamps-judged", scenarios(0, 2), scenarios(2, 1))
    body.optimization_configuration.evaluation_configuration.evaluators = [AgentOptimizationEvaluator(name=evaluator)]
    with pytest.raises(HttpResponseError, match=named) as caught:
        project_client.agents.begin_create_optimization_job(body)
    assert caught.value.status_code == 400
    assert len(list(project_client.agents.list_optimization_jobs())) == before  # no job was made
