"""The optimizer on a hosted agent: an HTTP agent that runs its own tool loop and takes its
configuration the way an agent written for Foundry's optimizer does. The same scripted world as
``test_optimize_tools`` (only the tool's result answers; the reflection proposes looking the order
up): told each candidate per request, or started by assay once per candidate with
``OPTIMIZATION_CONFIG`` in its environment, the agent is scored as each candidate and the candidate
that calls the tool is starred."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.cli.test_cli import assay
from tests.cli.test_optimize import BASELINE, job
from tests.cli.test_optimize_tools import RULE, tool_world
from tests.support.fixtures import poll

AGENT = Path(__file__).parents[1] / "support" / "optimizable_agent.py"


def world(folder: Path, llm, agents: dict) -> Path:
    tasks = tool_world(llm)
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (folder / ".agent_configs" / "baseline").mkdir(parents=True)
    (folder / ".agent_configs" / "baseline" / "instructions.md").write_text(BASELINE)
    (folder / ".agent_configs" / "baseline" / "metadata.yaml").write_text("instruction_file: instructions.md\n")
    models = {n: {"model": f"{n}-m", "base_url": llm.base_url, "api_key": "t"} for n in ("judge", "opt")}
    (folder / "eval.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "orders",
                "agents": agents,
                "agent": {"name": "shop", "config": ".agent_configs/baseline/metadata.yaml"},
                "dataset": {"local_uri": "tasks.jsonl"},
                "models": models,
                "evaluators": ["builtin.task_adherence"],
                "options": {"eval_model": "judge", "optimization_model": "opt"},
            }
        )
    )
    return folder / "eval.yaml"


def optimize(config: Path, home: Path, env: dict[str, str]) -> dict:
    return job(assay("optimize", "--config", str(config), "--output", "json", home=home, env_extra=env))


def served(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def assert_starred_with_the_tool(found: dict, home: Path) -> None:
    best, baseline = found["result"]["best"], found["result"]["baseline"]
    assert found["result"]["starred"] is True and found["result"]["gain"] == pytest.approx(0.5)
    assert set(baseline["task_scores"].values()) == {0.5} and set(best["task_scores"].values()) == {1.0}
    listed = assay("results", best["eval_run_id"], home=home, check=True).stdout.splitlines()
    sample = json.loads(listed[0])["sample"]
    assert [i["type"] for i in sample["output_items"]] == ["function_call", "function_call_output", "message"]
    assert sample["output_text"] == "It was delivered on 2026-11-28."


@pytest.fixture
def per_request_agent(tmp_path, llm):
    """The agent started once, by the test: every candidate reaches it in the requests."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "served.jsonl"
    env = {"LLM_BASE_URL": llm.base_url, "AGENT_LOG": str(log), "PATH": "/usr/bin:/bin"}
    process = subprocess.Popen([sys.executable, str(AGENT), str(port), "--per-request"], env=env)

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            return False

    assert poll(listening, bool, seconds=30)
    yield f"http://127.0.0.1:{port}", log
    process.terminate()
    process.wait(timeout=10)


def test_a_hosted_agent_reading_its_candidate_per_request_is_optimized(tmp_path, llm, per_request_agent):
    endpoint, log = per_request_agent
    config = world(tmp_path, llm, {"shop": {"endpoint": endpoint, "protocol": "responses"}})
    found = optimize(config, tmp_path, {})
    assert_starred_with_the_tool(found, tmp_path)
    # Every request named its candidate, in the header and in the config it carried, and the agent
    # ran on that candidate's instructions: the baseline's, and the starred one's with the rule.
    requests = served(log)
    assert all(r["header"] == r["candidate"] for r in requests)
    by_candidate = {r["candidate"]: r["instructions"] for r in requests}
    best, baseline = found["result"]["best"]["candidate_id"], found["result"]["baseline"]["candidate_id"]
    assert by_candidate[baseline] == BASELINE and by_candidate[best].endswith(RULE + "\n")
    # Reflection is a role of its own in the job's usage, beside the target (the agent) and the judges.
    assert {"target", "judge", "reflection"} <= set(found["usage_by_role"])
    assert found["usage_by_role"]["reflection"]["calls"] >= 1


def test_an_agent_that_loads_its_config_at_start_is_started_per_candidate(tmp_path, llm):
    log = tmp_path / "served.jsonl"
    agents = {"shop": {"command": [sys.executable, str(AGENT), "{port}"], "endpoint": "http://127.0.0.1:{port}"}}
    config = world(tmp_path, llm, agents)
    found = optimize(config, tmp_path, {"LLM_BASE_URL": llm.base_url, "AGENT_LOG": str(log)})
    assert_starred_with_the_tool(found, tmp_path)
    # The agent read OPTIMIZATION_CONFIG at start (it ignores the requests' copy): each process ran
    # as one candidate, and every candidate the search scored had a process of its own.
    requests = served(log)
    scored = {c["candidate_id"] for c in found["result"]["candidates"] if c["task_scores"]}
    assert {r["candidate"] for r in requests} == scored
    best = found["result"]["best"]["candidate_id"]
    assert {r["instructions"] for r in requests if r["candidate"] == best} == {BASELINE + RULE + "\n"}
