"""The README's first-hour snippets run as written: the shell blocks of the Quickstart and of
Reports and CI (in a scratch folder with this checkout's ``.venv`` and examples), and the Python
API block (over a data file with the fields it maps)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = {"README.md": README} | {
    str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").rglob("*.md"))
}
"""The manual: the README and the docs site's pages."""


def section_of(page: str, section: str) -> str | None:
    start = page.find(f"\n## {section}\n")
    if start < 0:
        return None
    end = page.find("\n## ", start + 1)
    return page[start : end if end > 0 else None]


def blocks(section: str, language: str) -> list[str]:
    """The ``language`` code blocks under the heading ``## section`` (up to the next ``## ``) of the
    page of the manual that has it (the docs' getting-started page repeats the README's tour)."""
    found = {text for page in PAGES.values() if (text := section_of(page, section)) is not None}
    assert len(found) == 1, f"## {section}: on no page, or on several pages with different text"
    return re.findall(rf"```{language}\n(.*?)```", found.pop(), re.S)


@pytest.fixture
def workspace(tmp_path):
    """A scratch folder that looks like the checkout to the snippets: .venv, examples, a store."""
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {**os.environ, "ASSAY_HOME": str(tmp_path / ".assay"), "COLUMNS": "100"}
    env.pop("ASSAY_DATABASE_URL", None)
    env.pop("OPENAI_API_KEY", None)  # the snippets are offline: they must not need a key
    return tmp_path, env


def run_shell(snippet: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", snippet], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_quickstart_and_report_snippets_run_as_written(workspace):
    folder, env = workspace
    quickstart = [b for b in blocks("Quickstart", "sh") if "make demo" not in b]  # make demo is what CI runs itself
    reports = blocks("Reports and CI", "sh")
    assert len(quickstart) == 1 and len(reports) == 1
    # `assay view` serves until stopped: the snippet's last line is run with --no-browser and stopped below.
    *first_lines, view = quickstart[0].strip().splitlines()
    assert view.startswith(".venv/bin/assay view")
    done = run_shell(
        "\n".join([".venv/bin/assay run examples/quickstart/eval.yaml > /dev/null", *first_lines]), folder, env
    )
    assert done.returncode == 0, done.stderr
    assert (folder / "my-eval" / "eval.yaml").exists() and "2 items checked" in done.stdout
    viewer = subprocess.Popen(
        ["bash", "-c", view.split("#")[0] + " --no-browser --port 0"],
        cwd=folder,
        env={**env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert viewer.stdout is not None
        assert "/ui" in viewer.stdout.readline()
    finally:
        viewer.terminate()
        viewer.communicate(timeout=30)
    reported = run_shell(reports[0], folder, env)
    assert reported.returncode == 0, reported.stderr
    assert (
        "<testsuites" in (folder / "junit.xml").read_text()
        and "<!doctype html>" in (folder / "report.html").read_text()
    )
    assert (folder / "summary.md").read_text().startswith("### assay: my-eval — completed")


def test_the_python_api_snippet_runs_as_written(workspace, monkeypatch):
    folder, env = workspace
    (snippet,) = blocks("Python API", "python")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("ASSAY_HOME", env["ASSAY_HOME"])
    namespace: dict[str, object] = {}
    exec(compile(snippet, "README.md: Python API", "exec"), namespace)  # noqa: S102 - the README's own code
    result = namespace["result"]
    assert isinstance(result, dict)
    assert result["rows"][0]["outputs.f1.f1_score"] == 1.0
    assert result["metrics"]["f1.binary_aggregate"] == 0.5


def test_the_pytest_plugin_snippet_runs_as_written(pytester, monkeypatch, tmp_path):
    (snippet,) = blocks("Reports and CI", "python")
    rows = [{"response": f"The answer is {i}.", "ground_truth": f"The answer is {i}."} for i in range(5)]
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (pytester.path / "eval.yaml").write_text(
        "name: answers\ndataset: {local_uri: data.jsonl}\nevaluators: [builtin.f1_score]\n", encoding="utf-8"
    )
    pytester.makepyfile(test_readme=snippet)
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()
    assert result.parseoutcomes()["passed"] == 1


def yaml_block(section: str, starts: str) -> str:
    (found,) = [b for b in blocks(section, "yaml") if b.startswith(starts)]
    return found


def test_the_config_fragments_run_against_the_scripted_server(workspace, llm):
    """The models:, target: and agents: fragments, completed with a name and a dataset (and the
    scripted server's address where the README names a local endpoint), run as eval.yaml does."""
    from assay.cli.serve import models_from_file

    folder, env = workspace
    llm.script(default={"content": '{"reason": "scripted", "score": 4}'})
    rows = [{"query": "Where is my order?", "response": "It shipped today.", "context": "Order 1042 shipped."}]
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    head = "name: readme\ndataset: {local_uri: data.jsonl}\n"
    models = yaml_block("Models (judges)", "models:").replace("http://localhost:8000/v1", llm.base_url)
    bot = f"models:\n  bot: {{model: gpt-4.1-mini, base_url: '{llm.base_url}', api_key: test}}\n"
    # The batch mode block's options, added to the models block's own.
    batch = yaml.safe_load(yaml_block("Models (judges)", "options:"))["options"]
    assert "options: {eval_model: judge}" in models
    batched = models.replace("options: {eval_model: judge}", f"options: {json.dumps({'eval_model': 'judge', **batch})}")
    for name, text in (
        ("models.yaml", head + models),
        ("batched.yaml", head + batched),
        ("target.yaml", head + bot + yaml_block("Targets: generate, then evaluate", "target:")),
    ):
        (folder / name).write_text(text, encoding="utf-8")
        ran = run_shell(f".venv/bin/assay run {name}", folder, {**env, "OPENAI_API_KEY": "test"})
        assert ran.returncode == 0, (name, ran.stdout[-2000:], ran.stderr[-2000:])
        assert "readme — completed" in ran.stdout and "1 errored" not in ran.stdout, name
    (folder / "agents.yaml").write_text(yaml_block("Targets: generate, then evaluate", "agents:"), encoding="utf-8")
    agents = models_from_file(folder / "agents.yaml").agents
    assert [(a.name, a.version, a.protocol, a.stateful) for a in agents] == [
        ("support", "2", "responses", False),
        ("intake", "1", "invocations", False),
        ("desk", "1", "responses", True),
    ]


def test_the_agent_with_tools_fragment_runs_its_tools(workspace, llm):
    """The agent fragment, with a tools.py and an MCP server beside it: the model's calls of each are executed."""
    from tests.targets.test_agent_loop import TOOLS, call

    folder, env = workspace
    (folder / "tools.py").write_text(TOOLS, encoding="utf-8")
    (folder / "parcels_server.py").write_text(PARCELS, encoding="utf-8")
    llm.reset()
    llm.script(
        rules=[
            {
                "match": "parcel P-9 is at the depot",
                "reply": {"content": "Order 42 shipped; parcel P-9 is at the depot."},
            },
            {
                "match": "shipped on 2026-11-30",
                "reply": {"tool_calls": [call("track_parcel", {"parcel": "P-9"}, "c2")]},
            },
        ],
        default={"tool_calls": [call("lookup_order", {"order_id": "42"}, "c1")]},
    )
    (folder / "data.jsonl").write_text(json.dumps({"query": "Where is order 42?"}) + "\n", encoding="utf-8")
    fragment = yaml_block("Targets: generate, then evaluate", "# An agent with tools")
    head = "name: readme\ndataset: {local_uri: data.jsonl}\n"
    bot = f"models:\n  bot: {{model: m, base_url: '{llm.base_url}', api_key: test}}\n"
    checks = "evaluators:\n  - {type: string_check, name: depot, input: '{{sample.output_text}}', reference: depot, operation: like}\n"
    (folder / "agent.yaml").write_text(head + bot + fragment + checks, encoding="utf-8")
    path = f"{Path(sys.prefix) / 'bin'}:{env['PATH']}"  # `python` in the fragment: the one with the mcp SDK
    ran = run_shell(".venv/bin/assay run agent.yaml", folder, {**env, "PATH": path})
    assert ran.returncode == 0, (ran.stdout[-2000:], ran.stderr[-2000:])
    assert "1 passed" in ran.stdout


PARCELS = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("parcels")


@server.tool()
def track_parcel(parcel: str) -> str:
    """Where a parcel is."""
    return f"parcel {parcel} is at the depot"


if __name__ == "__main__":
    server.run()
'''


def test_the_promptfoo_snippet_runs_as_written(workspace):
    folder, env = workspace
    (snippet,) = blocks("Coming from promptfoo or OpenAI Evals", "sh")
    done = run_shell(snippet, folder, env)
    assert done.returncode == 0, done.stderr
    assert "8 total, 7 passed, 1 failed" in done.stdout  # the formal prompt misses the weighted threshold
    assert (folder / "my-promptfoo" / "eval.yaml").exists() and (folder / "my-promptfoo" / "tests.jsonl").exists()
