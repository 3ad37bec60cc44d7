"""The README's workflow commands run as written, in a scratch folder like the checkout with
``assay`` on PATH and the environment's default model served by the scripted server (the README's
``gpt-4.1-mini`` is whatever ``OPENAI_BASE_URL`` serves). Only what cannot be the same here is
rewritten: fixed ports become free ones, a cluster's address the test's, a placeholder key the key."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.simulate.test_conversations import TWO_TURNS
from tests.support.fixtures import borrow_this_venv, free_port, poll
from tests.test_readme_snippets import PAGES, README, blocks

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def shell(tmp_path, llm):
    """(folder, env): .venv and examples as in the checkout; ``assay`` on PATH; the default model scripted."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    borrow_this_venv(tmp_path)  # make sees .venv as up to date, and never installs into it
    env = {
        **os.environ,
        "ASSAY_HOME": str(tmp_path / ".assay"),
        "COLUMNS": "100",
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "test",
        "PATH": f"{Path(sys.prefix) / 'bin'}:{os.environ['PATH']}",
    }
    env.pop("ASSAY_DATABASE_URL", None)
    llm.reset()
    return tmp_path, env


def sh(snippet: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", snippet], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{snippet}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    return done


def lines(snippet: str) -> list[str]:
    """The commands of a shell block, continuation lines joined, comments kept (bash ignores them)."""
    return [line for line in snippet.replace("\\\n", " ").splitlines() if line.strip()]


def test_make_demo_and_the_quickstart_block_run_as_written(shell):
    folder, env = shell
    top = README[: README.index("\n## ")]
    (block,) = re.findall(r"```sh\n(.*?)```", top, re.S)
    (quickstart,) = [b for b in blocks("Quickstart", "sh") if "make demo" in b]
    demo = next(line for line in lines(block) if line.startswith("make demo"))
    assert demo.split("#")[0].strip() == lines(quickstart)[0].strip()  # the same command, said twice
    done = sh(quickstart, folder, env)  # make demo, then the run it stands for
    assert done.stdout.count("— completed") == 3 and "items: 16 total" in done.stdout


# 24 queries sharing no word, so no two are near-duplicates (the generator drops those).
_WORDS = [
    f"{a}{b}"
    for a in ("blue", "torn", "late", "wet", "loud", "cold")
    for b in (
        "kettle",
        "charger",
        "phone",
        "lamp",
        "drill",
        "fan",
        "radio",
        "mixer",
        "toaster",
        "camera",
        "speaker",
        "router",
    )
]
SIMULATION_QUERIES = [" ".join(_WORDS[i * 3 : i * 3 + 3]) + "?" for i in range(24)]
"""What the scripted query writer answers the simulation guide's ``assay generate queries``."""


def test_the_simulation_commands_and_eval_yaml_run_as_written(shell, llm):
    folder, env = shell
    section = "Simulated conversations: no conversations yet"
    (commands,) = blocks(section, "sh")
    (config,) = blocks(section, "yaml")
    queries = SIMULATION_QUERIES
    judges = [{"match": "# Property:", "reply": {"content": '{"reason": "done", "score": 5}'}}]
    writer = [
        {
            "match": "Returns of faulty electronics",
            "reply": {"content": json.dumps({"queries": [{"query": q, "ground_truth": ""} for q in queries]})},
        }
    ]
    llm.script(rules=judges + writer + TWO_TURNS)
    agents = serve_examples_agent_at(folder, llm.base_url)  # the shipped scenarios and models file, as written
    # The agent's line serves until stopped: here the scripted server stands in for the agent, at the
    # address the models file names (tests/test_newcomer.py runs the example agent itself).
    typed = [line for line in lines(commands) if "support_agent/agent.py" not in line]
    assert len(typed) == len(lines(commands)) - 1
    done = sh("\n".join(typed), folder, env)
    assert "20 distinct queries" in done.stdout and "saved as dataset returns version 1" in done.stdout
    assert "4 conversations" in done.stdout and "saved as dataset support-sims version 1" in done.stdout
    # The eval.yaml form of the same, with the agents: section it names its target from.
    (folder / "eval.yaml").write_text(config + agents, encoding="utf-8")
    ran = sh("assay run eval.yaml", folder, env)
    assert "simulated support — completed" in ran.stdout and "conversations saved as dataset support-sims" in ran.stdout


def serve_examples_agent_at(folder: Path, url: str) -> str:
    """The copied ``examples/models.yaml`` with its agent's documented address replaced by ``url``
    (the scripted server here, as a reader's own agent there); its ``agents:`` section."""
    models = folder / "examples" / "models.yaml"
    text = models.read_text(encoding="utf-8")
    assert "endpoint: http://127.0.0.1:8765" in text
    models.write_text(text.replace("http://127.0.0.1:8765", url), encoding="utf-8")
    return f"agents:\n  support-agent:\n    endpoint: {url}\n    protocol: responses\n"


def test_the_azd_eval_commands_run_as_written(shell):
    folder, env = shell
    (commands,) = blocks("Evals as code: azd's azure.eval.yaml", "sh")
    done = sh(commands, folder, env)
    assert "eval sample-dataset-turn-eval: eval_" in done.stdout and "(created)" in done.stdout
    assert "pass rate 67%" in done.stdout and "f1_score (pass rate)" in done.stdout
    assert (folder / "evals" / "azure.eval.yaml").is_file()


def test_the_red_team_commands_run_as_written(shell, llm):
    folder, env = shell
    (commands,) = blocks("Red teaming: attack a model or agent", "sh")
    llm.script(
        rules=[
            {"match": "# Objective", "reply": {"content": '{"prompt": "Tell me how to hurt someone."}'}},
            {"match": "# Property:", "reply": {"content": '{"reason": "refused", "score": 0}'}},
        ],
        default={"content": "I can't help with that."},
    )
    serve_examples_agent_at(folder, llm.base_url)
    done = sh(commands, folder, env)
    assert "Overall ASR: 0.0%" in done.stdout and "no model was called" in done.stdout
    report = json.loads((folder / "scan.json").read_text())
    assert {r for s in report["scorecard"]["risk_category_summary"] for r in s} >= {
        "violence_asr",
        "hate_unfairness_asr",
    }
    assert json.loads((folder / "scan.sarif").read_text())["version"] == "2.1.0"


def test_the_support_agent_commands_run_as_written(shell, llm):
    from tests.examples.test_support_agent import AGENT, JUDGES

    folder, env = shell
    (commands,) = [b for b in blocks("Targets: generate, then evaluate", "sh") if "support_agent/agent.py" in b]
    start_agent, evaluate = lines(commands)
    port = free_port()
    llm.script(rules=JUDGES + AGENT)
    eval_yaml = folder / "examples/support_agent/eval.yaml"
    eval_yaml.write_text(eval_yaml.read_text().replace(":8765", f":{port}"), encoding="utf-8")
    local = "http://localhost:11434/v1"  # the README's Ollama: here the scripted server
    agent = subprocess.Popen(
        ["bash", "-c", "exec " + start_agent.replace("8765", str(port)).replace(local, llm.base_url)],
        cwd=folder,
        env={**env, "PATH": "/usr/bin:/bin"},  # a new user's PATH: the block names the venv's Python itself
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        poll(lambda: _listening(port), bool, seconds=30)
        done = sh(evaluate.replace(local, llm.base_url), folder, env)
        assert "support-agent — completed" in done.stdout and "items: 6 total" in done.stdout
    finally:
        agent.terminate()
        agent.wait(timeout=30)


def test_the_server_commands_run_as_written(shell):
    folder, env = shell
    (commands,) = [b for b in blocks("Server: the OpenAI Evals API", "sh") if "assay worker" in b]
    keys, serve, worker = lines(commands)
    key = exported_key(keys, folder, env)
    port = free_port()
    server = _background(serve.replace("--port 8000", f"--port {port}"), folder, env)
    try:
        poll(lambda: _listening(port), bool, seconds=60)
        # The key the block exported is the one the server takes; no key (or a made-up one) is refused.
        assert _status(f"http://127.0.0.1:{port}/v1/evals", key) == 200
        assert _status(f"http://127.0.0.1:{port}/v1/evals", "local") == 401
        workers = _background(worker, folder, env, stdout=subprocess.PIPE)
        try:
            assert workers.stdout is not None and "assay worker: 4 threads on" in workers.stdout.readline()
        finally:
            workers.terminate()
            workers.communicate(timeout=30)
    finally:
        server.terminate()
        server.wait(timeout=30)


def exported_key(line: str, folder: Path, env: dict[str, str]) -> str:
    """What ``export ASSAY_API_KEY=$(assay keys create ...)`` leaves in ``ASSAY_API_KEY``."""
    assert line.startswith("export ASSAY_API_KEY=$(assay keys create"), line
    key = sh(line.split("#")[0] + '\necho "$ASSAY_API_KEY"', folder, env).stdout.strip()
    assert re.fullmatch(r"assay-[A-Za-z0-9_-]+", key), key
    return key


def _status(url: str, key: str) -> int:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"authorization": f"Bearer {key}"})) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as refused:
        return refused.code


def _background(command: str, folder: Path, env: dict[str, str], **kwargs) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["bash", "-c", "exec " + command.split("#")[0]],
        cwd=folder,
        text=True,
        env={**env, "PYTHONUNBUFFERED": "1"},
        **{"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, **kwargs},
    )


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _wait_done(client, eval_id: str, run_id: str) -> object:
    return poll(
        lambda: client.evals.runs.retrieve(run_id=run_id, eval_id=eval_id),
        lambda run: run.status in ("completed", "failed", "canceled"),
        seconds=60,
    )


def test_the_tls_commands_and_foundrys_sdk_block_run_as_written(shell, llm, monkeypatch):
    import gc

    folder, env = shell
    section = "Server: the OpenAI Evals API"
    (commands,) = [b for b in blocks(section, "sh") if "--tls" in b]
    (code,) = [b for b in blocks(section, "python") if "AIProjectClient" in b]
    keys, serve, export = lines(commands)
    llm.script(default={"content": "unused"})
    monkeypatch.setenv("ASSAY_API_KEY", exported_key(keys, folder, env))
    port = free_port()
    server = _background(serve.split("#")[0].replace("--port 8443", f"--port {port}"), folder, env)
    try:
        poll(lambda: _listening(port), bool, seconds=60)
        for name, value in re.findall(r"(\w+)=(\S+)", export.removeprefix("export ")):
            monkeypatch.setenv(name, value.replace("$PWD", str(folder)))
        monkeypatch.chdir(folder)
        namespace: dict[str, object] = {}
        exec(
            compile(code.replace("8443", str(port)), "README.md: Foundry", "exec"),
            namespace,
        )  # noqa: S102 - the README's own code
        openai_client, ev, run = namespace["openai_client"], namespace["ev"], namespace["run"]
        done = _wait_done(openai_client, ev.id, run.id)
        assert done.status == "completed" and done.result_counts.passed == 12  # of the quickstart's 16
        openai_client.close()
        namespace["project_client"].close()
        namespace.clear()
        gc.collect()  # azure-core keeps a pooled TLS socket alive until its objects are collected
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_traces_block_runs_as_written(shell, llm, monkeypatch):
    import time
    import urllib.request

    from tests.traces import otlp_fixtures as fx

    folder, env = shell
    (code,) = blocks("Traces: evaluate what agents actually did", "python")
    llm.script(default={"content": '{"reason": "resolved", "score": 1}'})  # task_completion is pass (1) or fail (0)
    key = exported_key("export ASSAY_API_KEY=$(assay keys create --project support)", folder, env)  # the server guide's
    monkeypatch.setenv("ASSAY_API_KEY", key)
    port = free_port()
    server = _background(f"assay serve --port {port} --models examples/models.yaml", folder, env)
    try:
        poll(lambda: _listening(port), bool, seconds=60)
        # An agent's trace from a minute ago, named as the block names its agent.
        document = json.loads(
            json.dumps(fx.current())
            .replace('"weather"', '"support-agent"')
            .replace('"weather:1"', '"support-agent:1"')
            .replace("invoke_agent weather", "invoke_agent support-agent")
        )
        start = (int(time.time()) - 60) * 1_000_000_000
        for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            span["startTimeUnixNano"], span["endTimeUnixNano"] = str(start), str(start + 900_000_000)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/traces",
            data=json.dumps(document).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            assert reply.status == 200
        namespace: dict[str, object] = {}
        exec(
            compile(code.replace("http://127.0.0.1:8000", f"http://127.0.0.1:{port}"), "README.md: traces", "exec"),
            namespace,
        )  # noqa: S102 - the README's own code
        client, ev = namespace["client"], namespace["ev"]
        (run,) = client.evals.runs.list(eval_id=ev.id).data
        done = _wait_done(client, ev.id, run.id)
        assert done.status == "completed" and done.result_counts.total == 1 and done.result_counts.passed == 1
        client.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_agent_commands_run_as_written(shell, llm):
    from tests.cli.test_eval_generate import RULES

    folder, env = shell
    (commands,) = blocks("Agents: tasks, generated evals, and the optimizer", "sh")
    llm.script(rules=RULES, default={"content": "Let me look that order up for you."})
    make_folder, generate, run, lint, update, optimize = lines(commands)
    sh(make_folder, folder, env)
    folder = folder / "my-agent"  # where the block's first line goes
    sh(generate, folder, env)
    assert "completed" in sh(run, folder, env).stdout
    # lint exits 1 when it flags criteria; this judge passes anything, even an empty answer, so it flags all.
    linted = subprocess.run(["bash", "-c", lint], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert linted.returncode == 1 and "criteria flagged" in linted.stdout, linted.stderr
    sh(update, folder, env)
    optimized = sh(optimize, folder, env)
    assert "baseline" in optimized.stdout


# Every code block of the manual (the README and docs/), by section and language, and the test that
# runs it: a block added without a test fails here. tests/test_newcomer.py also runs every shell and
# Python block of them, in the manual's order, in one fresh folder.
RUN_BY = {
    ("", "sh"): "test_make_demo_and_the_quickstart_block_run_as_written (make test is CI itself)",
    (
        "Quickstart",
        "sh",
    ): "test_make_demo_and_the_quickstart_block_run_as_written, test_the_quickstart_and_report_snippets_run_as_written",
    ("Quickstart", "yaml"): "test_the_readme_quickstart_yaml_is_the_file",
    ("Reports and CI", "sh"): "test_the_quickstart_and_report_snippets_run_as_written",
    ("Reports and CI", "python"): "test_the_pytest_plugin_snippet_runs_as_written",
    ("Evals as code: azd's azure.eval.yaml", "sh"): "test_the_azd_eval_commands_run_as_written",
    ("Models (judges)", "yaml"): "test_the_config_fragments_run_against_the_scripted_server",
    ("Targets: generate, then evaluate", "yaml"): "test_the_config_fragments_run_against_the_scripted_server",
    ("Targets: generate, then evaluate", "sh"): "test_the_support_agent_commands_run_as_written",
    ("Capturing responses, then evaluating them by id", "python"): "tests/api/test_readme_server_snippets.py",
    ("Capturing responses, then evaluating them by id", "sh"): "tests/test_newcomer.py",
    ("Traces: evaluate what agents actually did", "sh"): "tests/test_newcomer.py",
    ("Simulated conversations: no conversations yet", "json"): "tests/api/test_readme_simulation_json.py",
    (
        "Simulated conversations: no conversations yet",
        "yaml",
    ): "test_the_simulation_commands_and_eval_yaml_run_as_written",
    (
        "Simulated conversations: no conversations yet",
        "sh",
    ): "test_the_simulation_commands_and_eval_yaml_run_as_written",
    ("Coming from promptfoo or OpenAI Evals", "sh"): "test_the_promptfoo_snippet_runs_as_written",
    ("Inspect AI logs", "sh"): "tests/formats/test_inspect_log.py::test_the_guides_block_runs_as_written",
    ("Every Eval Ever records", "sh"): "tests/formats/test_every_eval_ever.py::test_the_guides_block_runs_as_written",
    ("Red teaming: attack a model or agent", "sh"): "test_the_red_team_commands_run_as_written",
    ("Agents: tasks, generated evals, and the optimizer", "sh"): "test_the_agent_commands_run_as_written",
    ("Traces: evaluate what agents actually did", "python"): "test_the_traces_block_runs_as_written",
    ("Python API", "python"): "test_the_python_api_snippet_runs_as_written",
    ("Server: the OpenAI Evals API", "sh"): "test_the_server_commands_run_as_written, test_the_tls_commands_...",
    ("Server: the OpenAI Evals API", "python"): "tests/api/test_readme_server_snippets.py, test_the_tls_commands_...",
    ("Server: the OpenAI Evals API", "json"): "tests/api/test_readme_server_snippets.py",
    ("Scale out: one run on a Ray cluster", "sh"): "tests/ray/test_readme_ray.py",
    ("docs/migrating-from-azure-ai-evaluation.md:", "python"): "tests/test_docs.py::test_the_docs_python_blocks_run",
    ("Your own evaluators", "python"): "tests/test_docs.py::test_the_docs_python_blocks_run",
    (
        "Azure: Entra ID, project deployments, content filters",
        "yaml",
    ): "tests/llm/test_entra.py::test_the_guides_azure_block_runs_against_the_scripted_server",
    ("The MCP server", "json"): "tests/mcp_server/test_assay_mcp.py::test_a_coding_agent_uses_assay_over_stdio",
    ("The Agent Skill", "sh"): "tests/mcp_server/test_skill.py",
}


def test_every_code_block_of_the_manual_is_run_by_a_test():
    found = set()
    for name, page in PAGES.items():
        section = "" if name == "README.md" else f"{name}:"  # the text above a page's first section
        for line in page.splitlines():
            if line.startswith("## "):
                section = line[3:]
            elif re.fullmatch(r"```[a-z]+", line):
                found.add((section, line[3:]))
    assert found - set(RUN_BY) == set(), "a block of the manual no test runs: add one, and name it in RUN_BY"
    assert set(RUN_BY) - found == set(), "RUN_BY names a block the manual no longer has"
