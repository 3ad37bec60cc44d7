"""Every command starts without importing what only its work needs (the start-up budget of
``bench/startup.py`` depends on it). Checked by module, not by time: a fresh interpreter loads each
command with its subcommands and reports which heavy packages came along."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from assay.cli.main import COMMANDS

# Each of these costs 50 ms to 1.5 s to import; a command pays for them only when it runs.
HEAVY = [
    "openai",
    "sqlalchemy",
    "alembic",
    "fastapi",
    "uvicorn",
    "nltk",
    "numpy",
    "jinja2",
    "aiohttp",
    "pydantic",
    "jsonschema",
    "yaml",
    "assay.store",
    "assay.run",
    "assay.config.evalyaml",
    "assay.llm",
]

PROBE = """
import json, sys
import click
from assay.cli.main import cli
command = cli.get_command(click.Context(cli), sys.argv[1])
for sub in getattr(command, "commands", {}).values():
    sub.get_params(click.Context(sub))  # what --help of a subcommand builds
print(json.dumps(sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules)))
"""


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_command_loads_without_the_heavy_packages(name):
    found = subprocess.run(
        [sys.executable, "-c", PROBE, name, json.dumps(HEAVY)], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(found.stdout) == [], f"`assay {name} --help` imports {found.stdout.strip()}"


def test_the_command_line_names_the_stores_default_project():
    from assay.cli.common import DEFAULT_PROJECT
    from assay.store import DEFAULT_PROJECT as STORE_DEFAULT

    assert DEFAULT_PROJECT == STORE_DEFAULT


def test_a_finished_run_prints_its_summary_without_the_web_server():
    """``assay run`` ends by asking whether a server runs on its store: that must not load FastAPI."""
    probe = "import sys, assay.cli.summary; print(sorted(m for m in ('fastapi', 'uvicorn', 'assay.api.app') if m in sys.modules))"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert found.stdout.strip() == "[]"
