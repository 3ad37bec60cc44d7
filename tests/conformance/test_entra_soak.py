"""A run of several minutes against a server that takes only Entra ID bearer tokens and expires
them every 3 seconds, the token minted by azure-identity's ``AzureCliCredential`` (an ``az`` on
PATH, faked) through ``DefaultAzureCredential``: every item judged, no call failed, the token
renewed dozens of times. The figures go to the CI log. (The same at a few seconds' length runs in
``make test``: ``tests/llm/test_entra_runs.py``.)"""

from __future__ import annotations

import json
import time

import pytest

from tests.cli.test_cli import assay
from tests.support.entra import fake_az
from tests.support.fixtures import start_llm_server, stored_runs

pytestmark = pytest.mark.conformance
ITEMS = 240
LATENCY_MS = 1500  # two calls at a time: 240 items last three minutes at least
LIFETIME = 3


def test_a_three_minute_run_outlives_sixty_tokens(tmp_path):
    llm = start_llm_server()
    try:
        az = fake_az(tmp_path / "az")
        audience = "https://cognitiveservices.azure.com"
        llm.script(
            default={"content": '{"reason": "fine", "score": 5}'}, entra={"audience": audience}, latency_ms=LATENCY_MS
        )
        (tmp_path / "data.jsonl").write_text(
            "".join(json.dumps({"query": f"Question {i}?", "response": f"Answer {i}."}) + "\n" for i in range(ITEMS))
        )
        endpoint = llm.base_url.removesuffix("/v1")
        (tmp_path / "eval.yaml").write_text(
            "name: entra-soak\ndataset: {local_uri: data.jsonl}\n"
            f"models:\n  judge: {{provider: azure, azure_endpoint: '{endpoint}', api_version: '2024-10-21', "
            "model: gpt-4.1-mini}\n"
            "evaluators:\n  - name: coherence\n    evaluator_name: builtin.coherence\n"
            "    initialization_parameters: {model: judge}\n"
        )
        environment = az.environment(lifetime=LIFETIME)
        started = time.monotonic()
        done = assay(
            "run",
            "eval.yaml",
            "--concurrency",
            "2",
            home=tmp_path / "home",
            cwd=tmp_path,
            env_extra=environment,
            timeout=900,
        )
        seconds = time.monotonic() - started
        stats = llm.stats()
    finally:
        llm.stop()
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    (run,) = stored_runs(tmp_path / "home")
    counts = run.summary.result_counts
    minted = az.minted()
    print(  # noqa: T201 - the figures, in the CI log
        f"entra soak: {ITEMS} items in {seconds:.0f} s; {len(minted)} tokens minted (each lived {LIFETIME} s), "
        f"{stats['tokens_seen']} seen by the server, {stats['auth_refused']} calls answered 401 and retried; "
        f"passed {counts.passed}, errored {counts.errored}"
    )
    assert counts.passed == ITEMS and counts.errored == 0
    assert len(minted) >= seconds / LIFETIME / 2, "the token was renewed as it expired, all along the run"
    assert not any(token in said for token in minted)
