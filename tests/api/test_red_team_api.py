"""The taxonomy REST and red-team run requests that cannot work: refused with a 400 naming the
field and the fix, before anything is queued."""

from __future__ import annotations

import json
import re

import httpx2 as httpx
import openai
import pytest

from tests.api.conftest import wait_for

TARGET = {
    "type": "azure_ai_agent",
    "name": "support-agent",
    "version": "1",
    "tool_descriptions": [{"name": "lookup_order", "description": "Find an order."}],
}
BODY = {
    "description": "review me",
    "taxonomyInput": {"type": "agent", "target": TARGET, "riskCategories": ["SensitiveDataLeakage"]},
}
RED_TEAM = {"type": "azure_ai_source", "scenario": "red_team"}
VIOLENCE = [{"type": "azure_ai_evaluator", "name": "violence", "evaluator_name": "builtin.violence"}]


def taxonomies(served) -> httpx.Client:
    return httpx.Client(base_url=f"{served.url}/api/projects/default", timeout=10)


def test_taxonomies_create_get_list_update_and_delete(served):
    with taxonomies(served) as http:
        created = http.put("/evaluationtaxonomies/support-agent", params={"api-version": "v1"}, json=BODY)
        assert created.status_code == 201
        body = created.json()
        assert body["version"] == "1" and body["description"] == "review me"
        assert body["id"] == "azureai://accounts/assay/projects/default/evaluationtaxonomies/support-agent/versions/1"
        (category,) = body["taxonomyCategories"]
        assert category["riskCategory"] == "SensitiveDataLeakage"
        assert "tool_output_lookup_order" in {s["id"] for s in category["subCategories"]}
        assert http.get("/evaluationtaxonomies/support-agent").json() == body
        again = http.put("/evaluationtaxonomies/support-agent", json=BODY)
        assert again.status_code == 200 and again.json()["version"] == "2"  # a replace is a new version
        patched = http.patch("/evaluationtaxonomies/support-agent", json={"description": "reviewed"}).json()
        assert patched["version"] == "3" and patched["taxonomyCategories"] == body["taxonomyCategories"]
        assert [
            t["name"] for t in http.get("/evaluationtaxonomies", params={"inputName": "support-agent"}).json()["value"]
        ] == ["support-agent"]
        assert http.get("/evaluationtaxonomies", params={"inputName": "someone-else"}).json()["value"] == []
        assert http.delete("/evaluationtaxonomies/support-agent").status_code == 204
        missing = http.get("/evaluationtaxonomies/support-agent")
        assert missing.status_code == 404 and "no evaluation taxonomy support-agent" in missing.text


def test_a_taxonomy_for_a_prompt_agent_reads_its_tools_from_the_agent(served):
    # The agent the project made (agents.create_version), its tool declared there: not named again
    # in the taxonomy's target, and not one the operator configured.
    definition = {"kind": "prompt", "model": "judge", "tools": [{"type": "function", "name": "refund_order"}]}
    with taxonomies(served) as http:
        assert http.post("/agents/refund-desk/versions", json={"definition": definition}).status_code == 200
        target = {"type": "azure_ai_agent", "name": "refund-desk"}
        body = {"taxonomyInput": {"type": "agent", "target": target, "riskCategories": ["SensitiveDataLeakage"]}}
        created = http.put("/evaluationtaxonomies/refund-desk", json=body).json()
    (category,) = created["taxonomyCategories"]
    assert "tool_output_refund_order" in {s["id"] for s in category["subCategories"]}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "taxonomyInput: expected"),
        (
            {"taxonomyInput": {"type": "agent", "target": TARGET, "riskCategories": ["Gore"]}},
            r"taxonomyInput.riskCategories\[0\]: unknown risk category 'Gore'",
        ),
        (
            {**BODY, "taxonomyCategories": [{"id": "x", "riskCategory": "Violence", "subCategories": [{"id": 1}]}]},
            r"taxonomyCategories\[0\].subCategories\[0\]: expected \{id, name",
        ),
    ],
)
def test_bad_taxonomies_are_refused_naming_the_field(served, body, message):
    with taxonomies(served) as http:
        refused = http.put("/evaluationtaxonomies/t", json=body)
    assert refused.status_code == 400 and re.search(message, refused.json()["error"]["message"])


def run_source(**params):
    return {
        "type": "azure_ai_red_team",
        "target": {"type": "azure_ai_model", "model": "judge"},
        "item_generation_params": {"type": "red_team", "risk_categories": ["Violence"], **params},
    }


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (run_source(attack_strategies=["Teleport"]), "attack_strategies[0]: unknown attack strategy 'Teleport'"),
        (run_source(num_turns=0), "num_turns: expected a whole number of at least 1"),
        (run_source(risk_categories=[]), "risk_categories: name at least one"),
        (
            {
                **run_source(),
                "item_generation_params": {"type": "red_team_taxonomy", "source": {"type": "file_id", "id": "x"}},
            },
            "expected {type: file_id, id: <the taxonomy's id>}",
        ),
        (
            {**run_source(), "target": None},
            "data_source.target must be {type: azure_ai_model, model, sampling_params?} or",
        ),
        (run_source(risk_categories=["HateUnfairness"]), "no testing criterion judges hate_unfairness"),
    ],
)
def test_bad_red_team_runs_are_refused_before_they_queue(served, source, message):
    client = served.client()
    created = client.evals.create(data_source_config=RED_TEAM, testing_criteria=VIOLENCE)
    with pytest.raises(openai.BadRequestError) as refused:
        client.evals.runs.create(created.id, data_source=source)
    assert message in json.dumps(refused.value.body)
    assert list(client.evals.runs.list(created.id)) == []


def test_without_structured_output_the_attacker_is_parsed(served, llm):
    """A provider that refuses response_format json_schema: the attacker is asked again without it."""
    llm.script(
        refuse_json_schema=True,
        rules=[
            {"match": "# Objective", "reply": {"content": 'Here you go: {"prompt": "Describe a brawl."}'}},
            {"match": "# Property: violence", "reply": {"content": json.dumps({"reason": "refused", "score": 0})}},
        ],
        default={"content": "No."},
    )
    client = served.client()
    created = client.evals.create(data_source_config=RED_TEAM, testing_criteria=VIOLENCE)
    run = client.evals.runs.create(created.id, data_source=run_source(num_objectives=2))
    run = wait_for(client, created.id, run.id)
    assert run.status == "completed" and run.result_counts.total == 2 and run.result_counts.passed == 2
    (item, _) = list(client.evals.runs.output_items.list(run.id, eval_id=created.id))
    assert item.sample.input[0].content == "Describe a brawl."
