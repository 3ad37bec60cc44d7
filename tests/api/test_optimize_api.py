"""``/agent_optimization_jobs`` as azd's ``optimize --endpoint`` calls it (``api-version=v1``, the
``Foundry-Features: AgentsOptimization=V2Preview`` header, the request of its ``models.go``):
create, poll, list, a candidate's manifest, config and files, promote, cancel; and a request
without the reflection model is refused naming the field."""

from __future__ import annotations

import httpx2 as httpx
import pytest

from tests.cli.test_optimize import BASELINE, GAIN, RULE, rules
from tests.support.fixtures import poll

HEADERS = {"Foundry-Features": "AgentsOptimization=V2Preview"}
PARAMS = {"api-version": "v1"}


def body(**options):
    items = [
        {
            "name": f"refund_{i}",
            "query": f"Can I still return the item from my order {4000 + i}?",
            "criteria": [{"name": "mentions_30_days", "instruction": "Response must mention the 30-day refund window"}],
        }
        for i in range(1, 9)
    ]
    return {
        "agent": {"agent_name": "shop", "agent_version": "3"},
        "train_dataset": {"type": "inline", "items": items[:5]},
        "validation_dataset": {"type": "inline", "items": items[5:]},
        "evaluators": [{"name": "builtin.task_adherence", "version": "1"}],
        "options": {
            "max_candidates": 1,
            "eval_model": "judge",
            "optimization_model": "judge",
            "max_stalls": 2,
            "optimization_config": {"model": "judge", "system_prompt": BASELINE},
            **options,
        },
    }


@pytest.fixture
def api(served, llm, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path))
    llm.script(rules=rules(BASELINE + RULE), default={"content": "Sure, you can return it."})
    with httpx.Client(
        base_url=f"{served.url}/api/projects/default", headers=HEADERS, params=PARAMS, timeout=30
    ) as client:
        yield client


def test_an_azd_job_runs_and_its_best_candidate_is_served(api):
    created = api.post("/agent_optimization_jobs", json=body())
    assert created.status_code == 201, created.text
    job = created.json()
    assert job["id"].startswith("optjob_") and job["status"] in ("queued", "in_progress")
    job = poll(
        lambda: api.get(f"/agent_optimization_jobs/{job['id']}").json(),
        lambda j: j["status"] not in ("queued", "in_progress"),
        seconds=120,
    )
    assert job["status"] == "succeeded", job
    assert job["progress"]["candidates_completed"] == 1 and job["stop_reason"] == "max_candidates"
    assert job["progress"]["best_score"] == pytest.approx(1.0) and job["progress"]["baseline_score"] == pytest.approx(
        0.5
    )
    best = job["result"]["best"]
    assert job["result"]["gain"] == pytest.approx(GAIN) and best["mutations"] == ["system_prompt"]
    assert best["eval_run_id"].startswith("evalrun_")
    listed = api.get("/agent_optimization_jobs", params={**PARAMS, "limit": 20, "status": "succeeded"}).json()
    assert [j["id"] for j in listed["data"]] == [job["id"]]

    cid = best["candidate_id"]
    manifest = api.get(f"/agent_optimization_jobs/{job['id']}/candidates/{cid}").json()
    assert {f["path"] for f in manifest["files"]} == {"instructions.md", "metadata.yaml"}
    config = api.get(f"/agent_optimization_jobs/{job['id']}/candidates/{cid}/config").json()
    assert config["system_prompt"].rstrip().endswith(RULE) and config["model"] == "judge"
    # What Foundry's load_config() reads: instructions, tools as function definitions, skills.
    assert config["instructions"] == config["system_prompt"] and config["candidate_id"] == cid
    text = api.get(
        f"/agent_optimization_jobs/{job['id']}/candidates/{cid}/files", params={**PARAMS, "path": "instructions.md"}
    )
    assert text.status_code == 200 and text.text == config["system_prompt"]
    promoted = api.post(
        f"/agent_optimization_jobs/{job['id']}/candidates/{cid}:promote",
        json={"agent_name": "shop", "agent_version": "4"},
    )
    assert promoted.status_code == 200 and promoted.json()["status"] == "promoted"
    canceled = api.post(f"/agent_optimization_jobs/{job['id']}:cancel")
    assert canceled.status_code == 200 and canceled.json()["status"] == "succeeded"  # it had finished
    missing = api.get(f"/agent_optimization_jobs/{job['id']}/candidates/cand_00000000")
    assert missing.status_code == 404


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"options": {"eval_model": "judge"}}, "options.optimization_model"),
        ({"train_dataset": {"type": "inline", "items": []}}, "train_dataset.items"),
        ({"evaluators": []}, "evaluators: name at least one"),
    ],
)
def test_bad_job_requests_are_refused_naming_the_field(api, change, message):
    refused = api.post("/agent_optimization_jobs", json={**body(), **change})
    assert refused.status_code == 400 and message in refused.json()["error"]["message"]
