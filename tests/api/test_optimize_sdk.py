"""Foundry's agent optimizer through ``azure-ai-projects`` 2.10 against ``assay serve --tls``: a prompt
agent made with ``agents.create_version``, ``agents.begin_create_optimization_job`` on its test cases
(the poller follows the job to its end), its candidates listed with what each changed, the best one
promoted to the agent's next version, and the job deleted. The scripted provider plays the agent (it
answers with the 30-day window only under the improved instructions) and the reflection model."""

from __future__ import annotations

import pytest
from azure.ai.projects.models import PromptAgentDefinition
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from assay.llm.config import Price
from assay.optimize.estimate import estimate
from assay.optimize.search import Settings
from tests.api.test_foundry_sdk import foundry_client, foundry_server
from tests.cli.test_optimize import BASELINE, RULE, rules

ANSWER = "You can return it within 30 days."
CASES = [{"query": f"Can I still return the item from my order {4000 + i}?", "ground_truth": ANSWER} for i in range(8)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("optimize")
    default = {"content": "Sure, you can return it."}
    with foundry_server(home, rules(BASELINE + RULE), model="judge", default=default) as served:
        yield served


@pytest.fixture
def project_client(served, monkeypatch):
    with foundry_client(served, monkeypatch) as client:
        yield client


def job(agent: str = "shop", **change) -> dict:
    body = {
        "display_name": f"{agent}: refunds",
        "target_configuration": {"type": "foundry_agent", "name": agent},
        "optimization_model_configuration": {"model": "judge"},
        "optimization_configuration": {
            "type": "agent_optimization",
            "goal": "improve_quality",
            "evaluation_configuration": {
                "training_set": {"type": "target_completion", "source": {"type": "inline", "test_cases": CASES[:5]}},
                "validation_set": {"type": "target_completion", "source": {"type": "inline", "test_cases": CASES[5:]}},
                "evaluators": [{"name": "builtin.f1_score"}],
                "evaluation_model": "judge",
            },
            "candidate_search_configuration": {"max_candidates": 1},
        },
    }
    return body | change


def test_an_sdk_job_improves_a_prompt_agent_and_its_best_candidate_becomes_a_version(project_client):
    project_client.agents.create_version(
        agent_name="shop", definition=PromptAgentDefinition(model="judge", instructions=BASELINE)
    )
    poller = project_client.agents.begin_create_optimization_job(job(), polling_interval=0.2)
    result = poller.result(timeout=300)
    summary = result.candidate_summary
    assert summary.completed_candidate_count == 1 and result.termination_reason == "completed"
    assert summary.best_score == pytest.approx(1.0) and summary.baseline_score < summary.best_score
    assert summary.baseline_id != summary.best_id

    job_id = poller.details["job_id"]
    stored = project_client.agents.get_optimization_job(job_id)
    assert stored.status == "succeeded" and stored.display_name == "shop: refunds"
    assert stored.target_configuration.name == "shop" and stored.created_at is not None

    candidates = list(project_client.agents.list_optimization_candidates(job_id, expand=["mutations"], order="asc"))
    assert [c.candidate_id for c in candidates] == [summary.baseline_id, summary.best_id]
    best = candidates[1]
    (mutation,) = best.output.mutations
    assert mutation.type == "instructions" and mutation.value.rstrip().endswith(RULE)
    assert best.evaluation.score == pytest.approx(1.0) and best.evaluation.eval_run_id.startswith("evalrun_")
    plain = list(project_client.agents.list_optimization_candidates(job_id))
    assert all(m.get("value") is None for c in plain for m in c.output.mutations)

    promoted = project_client.agents.promote_optimization_candidate(job_id, best.candidate_id)
    assert promoted.promotion.promoted_agent.name == "shop" and promoted.promotion.promoted_agent.version == "2"
    version = project_client.agents.get_version(agent_name="shop", agent_version="2")
    assert version.definition["instructions"].rstrip().endswith(RULE) and version.definition["model"] == "judge"
    again = project_client.agents.get_optimization_job(job_id)
    assert again.result.candidate_summary.latest_promoted_candidate == best.candidate_id

    project_client.agents.delete_optimization_job(job_id)
    with pytest.raises(ResourceNotFoundError):
        project_client.agents.get_optimization_job(job_id)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"optimization_model_configuration": {}}, "optimization_model_configuration.model"),
        ({"target_configuration": {"type": "foundry_agent", "name": "nobody"}}, "baseline_agent_configuration"),
        ({"optimization_configuration": {"type": "fine_tuning"}}, "agent_optimization or prompt_optimization"),
    ],
)
def test_bad_sdk_requests_are_refused_naming_the_field(project_client, change, named):
    body = job(**change)
    if "nobody" not in str(change):  # a baseline given, so no stored agent is needed
        config = body["optimization_configuration"]
        config["baseline_agent_configuration"] = {"system_prompt": BASELINE, "current_model": "judge"}
    with pytest.raises(HttpResponseError, match=named) as caught:
        project_client.agents.begin_create_optimization_job(body, polling_interval=0.2)
    assert caught.value.status_code == 400


def test_an_estimate_counts_the_calls_of_each_band_and_calls_nothing(project_client, served):
    project_client.agents.create_version(
        agent_name="kiosk", definition=PromptAgentDefinition(model="judge", instructions=BASELINE)
    )
    before = len(list(project_client.agents.list_optimization_jobs()))
    inputs = {key: value for key, value in job("kiosk").items() if key != "display_name"}
    found = project_client.agents.estimate_optimization_job(inputs)
    # 5 train and 3 validation cases, minibatch 3, 3 trials a scoring, at most 1 candidate, 5 stalls:
    # low 5 iterations (3 + 5·2·3 scorings), typical 6 and one accepted (3 + 36 + 3), ceiling 11 (3 + 66 + 3).
    assert found.call_counts.agent.as_dict() == {"low": 99, "typical": 126, "ceiling": 216}
    assert found.call_counts.optimization.as_dict() == {"low": 5, "typical": 6, "ceiling": 11}
    assert found.call_counts.evaluation.ceiling == 0  # F1 calls no model
    assert found.cost is None  # no model here has a price
    assert len(list(project_client.agents.list_optimization_jobs())) == before


def test_the_estimate_prices_each_stage_that_has_a_price():
    tasks = [{"name": f"t{i}", "query": "x" * 400} for i in range(4)]
    settings = Settings(optimization_model="o", max_candidates=1, max_stalls=1, task_repeats=1)
    prices = {"agent": Price(input=1.0, output=2.0), "evaluation": None, "optimization": Price(input=1.0, output=1.0)}
    found = estimate(tasks, tasks[:2], settings, judges=2, instructions="y" * 400, prices=prices)
    # Minibatch 3 of 4 train tasks, 2 validation: low 2 + 1·2·3, typical 2 + 2·2·3 + 2, ceiling 2 + 3·2·3 + 2.
    # An agent call reads 100 + 100 tokens and writes 150: $0.0005.
    assert found["call_counts"]["agent"] == {"low": 8.0, "typical": 16.0, "ceiling": 22.0}
    assert found["call_counts"]["evaluation"]["ceiling"] == 44.0  # two judges a trial
    assert found["cost"]["by_stage"]["agent"]["low"] == pytest.approx(8 * 0.0005)
    assert found["cost"]["unpriced_stages"] == ["evaluation"]
    total = found["cost"]["total"]["ceiling"]
    assert total == pytest.approx(sum(stage["ceiling"] for stage in found["cost"]["by_stage"].values()), abs=1e-4)
