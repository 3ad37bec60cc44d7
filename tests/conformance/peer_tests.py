"""azure-ai-evaluation's own unit tests, run against ``assay.azure`` with the import swapped.

The peer's sdist ships its unit tests. The files that test its evaluators and ``evaluate()`` through
what users call are copied with ``azure.ai.evaluation`` replaced by ``assay.azure``, given the two
fixtures they use from the peer's conftest (which needs Azure's internal test tooling), and run.
Each test that fails is reported with the first line of its error: a test that mocks the peer's
internals (its prompty flow, its private modules) fails here by design, and says so.

Run it as ``python -m tests.conformance.peer_tests``; ``make conformance`` runs it through pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ElementTree
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tests.conformance.foundry_samples import CACHE

VERSION = "1.18.10"
FILES = (
    "test_built_in_evaluator.py",
    "test_completeness_evaluator.py",
    "test_conversation_input.py",
    "test_document_retrieval_evaluator.py",
    "test_groundedness_evaluator.py",
    "test_qa_evaluator.py",
    "test_task_completion_evaluator.py",
    "test_task_navigation_efficiency_evaluators.py",
    "test_tool_call_accuracy_evaluator.py",
    "test_tool_input_accuracy_evaluator.py",
    "test_tool_selection_evaluator.py",
)
"""The peer's unit-test files about its evaluators, as users call them."""
CONFTEST = """
import pytest
from assay.azure import AzureOpenAIModelConfiguration


@pytest.fixture(scope="session")
def mock_model_config():
    return AzureOpenAIModelConfiguration(
        azure_endpoint="https://Sanitized.api.cognitive.microsoft.com",
        api_key="aoai-api-key",
        api_version="2023-07-01-preview",
        azure_deployment="aoai-deployment",
    )


@pytest.fixture(scope="session")
def mock_project_scope():
    return {"subscription_id": "00000000", "resource_group_name": "rg", "project_name": "p"}
"""


@dataclass
class Outcome:
    test: str
    passed: bool
    reason: str


def fetch_tests(cache: Path = CACHE) -> Path | None:
    root = cache / f"azure_ai_evaluation-{VERSION}"
    if not (root / "tests" / "unittests").is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        download = [sys.executable, "-m", "pip", "download", f"azure-ai-evaluation=={VERSION}"]
        flags = ["--no-binary", ":all:", "--no-deps", "-q", "-d", str(cache)]
        if subprocess.run([*download, *flags], capture_output=True, timeout=300).returncode != 0:
            return None
        with tarfile.open(cache / f"azure_ai_evaluation-{VERSION}.tar.gz") as archive:
            archive.extractall(cache, filter="data")
    return root / "tests" / "unittests"


def run_all() -> list[Outcome] | None:
    source = fetch_tests()
    if source is None:
        return None
    folder = Path(tempfile.mkdtemp(prefix="assay-peer-tests-"))
    tests = folder / "peer"
    tests.mkdir()
    for name in FILES:
        text = (source / name).read_text(encoding="utf-8").replace("azure.ai.evaluation", "assay.azure")
        (tests / name).write_text(text, encoding="utf-8")
    (tests / "conftest.py").write_text(CONFTEST)
    (folder / "pytest.ini").write_text("[pytest]\n")
    report = folder / "junit.xml"
    env = {**os.environ, "ASSAY_HOME": str(folder / ".assay")}
    env.pop("PYTHONPATH", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    command.append("--continue-on-collection-errors")
    subprocess.run(
        [*command, "-c", str(folder / "pytest.ini"), f"--junitxml={report}", str(tests)],
        cwd=folder,
        env=env,
        capture_output=True,
        timeout=1200,
    )
    outcomes = []
    for case in ElementTree.parse(report).getroot().iter("testcase"):  # noqa: S314 - our own pytest's report
        name = f"{case.get('classname', '').split('.')[-1]}::{case.get('name')}"
        problem = next((child for child in case if child.tag in ("failure", "error")), None)
        skipped = next((child for child in case if child.tag == "skipped"), None)
        if skipped is not None:
            continue
        reason = "" if problem is None else _cause(problem)
        outcomes.append(Outcome(name, problem is None, reason))
    return outcomes


def _cause(problem: ElementTree.Element) -> str:
    """The error a failed test ends on (``E   ...``), else its message's first line."""
    said = [line[1:].strip() for line in (problem.text or "").splitlines() if line.startswith("E ")]
    if said:
        return said[-1][:200]
    return (problem.get("message") or "").strip().split("\n")[0][:200]


def report(outcomes: list[Outcome]) -> str:
    passed = sum(outcome.passed for outcome in outcomes)
    share = passed / len(outcomes) if outcomes else 0.0
    lines = [
        f"azure-ai-evaluation {VERSION}'s unit tests on assay.azure: {passed} of {len(outcomes)} pass ({share:.0%})"
    ]
    causes = Counter(outcome.reason for outcome in outcomes if not outcome.passed)
    lines += [f"  {count:3d} × {cause}" for cause, count in causes.most_common()]
    return "\n".join(lines)


def main() -> int:
    outcomes = run_all()
    if outcomes is None:
        sys.stdout.write(f"skipped: azure-ai-evaluation=={VERSION}'s sdist could not be downloaded\n")
        return 0
    sys.stdout.write(report(outcomes) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
