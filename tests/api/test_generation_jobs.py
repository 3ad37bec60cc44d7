"""Foundry's generation jobs through ``azure-ai-projects`` 2.10 against ``assay serve --tls``:
``datasets.begin_create_generation_job`` writes an evaluation dataset (from a prompt, a prompt agent,
or what users asked the agent in its OpenTelemetry traces) and ``evaluators.begin_create_generation_job``
a rubric evaluator. The SDK's pollers follow ``Operation-Location`` to the stored job."""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import sys
import time
import urllib.request

import pytest
from azure.ai.projects.models import PromptAgentDefinition
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from assay.api.context import ApiContext
from assay.api.jobs import cancel, reap, run_job
from assay.evaluators.catalog import load_catalog
from assay.llm import ModelRegistry
from assay.run.runner import local_worker
from assay.store import Store
from assay.store.base import LOCAL_PREFIX
from tests.api.test_foundry_sdk import foundry_client, foundry_server
from tests.support.fixtures import poll
from tests.support.otel import export_agent_turns

QUERIES = ["Where is my refund for order 1042?", "Can I return a cracked kettle?", "How long do refunds take?"]
DIMENSIONS = [
    {"id": "Looks Orders Up", "description": "Looks the order up before answering.", "weight": 8},
    {"id": "brief", "description": "Answers in two sentences or fewer.", "weight": 4},
]
RULES = [
    {
        "match": "You write test queries",
        "reply": {"content": json.dumps({"queries": [{"query": q, "ground_truth": ""} for q in QUERIES]})},
    },
    {"match": "Write a rubric", "reply": {"content": json.dumps({"dimensions": DIMENSIONS})}},
]
INSTRUCTIONS = "You are Ava of the refund desk. Look every order up with lookup_order before you answer; be brief."
TRACED = ["My parcel never came, what now?", "I was charged twice for order 77", "Cancel my order please"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with foundry_server(tmp_path_factory.mktemp("generation"), RULES, model="writer") as served:
        yield served


@pytest.fixture
def project_client(served, monkeypatch):
    with foundry_client(served, monkeypatch) as client:
        yield client


def _rows(project_client, name: str, version: str) -> list[dict]:
    found = project_client.datasets.get(name=name, version=version)
    with project_client.get_openai_client() as client:
        content = client.files.content(found.data_uri)  # a generated dataset is a file of the project
        return [json.loads(line) for line in content.text.splitlines()]


def test_a_data_generation_job_writes_a_dataset_from_a_prompt(project_client):
    poller = project_client.datasets.begin_create_generation_job(
        {
            "name": "refund-questions",
            "scenario": "evaluation",
            "sources": [{"type": "prompt", "prompt": "Questions customers ask a refund desk."}],
            "generation_configuration": {"type": "simple_qna", "max_samples": 3, "model_options": {"model": "writer"}},
            "output_configuration": {"name": "refund-qna", "description": "made by a job", "tags": {"team": "x"}},
        },
        polling_interval=0,
    )
    result = poller.result()
    assert result.generated_samples == 3
    (output,) = result.outputs
    assert (output.type, output.name, output.version) == ("dataset", "refund-qna", "1")
    assert output.id == "azureai://accounts/assay/projects/p/data/refund-qna/versions/1"
    assert output.description == "made by a job" and output.tags == {"team": "x"}
    assert [row["query"] for row in _rows(project_client, "refund-qna", "1")] == QUERIES

    job = project_client.datasets.get_generation_job(poller.details["job_id"])
    assert (job.status, job.name, job.scenario) == ("succeeded", "refund-questions", "evaluation")
    assert job.created_at is not None and job.finished_at is not None
    listed = [j.id for j in project_client.datasets.list_generation_jobs(limit=1)]  # a page each, newest first
    assert job.id in listed and len(listed) == len(set(listed))


def test_a_data_generation_job_writes_from_a_prompt_agent_and_azds_shape_is_taken(project_client, served):
    project_client.agents.create_version(
        agent_name="ava", definition=PromptAgentDefinition(model="writer", instructions=INSTRUCTIONS)
    )
    body = {
        "inputs": {  # as azd's `eval generate` sends it
            "name": "ava-smoke",
            "scenario": "evaluation",
            "options": {"type": "simple_qna", "max_samples": 2, "model_options": {"model": "writer"}},
            "sources": [{"type": "agent", "agent_name": "ava"}],
        }
    }
    request = urllib.request.Request(
        f"{served['endpoint']}/data_generation_jobs?api-version=v1",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {served['key']}", "Content-Type": "application/json"},
        method="POST",
    )
    trusted = ssl.create_default_context(cafile=str(served["cert"]))
    with urllib.request.urlopen(request, context=trusted, timeout=30) as reply:
        assert reply.status == 201
        job = json.loads(reply.read())
        location = reply.headers["Operation-Location"]
    assert job["status"] == "queued" and location.split("?")[0].endswith(f"/data_generation_jobs/{job['id']}")

    def read() -> dict:  # as azd polls: the job, until it has ended
        asked = urllib.request.Request(location, headers={"Authorization": f"Bearer {served['key']}"})
        with urllib.request.urlopen(asked, context=trusted, timeout=30) as reply:
            return json.loads(reply.read())

    job = poll(read, lambda job: job["status"] in ("succeeded", "failed"), seconds=30)
    assert job["status"] == "succeeded", job
    assert (job["result"]["outputs"][0]["name"], job["result"]["generated_samples"]) == ("ava-smoke", 2)
    assert [r["query"] for r in _rows(project_client, "ava-smoke", "1")] == QUERIES[:2]


def test_a_traces_job_keeps_what_users_asked_the_agent(project_client, served):
    asked = [*TRACED, TRACED[0]]  # asked twice: kept once
    export_agent_turns(served["endpoint"], "desk", [(q, "ok") for q in asked], key=served["key"], cert=served["cert"])

    poller = project_client.datasets.begin_create_generation_job(
        {
            "name": "desk-traffic",
            "scenario": "evaluation",
            "sources": [{"type": "traces", "agent_name": "desk", "start_time": int(time.time()) - 3600}],
            "generation_configuration": {"type": "traces", "max_samples": 10},
        },
        polling_interval=0,
    )
    result = poller.result()
    assert result.generated_samples == 3
    assert [r["query"] for r in _rows(project_client, "desk-traffic", "1")] == TRACED

    # A window with no traffic: the job fails, saying why, and the poller raises.
    empty = project_client.datasets.begin_create_generation_job(
        {
            "name": "nothing",
            "scenario": "evaluation",
            "sources": [{"type": "traces", "agent_name": "desk", "start_time": 1, "end_time": 2}],
            "generation_configuration": {"type": "traces"},
        },
        polling_interval=0,
    )
    with pytest.raises(HttpResponseError):
        empty.result()
    failed = project_client.datasets.get_generation_job(empty.details["job_id"])
    assert failed.status == "failed" and "no traced requests" in failed.error.message


def test_an_evaluator_generation_job_stores_a_rubric_evaluator(project_client):
    project_client.agents.create_version(
        agent_name="ava", definition=PromptAgentDefinition(model="writer", instructions=INSTRUCTIONS)
    )
    poller = project_client.evaluators.begin_create_generation_job(
        {
            "evaluator_name": "ava-rubric",
            "evaluator_display_name": "Ava's rubric",
            "model": "writer",
            "sources": [{"type": "agent", "agent_name": "ava"}, {"type": "prompt", "prompt": "Refunds."}],
        },
        polling_interval=0,
    )
    version = poller.result()
    assert (version.name, version.version, version.display_name) == ("ava-rubric", "1", "Ava's rubric")
    assert version.evaluator_type == "custom" and version.categories == ["quality"]
    ids = [d["id"] for d in version.definition["dimensions"]]
    assert ids == ["looks_orders_up", "brief", "general_quality"]
    assert version.metadata["generation_job_id"].startswith("evalgenjob_")

    job = project_client.evaluators.get_generation_job(version.metadata["generation_job_id"])
    assert job.status == "succeeded" and job.evaluator_name == "ava-rubric"
    assert [w.code for w in job.input_quality_warnings] == ["short_prompt"]
    assert job.input_quality_warnings[0].source_index == 1
    # The stored evaluator is the catalog's, as any custom version.
    assert project_client.evaluators.get_version("ava-rubric", "1").definition["type"] == "rubric"
    project_client.evaluators.delete_generation_job(job.id)
    with pytest.raises(ResourceNotFoundError):
        project_client.evaluators.get_generation_job(job.id)


def test_bad_requests_are_refused_before_any_job(project_client):
    cases = [
        (
            {"name": "x", "sources": [{"type": "prompt", "prompt": "q"}], "generation_configuration": {"type": "nope"}},
            "generation_configuration.type",
        ),
        (
            {
                "name": "x",
                "sources": [{"type": "prompt", "prompt": "q"}],
                "generation_configuration": {"type": "simple_qna", "model_options": {"model": "absent"}},
            },
            "absent",
        ),
        (
            {
                "name": "x",
                "sources": [{"type": "agent", "agent_name": "nobody"}],
                "generation_configuration": {"type": "simple_qna", "model_options": {"model": "writer"}},
            },
            "nobody",
        ),
        ({"name": "x", "sources": [], "generation_configuration": {"type": "simple_qna"}}, "sources"),
    ]
    before = len(list(project_client.datasets.list_generation_jobs()))
    for body, named in cases:
        with pytest.raises(HttpResponseError, match=named) as caught:
            project_client.datasets.begin_create_generation_job(body, polling_interval=0)
        assert caught.value.status_code in (400, 404) and named in str(caught.value)
    assert len(list(project_client.datasets.list_generation_jobs())) == before


def test_a_retried_create_with_its_operation_id_makes_one_job(project_client):
    body = {
        "name": "once",
        "sources": [{"type": "prompt", "prompt": "Questions customers ask a refund desk."}],
        "generation_configuration": {"type": "simple_qna", "max_samples": 1, "model_options": {"model": "writer"}},
    }
    first = project_client.datasets.begin_create_generation_job(body, operation_id="op-1", polling_interval=0)
    second = project_client.datasets.begin_create_generation_job(body, operation_id="op-1", polling_interval=0)
    assert first.details["job_id"] == second.details["job_id"]
    assert first.result().outputs[0].version == second.result().outputs[0].version == "1"
    cancelled = project_client.datasets.cancel_generation_job(first.details["job_id"])
    assert cancelled.status == "succeeded"  # it had ended: a cancel leaves it as it was


@pytest.fixture
def ctx(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'jobs.db'}")
    yield ApiContext(store=store, catalog=lambda project: load_catalog(store, project), models=ModelRegistry)
    store.close()


def _queued(ctx, runner: str) -> str:
    job = {"id": "datagenjob_1", "name": "q", "status": "queued", "result": None, "error": None}
    ctx.store.add_job("p", "data", job, runner=runner)
    return job["id"]


def test_a_job_cancelled_before_it_runs_is_never_run(ctx):
    job_id = _queued(ctx, local_worker())
    assert cancel(ctx, "p", "data", job_id)["status"] == "cancelled"
    ran = []
    run_job(ctx, "p", "data", job_id, lambda: ran.append(1) or {})
    assert ran == [] and ctx.store.get_job("p", "data", job_id)["status"] == "cancelled"
    # Cancelling an ended job leaves it as it is.
    assert cancel(ctx, "p", "data", job_id)["status"] == "cancelled"


def test_a_job_whose_server_died_is_failed_when_read(ctx):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    job_id = _queued(ctx, f"{LOCAL_PREFIX}{socket.gethostname()}:{dead.pid}:1")
    alive = {"id": "datagenjob_2", "name": "r", "status": "queued", "result": None, "error": None}
    ctx.store.add_job("p", "data", alive, runner=local_worker())
    reap(ctx, "p", "data")
    failed = ctx.store.get_job("p", "data", job_id)
    assert failed["status"] == "failed" and failed["error"]["code"] == "server_stopped"
    assert ctx.store.get_job("p", "data", "datagenjob_2")["status"] == "queued"


def test_a_job_whose_work_raises_a_bug_still_ends(ctx):
    job_id = _queued(ctx, local_worker())

    def broken() -> dict:
        raise KeyError("oops")

    run_job(ctx, "p", "data", job_id, broken)
    ended = ctx.store.get_job("p", "data", job_id)
    assert ended["status"] == "failed" and ended["error"]["code"] == "internal_error" and ended["finished_at"]
