"""schemathesis, the real CLI, against a real assay server on SQLite and on PostgreSQL: every
operation of the server's own OpenAPI document (aliases once), at least ten generated cases
each through every phase (examples, coverage, fuzzing, stateful), must never get a server error.
Every handler meets the coverage phase once: on SQLite, where the project-scoped copies of the
OpenAI routes (the same handlers, with a project) are left to PostgreSQL's phases.

The coverage phase matters: it sends the boundary shapes (a list where a name belongs, a
required field left out) that found 5xx the fuzzing phase alone never reached. Seeded, so a
failure comes back on the next run."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from assay.api import create_app
from assay.evaluators import load_catalog
from assay.llm import ModelRegistry
from assay.store import Store
from tests.conftest import BACKENDS, postgres_database
from tests.support.servers import uvicorn_in_thread

CASES_PER_OPERATION = 10
SEED = 20261202
PHASES = {"sqlite": "examples,coverage,fuzzing,stateful", "postgresql": "examples,fuzzing,stateful"}
PROJECT_OPENAI = "/api/projects/{project}/openai/"
LEAST_OPERATIONS = {"sqlite": 55, "postgresql": 80}
ALIASES = re.compile(r"^(/openai/v1|/openai|/v1)(?=/)")


def one_route_per_handler(document: dict, project_openai: bool = True) -> dict:
    """The document with each operation once. A handler is served under /v1, /openai/v1 and
    /openai, which add nothing to the request (/v1's route is kept), and under
    /api/projects/{project}/..., whose project is a parameter of its own (kept, and fuzzed)."""
    chosen: dict[tuple[str, str], str] = {}
    for path in sorted(document["paths"], key=lambda p: (not p.startswith("/v1/"), p)):
        for method in document["paths"][path]:
            chosen.setdefault((method, ALIASES.sub("", path)), path)
    paths: dict[str, dict] = {}
    for (method, _), path in chosen.items():
        if project_openai or not path.startswith(PROJECT_OPENAI):
            paths.setdefault(path, {})[method] = document["paths"][path][method]
    return {**document, "paths": paths}


@contextlib.contextmanager
def serving(url: str):
    store = Store(url)
    app = create_app(store, catalog=lambda project: load_catalog(store, project), models=lambda: ModelRegistry())
    try:
        with uvicorn_in_thread(app) as base:
            yield app, base
    finally:
        store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_generated_request_gets_a_server_error(backend, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_RATE_RUNS_PER_MINUTE", "0")
    monkeypatch.setenv("ASSAY_RATE_UPLOADS_PER_MINUTE", "0")
    with contextlib.ExitStack() as stack:
        url = f"sqlite:///{tmp_path / 'assay.db'}" if backend == "sqlite" else stack.enter_context(postgres_database())
        app, base = stack.enter_context(serving(url))
        document = one_route_per_handler(app.openapi(), project_openai=backend == "postgresql")
        schema = tmp_path / "openapi.json"
        schema.write_text(json.dumps(document))
        operations = sum(len(methods) for methods in document["paths"].values())
        st = Path(sys.executable).parent / "st"
        command = [str(st), "run", str(schema), "--url", base, "--checks", "not_a_server_error"]
        command += ["--max-examples", str(CASES_PER_OPERATION), "--seed", str(SEED), "--workers", "1"]
        command += ["--suppress-health-check", "all", "--generation-database", "none", "--no-color"]
        # The coverage phase's boundary shapes (some 5,000 requests, most of this test's time) reach
        # the binding every backend shares: it runs on SQLite; PostgreSQL gets the other three phases.
        command += ["--phases", PHASES[backend]]
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    report = done.stdout + done.stderr
    generated = re.search(r"(\d+) generated", report)
    assert operations >= LEAST_OPERATIONS[backend], "the document lost its operations"
    least = CASES_PER_OPERATION * operations if "coverage" in PHASES[backend] else operations * 5
    assert generated and int(generated.group(1)) >= least, report[-3000:]
    assert re.search(rf"Tested: {operations}\b", report), report[-3000:]  # no operation was skipped
    assert "Server error" not in report and done.returncode == 0, report[-6000:]
