"""Endpoint evaluators: an HTTP service a test runs scores each item (retried like a model when it
answers 503); from ``assay serve`` only the hosts the operator allows may be called."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.api.conftest import wait_for
from tests.cli.test_cli import assay
from tests.support.servers import start_assay_server, uvicorn_in_thread

ROWS = [
    {"query": "Can I get my money back?", "response": "Yes, a full refund within 30 days."},
    {"query": "Can I get my money back?", "response": "Please hold."},
]


@pytest.fixture
def scorer():
    """A scoring service: the first request gets a 503; then 1.0 when the response mentions a refund."""
    app = FastAPI()
    seen: list[dict] = []

    @app.post("/score")
    async def score(request: Request):
        body = await request.json()
        seen.append({"body": body, "token": request.headers.get("authorization")})
        if len(seen) == 1:
            return JSONResponse({"error": "warming up"}, status_code=503)
        value = 1.0 if "refund" in body.get("response", "") else 0.0
        return {"score": value, "passed": value == 1.0, "reason": "mentions a refund" if value else "no refund", "n": 7}

    with uvicorn_in_thread(app) as url:
        yield url, seen


def test_an_endpoint_evaluator_scores_each_item(tmp_path, scorer):
    url, seen = scorer
    definition = {"url": f"{url}/score", "headers": {"Authorization": "Bearer s3cret"}, "max_retries": 2}
    (tmp_path / "endpoint.json").write_text(json.dumps(definition))
    assay(
        "evaluators", "add", "refund_check", tmp_path / "endpoint.json", "--kind", "endpoint", home=tmp_path, check=True
    )
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "eval.yaml").write_text(
        "name: endpoint\ndataset: {local_uri: data.jsonl}\nevaluators:\n  - refund_check\noptions: {concurrency: 1}\n"
    )
    done = assay("run", tmp_path / "eval.yaml", home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = done.stdout.split("run id: ")[1].split()[0]
    items = [json.loads(line) for line in assay("results", run_id, home=tmp_path, check=True).stdout.splitlines()]
    results = {i["datasource_item_id"]: i["results"][0] for i in items}
    assert (results[0]["passed"], results[0]["score"], results[0]["reason"]) == (True, 1.0, "mentions a refund")
    assert results[1]["passed"] is False and results[1]["properties"]["n"] == 7
    assert len(seen) == 3  # one 503, retried, then one call per item
    assert seen[1]["body"] == ROWS[0] and seen[1]["token"] == "Bearer s3cret"


def _post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_assay_serve_calls_only_hosts_the_operator_allows(tmp_path, scorer, monkeypatch):
    url, seen = scorer
    models = tmp_path / "models.yaml"
    models.write_text("models: {}\n")
    definition = {"definition": {"type": "endpoint", "url": f"{url}/score"}}
    server, client = start_assay_server(tmp_path / "closed", models, workers=1)
    try:
        base = str(client.base_url).removesuffix("/v1/")
        status, body = _post(f"{base}/api/projects/default/evaluators/refund_check/versions", definition)
    finally:
        server.terminate()
        server.wait(timeout=30)
        client.close()
    host = url.removeprefix("http://")
    assert status == 400 and f"this server may not call {host}" in body["error"]["message"]
    assert "ASSAY_EVALUATOR_ENDPOINTS" in json.dumps(body)

    monkeypatch.setenv("ASSAY_EVALUATOR_ENDPOINTS", host)
    server, client = start_assay_server(tmp_path / "open", models, workers=1)
    try:
        base = str(client.base_url).removesuffix("/v1/")
        status, _ = _post(f"{base}/api/projects/default/evaluators/refund_check/versions", definition)
        assert status == 201  # created, as Foundry answers azure-ai-projects
        created = client.evals.create(
            name="endpoint",
            data_source_config={"type": "custom", "item_schema": {"type": "object"}},
            testing_criteria=[{"type": "azure_ai_evaluator", "name": "refund", "evaluator_name": "refund_check"}],
        )
        run = client.evals.runs.create(
            eval_id=created.id,
            data_source={"type": "jsonl", "source": {"type": "file_content", "content": [{"item": r} for r in ROWS]}},
        )
        finished = wait_for(client, created.id, run.id, seconds=60)
        assert finished.status == "completed", finished
        assert (finished.result_counts.passed, finished.result_counts.failed) == (1, 1)
    finally:
        server.terminate()
        server.wait(timeout=30)
        client.close()
