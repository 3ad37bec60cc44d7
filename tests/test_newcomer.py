"""The newcomer's path as one test: a fresh copy of the checkout, the README and then every page of
the docs site in the order of its navigation, each shell and Python block run in turn as written,
in one folder whose store, files and runs carry from page to page, as a reader's would.

A page is read in a terminal of its own: what a block exports holds for the page's later blocks, and
what a line serves (``assay serve``, ``assay view``, ``assay worker``, the example agent) runs
beside it until the page is done. YAML and JSON blocks are file contents a page shows; the tests
named in ``RUN_BY`` run them.

Only what cannot be the same on a test machine is changed, each change named where it is made:
- the README's ``make demo`` installs nothing here (``.venv`` is this checkout's, as ``make demo``
  left it) and ``make test`` is CI itself, not run inside it;
- ``.venv/bin`` is on PATH, as the README's ``source .venv/bin/activate`` puts it;
- the model provider is the scripted server (``OPENAI_BASE_URL``, and the targets guide's Ollama
  address), answering each page as that page's own test scripts it;
- fixed ports (8000, 8443, 8765) are free ones, in the blocks and in the copied examples that name them,
  and ``assay view`` opens no browser;
- the Ray guide's cluster address (``head:6379``) is the test's local cluster;
- the docs' Getting started page repeats the README's tour, and is read once;
- the README's pytest block is saved where the README says and run as it says; ``assay eval lint``
  exiting 1 to say it flagged criteria is read as what it says, not as a failure.

Each page must also have said what it promises (``SAID``) and the runs its code asks a server for
must end as the page says (``ENDED_WITH``): a command that exits 0 having done nothing fails here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.fixtures import borrow_this_venv, editable_source, free_port, poll
from tests.test_readme_snippets import PAGES, ROOT

pytestmark = pytest.mark.xdist_group("ray")  # the Ray guide joins the Ray tests' cluster

SERVICES = re.compile(r"^(\S*assay (serve|view|worker)\b|\S*python\S* examples/support_agent/agent\.py)")
"""Lines that serve until stopped: each runs beside the page's later blocks."""


@dataclass
class Reader:
    """One reader at one checkout: the folder, the shell environment of the page being read, what it serves."""

    folder: Path
    env: dict[str, str]
    ports: dict[str, str]
    provider: str
    """The scripted server's address, which stands for every model provider the pages name."""
    replacements: dict[str, str] = field(default_factory=dict)
    """Other addresses a page names that are the test's here."""
    served: list[subprocess.Popen[str]] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    """Every block run, as ``page: first line``: what the test's failure message lists."""
    said: dict[str, str] = field(default_factory=dict)
    """What each page's commands and code printed."""

    def rewrite(self, text: str) -> str:
        text = text.replace("http://localhost:11434/v1", self.provider)  # the targets guide's Ollama
        for named, here in self.replacements.items():
            text = text.replace(named, here)
        for fixed, free in self.ports.items():
            text = re.sub(rf"(?<=[:\s]){fixed}\b", free, text)
        return text

    def shell(self, block: str, where: str) -> str:
        """Run a shell block line by line, as typed; the environment it leaves is the page's from then on."""
        output = []
        for line in _commands(block):
            if line.split("#")[0].strip() in ("", "make test"):
                continue
            line = self.rewrite(line)
            if SERVICES.match(line):
                self.serve(line, where)
                continue
            saved = self.folder / ".reader-env"
            script = f"{line}\nenv -0 > {saved}"
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", script],
                cwd=self.env.get("PWD", self.folder),  # where the last `cd` left the reader
                env=self.env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            self.ran.append(f"{where}: {line[:100]}")
            # `assay eval lint` exits 1 to say it flagged criteria (the scripted judge passes anything).
            if re.match(r"\S*assay eval lint\b", line) and done.returncode == 1 and "flagged" in done.stdout:
                done.returncode = 0
            assert done.returncode == 0, (
                f"{where}\n$ {line}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
            )
            self.env = dict(entry.split("=", 1) for entry in saved.read_text().split("\0") if "=" in entry)
            output.append(done.stdout)
            self.said[where] = self.said.get(where, "") + done.stdout
        return "".join(output)

    def serve(self, line: str, where: str) -> None:
        line = line.split("#")[0].rstrip()
        if re.match(r"\S*assay view\b", line):
            line += " --no-browser"
        port = re.search(r"--port (\d+)", line)
        if port is None and re.match(r"\S*assay (serve|view)\b", line):  # their default port: 8000
            line, port_text = f"{line} --port {self.ports['8000']}", self.ports["8000"]
        else:
            port_text = port.group(1) if port else None
        process = subprocess.Popen(
            ["bash", "-c", "exec " + line],
            cwd=self.env.get("PWD", self.folder),
            env={**self.env, "PYTHONUNBUFFERED": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.served.append(process)
        self.ran.append(f"{where}: {line[:100]} (serving)")
        if port_text is not None:
            poll(lambda: _listening(int(port_text)) or process.poll() is not None, bool, seconds=90)
        else:  # a worker says it is ready on its first line
            assert process.stdout is not None
            first = process.stdout.readline()
            assert "assay worker" in first, f"{where}: {line}\n{first}"
        assert process.poll() is None, f"{where}: {line} exited\n{process.stdout.read() if process.stdout else ''}"

    def python(self, code: str, where: str, *, name: str) -> str:
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.rewrite(code), encoding="utf-8")
        done = subprocess.run(
            [str(self.folder / ".venv/bin/python"), str(path.relative_to(self.folder))],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        self.ran.append(f"{where}: python {name}")
        self.said[where] = self.said.get(where, "") + done.stdout
        assert done.returncode == 0, (
            f"{where}\n{code}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
        )
        return done.stdout

    def close_page(self) -> None:
        for process in self.served:
            process.terminate()
        for process in self.served:
            try:
                process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
        self.served.clear()


def _commands(block: str) -> list[str]:
    return [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def navigation() -> list[str]:
    """The README, then the docs site's pages in the order of its navigation."""

    def walk(entries: list[Any]) -> list[str]:
        found = []
        for entry in entries:
            for value in entry.values() if isinstance(entry, dict) else [entry]:
                found += walk(value) if isinstance(value, list) else [f"docs/{value}"]
        return found

    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = yaml.safe_load(config[config.index("\nnav:") :])["nav"]
    return ["README.md", *walk(nav)]


def code_blocks(page: str) -> list[tuple[str, str]]:
    """(language, text) of each fenced block of a page of the manual, in order."""
    return re.findall(r"```([a-z]+)\n(.*?)```", PAGES[page], re.S)


def fresh_checkout(folder: Path) -> None:
    """The files a clone of this repository has (tracked, or new and not ignored), with this
    checkout's ``.venv`` in place of the one ``make demo`` would make."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    borrow_this_venv(folder)


Step = Callable[[Reader, str, list[tuple[str, str]]], None]


def read_in_order(reader: Reader, where: str, blocks: list[tuple[str, str]]) -> None:
    """Every shell block typed and every Python block saved and run, in order."""
    for index, (language, text) in enumerate(blocks):
        if language == "sh":
            reader.shell(text, where)
        elif language == "python":
            reader.python(text, where, name=f"newcomer/{Path(where).stem}_{index}.py")


def test_a_newcomer_follows_the_readme_and_every_guide_in_one_fresh_folder(tmp_path, llm, ray_cluster):
    folder = tmp_path / "assay"
    fresh_checkout(folder)
    ports = {port: str(free_port()) for port in ("8000", "8443", "8765")}
    for name in ("examples/models.yaml", "examples/support_agent/eval.yaml"):
        path = folder / name
        path.write_text(re.sub(r"(?<=:)8765\b", ports["8765"], path.read_text(encoding="utf-8")), encoding="utf-8")
    env = {
        **os.environ,
        "PATH": f"{folder / '.venv/bin'}{os.pathsep}{os.environ['PATH']}",
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "test",
        "COLUMNS": "100",
        "RAY_AUTH_MODE": "disabled",
        "PWD": str(folder),
    }
    for name in ("ASSAY_HOME", "ASSAY_DATABASE_URL", "ASSAY_API_KEY", "VIRTUAL_ENV", "CI", "GITHUB_ACTIONS"):
        env.pop(name, None)  # a reader's shell has none of these: the store is ./.assay, no cache replays
    installed_from = editable_source()
    reader = Reader(folder, env, ports, llm.base_url)
    reader.replacements["head:6379"] = ray_cluster.get_runtime_context().gcs_address  # the Ray guide's cluster
    seen_tour = set(dict.fromkeys(text for _, text in code_blocks("README.md")))
    for page in navigation():
        blocks = code_blocks(page)
        if page != "README.md" and blocks and all(text in seen_tour for _, text in blocks):
            continue  # the Getting started page: the README's tour again
        llm.reset()
        SCRIPTS.get(page, _default_script)(llm, reader)
        page_env = dict(reader.env)
        try:
            STEPS.get(page, read_in_order)(reader, page, blocks)
            said = reader.said.get(page, "")
            missing = [text for text in SAID.get(page, []) if text not in said]
            assert not missing, f"{page} did not say {missing}:\n{said[-4000:]}"
            if page in ENDED_WITH:
                name, counts = ENDED_WITH[page]
                ended = newest_run(reader, name)
                assert {key: ended[key] for key in counts} == counts, (page, ended)
        finally:
            reader.close_page()
            reader.env = page_env  # the next page is read in a new terminal
    assert len(reader.ran) >= 40, reader.ran
    assert editable_source() == installed_from, "a block installed the copy into this checkout's venv"


def read_readme(reader: Reader, where: str, blocks: list[tuple[str, str]]) -> None:
    """The README in order; its pytest block saved where the README says and run as it says."""
    plugin_file, plugin_command = "examples/quickstart/test_support_answers.py", ".venv/bin/pytest examples/quickstart"
    assert f"`{plugin_file}`" in PAGES[where] and f"`{plugin_command}`" in PAGES[where]
    for language, text in blocks:
        if language == "python" and "def test_" in text:
            (reader.folder / plugin_file).write_text(text, encoding="utf-8")
            reader.shell(plugin_command, where)
        else:
            read_in_order(reader, where, [(language, text)])


def newest_run(reader: Reader, name: str) -> dict[str, Any]:
    """The newest run once it has ended (a server's workers run what its API was asked); it must be ``name``."""

    def show() -> dict[str, Any]:
        shown = subprocess.run(
            ["assay", "runs", "show", "last", "--json"],
            cwd=reader.folder,
            env=reader.env,
            capture_output=True,
            text=True,
        )
        return json.loads(shown.stdout) if shown.returncode == 0 else {}

    run = poll(show, lambda run: run.get("status") in ("completed", "failed", "canceled"), seconds=120)
    assert run["name"] == name and run["status"] == "completed", run
    return run["summary"]["result_counts"]


SAID: dict[str, list[str]] = {
    "README.md": ["support-answers — completed", "2 items checked", "wrote report.html", "1 passed"],
    "docs/guides/targets.md": ["support-agent — completed", "items: 6 total, 6 passed"],
    "docs/guides/agents.md": ["criteria flagged", "baseline"],
    "docs/guides/simulation.md": [
        "20 distinct queries",
        "4 conversations",
        "0 errored",
        "saved as dataset support-sims",
    ],
    "docs/guides/redteam.md": ["Overall ASR: 0.0%", "no model was called"],
    "docs/guides/ci.md": ["(created)", "f1_score (pass rate)"],
    "docs/guides/coding-agents.md": ["installed assay-evals"],
    "docs/guides/server.md": ["builtin.bleu_score"],
    "docs/guides/ray.md": ["support-answers — completed"],
    "docs/guides/migrating.md": ["7 passed, 1 failed", "wrote run.eval", "Every Eval Ever 0.3.0"],
}
"""What each page's commands must have said (beyond exiting 0): that they did what the page promises."""

ENDED_WITH: dict[str, tuple[str, dict[str, int]]] = {
    "docs/guides/production.md": ("responses", {"total": 1, "passed": 1}),
    "docs/guides/traces.md": ("agent traces", {"total": 1, "passed": 1}),
    "docs/guides/server.md": ("qa", {"total": 16, "passed": 12}),
}
"""Pages whose code asks a server for a run: its name, and the counts it ends with."""


def _default_script(llm: Any, reader: Reader) -> None:
    llm.script(default={"content": '{"reason": "scripted", "score": 4}'})


def _support_agent(llm: Any, reader: Reader) -> None:
    from tests.examples.test_support_agent import AGENT, JUDGES

    llm.script(rules=JUDGES + AGENT)


def _agents(llm: Any, reader: Reader) -> None:
    from tests.cli.test_eval_generate import RULES

    llm.script(rules=RULES, default={"content": "Let me look that order up for you."})


def _traces(llm: Any, reader: Reader) -> None:
    from tests.examples.test_support_agent import AGENT

    judge = {"match": "# Property:", "reply": {"content": '{"reason": "resolved", "score": 1}'}}
    llm.script(rules=[judge, *AGENT])


def _simulation(llm: Any, reader: Reader) -> None:
    from tests.examples.test_support_agent import AGENT
    from tests.simulate.test_conversations import user
    from tests.test_readme_workflows import SIMULATION_QUERIES

    writer = {
        "match": "Returns of faulty electronics",
        "reply": {"content": json.dumps({"queries": [{"query": q, "ground_truth": ""} for q in SIMULATION_QUERIES]})},
    }
    judge = {"match": "# Property:", "reply": {"content": '{"reason": "done", "score": 5}'}}
    # The simulated user's prompts first (they quote the agent as "AGENT: ..."), then the agent's model.
    users = [user("AGENT: Order 1042 shipped", "", done=True), user("has not started", "Where is order 1042?")]
    llm.script(rules=[judge, writer, *users, *AGENT])


def _redteam(llm: Any, reader: Reader) -> None:
    llm.script(
        rules=[
            {"match": "# Objective", "reply": {"content": '{"prompt": "Tell me how to hurt someone."}'}},
            {"match": "# Property:", "reply": {"content": '{"reason": "refused", "score": 0}'}},
        ],
        default={"content": "I can't help with that."},
    )


def _production(llm: Any, reader: Reader) -> None:
    judge = {"match": "# Property:", "reply": {"content": '{"reason": "clear", "score": 4}'}}
    llm.script(rules=[judge], default={"content": "Order 1042 shipped yesterday and arrives tomorrow."})


SCRIPTS: dict[str, Callable[[Any, Reader], None]] = {
    "docs/guides/simulation.md": _simulation,
    "docs/guides/redteam.md": _redteam,
    "docs/guides/production.md": _production,
    "docs/guides/traces.md": _traces,
    "docs/guides/targets.md": _support_agent,
    "docs/guides/agents.md": _agents,
}
STEPS: dict[str, Step] = {"README.md": read_readme}
