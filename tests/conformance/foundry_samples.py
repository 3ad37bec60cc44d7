"""Microsoft's own samples against ``assay serve --tls``, unchanged.

The azure-ai-projects sdist ships runnable samples for evaluations, red teaming, agent insights and
evaluation datasets. Each runs here as its author wrote it: the only things set are environment
variables (the project endpoint, model and agent names, where to find the certificate) and a
credential, an ``az`` on PATH that answers ``az account get-access-token`` with the project's API
key, which ``DefaultAzureCredential`` (told by ``AZURE_TOKEN_CREDENTIALS`` to use the Azure CLI)
picks up the way it picks up a developer's ``az login``. Judges and targets are played by the
scripted OpenAI-compatible server. A sample passes when it exits 0.

Samples that need what assay can never be (Azure Resource Manager, Application Insights queries,
a Blob container behind real Azure auth) are listed in ``EXCLUDED`` with the reason and not run.

Run it as ``python -m tests.conformance.foundry_samples [NAME ...]``; ``make conformance`` runs the
whole set through pytest (``tests/conformance/test_foundry_samples.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx2 as httpx

from assay.evaluators.judges import DEFINITIONS
from assay.evaluators.judges.judge import JudgeDefinition
from assay.store import Store
from tests.evaluators.test_judges import reply_for
from tests.support.fixtures import LLMServer, start_llm_server
from tests.support.servers import start_assay_server

VERSION = "2.10.0"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "assay-conformance"
FOLDERS = ("evaluations", "red_team", "agent_insights")
MODEL = "gpt-4o-mini"
SECONDS = 240
ROOT = Path(__file__).resolve().parents[2]
SAMPLES_PYTHON = ROOT / ".venv-samples" / "bin" / "python"
"""The samples' own interpreter (``make conformance`` builds it): the packages their READMEs ask for,
some of which pin versions the test suite's venv must not take."""

EXCLUDED = {
    "sample_endpoint_evaluator_with_api_key.py": "creates a workspace connection through Azure Resource Manager "
    "(azure-mgmt-cognitiveservices)",
    "sample_endpoint_evaluator_with_entra_id.py": "creates a workspace connection through Azure Resource Manager "
    "(azure-mgmt-cognitiveservices)",
    "sample_evaluations_builtin_with_traces.py": "finds its trace ids with an Application Insights (Log Analytics) "
    "query, azure-monitor-query's LogsQueryClient, whose endpoint is Azure's",
    "sample_agent_insights_on_demand.py": "waits for its traces with an Application Insights (Log Analytics) query "
    "(LogsQueryClient, Azure's endpoint); its traces themselves do reach assay through the project's connection",
    "sample_agent_insights_scheduled.py": "waits for its traces with an Application Insights (Log Analytics) query "
    "(LogsQueryClient, Azure's endpoint); its traces themselves do reach assay through the project's connection",
}


@dataclass
class Outcome:
    sample: str
    exit_code: int | None
    seconds: float
    tail: str
    errored_items: int = 0
    """Output items the sample printed with ``status='error'`` (or a run's ``errored`` count): a
    sample that exits 0 over items that could not be scored has not passed."""

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.errored_items


def fetch_samples(cache: Path = CACHE) -> Path | None:
    """The sdist's ``samples`` folder, downloaded once into ``cache``; None when no package index
    can be reached (the caller says so)."""
    root = cache / f"azure_ai_projects-{VERSION}"
    if not (root / "samples").is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        download = [sys.executable, "-m", "pip", "download", f"azure-ai-projects=={VERSION}"]
        flags = ["--no-binary", ":all:", "--no-deps", "-q", "-d", str(cache)]
        if subprocess.run([*download, *flags], capture_output=True, timeout=300).returncode != 0:
            return None
        with tarfile.open(cache / f"azure_ai_projects-{VERSION}.tar.gz") as archive:
            archive.extractall(cache, filter="data")
    return root / "samples"


def sample_paths(samples: Path) -> list[Path]:
    found = [path for folder in FOLDERS for path in sorted((samples / folder).rglob("sample_*.py"))]
    found += sorted(samples.glob("datasets/sample_dataset_generation_job_*_for_evaluation*.py"))
    return found


AZ = """#!{python}
import json, sys, time
if sys.argv[1:3] != ["account", "get-access-token"]:
    sys.exit("this az answers only 'az account get-access-token'")
print(json.dumps({{"accessToken": {key!r}, "expires_on": int(time.time()) + 3600, "tokenType": "Bearer",
                  "subscription": "00000000-0000-0000-0000-000000000000", "tenant": "assay"}}))
"""


def judge_rules() -> list[dict[str, object]]:
    """The scripted provider's answers: each judge (found by its prompt's ``# Property:`` line) gets
    a passing verdict on its own scale, with every component's verdict beside it for the composite
    judges (output_quality, tool_use_quality), which ask about several properties in one call."""
    return [
        {
            "match": f"# Property: {d.name.replace('_', ' ')}\\n",
            "reply": {"content": json.dumps({**COMPONENTS, **json.loads(reply_for(d))})},
        }
        for d in DEFINITIONS
    ] + [{"match": "Write a rubric for judging this agent", "reply": {"content": json.dumps(RUBRIC)}}]


def judge_default() -> dict[str, object]:
    """A verdict for every composite judge's components (they ask about several in one call)."""
    return {"content": json.dumps({**COMPONENTS, "reason": "the scripted judge", "score": 4})}


def _high(definition: JudgeDefinition) -> object:
    return json.loads(reply_for(definition)).get("score", False)


COMPONENTS = {d.name: {"reason": f"{d.name}: looks right", "score": _high(d)} for d in DEFINITIONS}
RUBRIC = {
    "dimensions": [
        {"id": "answers_the_question", "description": "Answers what was asked.", "weight": 8},
        {"id": "stays_grounded", "description": "Uses only facts the context or tools gave.", "weight": 6},
        {"id": "clear", "description": "Is short and easy to follow.", "weight": 3},
    ]
}


@contextlib.contextmanager
def served(home: Path) -> Iterator[dict[str, str]]:
    """assay serve --tls with project ``p`` and its model, and the environment a sample runs in."""
    provider: LLMServer = start_llm_server()
    provider.script(rules=judge_rules(), default=judge_default(), fill_schemas=True)
    models = home / "models.yaml"
    models.write_text(
        f"default: {MODEL}\nmodels:\n"
        + "".join(
            f"  {name}: {{model: {name}, base_url: '{provider.base_url}', api_key: t}}\n"
            for name in (MODEL, "gpt-4o-audio-preview", "gpt-4o")
        )
    )
    store = Store(f"sqlite:///{home / 'assay.db'}")
    key = store.create_key("p")
    store.close()
    process, client = start_assay_server(home, models, tls=True, key=key, log=home / "server.log")
    client.close()
    tools = home / "bin"
    tools.mkdir()
    (tools / "az").write_text(AZ.format(python=sys.executable, key=key))
    (tools / "az").chmod(0o755)
    cert = str(home / "tls" / "cert.pem")
    endpoint = f"https://127.0.0.1:{client.base_url.port}/api/projects/p"
    environment = {
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
        "AZURE_TOKEN_CREDENTIALS": "AzureCliCredential",
        "SSL_CERT_FILE": cert,
        "REQUESTS_CA_BUNDLE": cert,
        "FOUNDRY_PROJECT_ENDPOINT": endpoint,
        "AZURE_AI_PROJECT_ENDPOINT": endpoint,
        "FOUNDRY_MODEL_NAME": MODEL,
        "AZURE_AI_MODEL_DEPLOYMENT_NAME": MODEL,
        "FOUNDRY_INSTANT_MODEL_NAME": MODEL,
        "AZURE_AI_MODEL_DEPLOYMENT_NAME_FOR_AUDIO": "gpt-4o-audio-preview",
        "POLL_INTERVAL_SECONDS": "1",
        "MODEL_ENDPOINT": endpoint.split("/api/")[0],
        "MODEL_API_KEY": key,
        "SAMPLES_LOG_DIR": str(home),
    }
    try:
        yield environment
    finally:
        process.terminate()
        process.wait(timeout=20)
        provider.stop()


def agent_name(sample: Path) -> str:
    """Each sample its own agent (samples create and delete the agent they are given: run side by
    side, they must not share one), named by Foundry's rule: letters, digits, inner hyphens, ≤ 63."""
    name = sample.stem.removeprefix("sample_").replace("_", "-")
    return name if len(name) <= 63 else f"{name[:54]}-{zlib.crc32(name.encode()):08x}"


def seed_agent(client: httpx.Client, name: str) -> str:
    """What a project whose agent has been talked to holds: the agent, one conversation with it
    (its id returned) and the trace of that turn, as a developer's project has before they run the
    samples that evaluate an agent's traffic."""
    definition = {"kind": "prompt", "model": MODEL, "instructions": "You answer questions about geography."}
    client.post(f"agents/{name}/versions", json={"definition": definition}).raise_for_status()
    conversation = client.post("openai/v1/conversations", json={}).raise_for_status().json()["id"]
    asked = {
        "conversation": conversation,
        "input": "What is the capital of France?",
        "agent_reference": {"type": "agent_reference", "name": name},
    }
    client.post("openai/v1/responses", json=asked).raise_for_status()
    return str(conversation)


ERRORED_ITEM = re.compile(r"status='error'")
ERRORED_COUNT = re.compile(r"errored=([1-9]\d*)")
ERROR_REASON = re.compile(r"""reason=(?:'([^']{0,200})'|"([^"]{0,200})"), status='error'""")


def run_sample(path: Path, environment: dict[str, str], seconds: float = SECONDS) -> Outcome:
    started = time.monotonic()
    env = {**os.environ, **environment, "PYTHONUNBUFFERED": "1", "FOUNDRY_AGENT_NAME": agent_name(path)}
    env["FOUNDRY_CONVERSATION_IDS"] = environment.get(f"conversation:{agent_name(path)}", "")
    env.pop("PYTHONPATH", None)
    try:
        done = subprocess.run(
            [str(SAMPLES_PYTHON), path.name], cwd=path.parent, env=env, capture_output=True, text=True, timeout=seconds
        )
        code: int | None = done.returncode
        said = (done.stderr or done.stdout).strip().splitlines()
        errored = max(len(ERRORED_ITEM.findall(done.stdout)), sum(map(int, ERRORED_COUNT.findall(done.stdout))))
    except subprocess.TimeoutExpired as exc:
        code, errored = None, 0
        said = [*str(exc.stdout or "").splitlines()[-5:], f"timed out after {seconds:.0f} s"]
    tail = "\n".join(said[-6:]) if code != 0 else ""
    if code == 0 and errored:
        reasons = sorted({quoted or double for quoted, double in ERROR_REASON.findall(done.stdout)})[:3]
        tail = f"exit 0, but {errored} errored item(s): " + "; ".join(reasons)
    if os.environ.get("KEEP_SAMPLES_HOME"):  # the whole of what it said, for whoever reads why it failed
        Path(environment["SAMPLES_LOG_DIR"], f"{path.stem}.log").write_text(
            f"{done.stdout if code is not None else ''}\n---- stderr\n{done.stderr if code is not None else ''}"
        )
    return Outcome(path.name, code, round(time.monotonic() - started, 1), tail, errored)


def run_all(names: list[str] | None = None, parallel: int = 6) -> tuple[list[Outcome], dict[str, str]] | None:
    samples = fetch_samples()
    if samples is None:
        return None
    paths = [path for path in sample_paths(samples) if not names or path.name in names or path.stem in names]
    excluded = {path.name: EXCLUDED[path.name] for path in paths if path.name in EXCLUDED}
    chosen = [path for path in paths if path.name not in EXCLUDED]
    home = Path(tempfile.mkdtemp(prefix="assay-samples-"))
    try:
        with served(home) as environment, ThreadPoolExecutor(parallel) as pool:
            key = environment["MODEL_API_KEY"]
            project = environment["FOUNDRY_PROJECT_ENDPOINT"] + "/"
            headers = {"Authorization": f"Bearer {key}"}
            trusted = ssl.create_default_context(cafile=environment["SSL_CERT_FILE"])
            with httpx.Client(base_url=project, headers=headers, verify=trusted) as client:
                for path in chosen:
                    environment[f"conversation:{agent_name(path)}"] = seed_agent(client, agent_name(path))
            outcomes = list(pool.map(lambda path: run_sample(path, environment), chosen))
    finally:
        if os.environ.get("KEEP_SAMPLES_HOME"):
            sys.stdout.write(f"server home kept: {home}\n")
        else:
            shutil.rmtree(home, ignore_errors=True)
    return outcomes, excluded


def report(outcomes: list[Outcome], excluded: dict[str, str]) -> str:
    passed = sum(outcome.passed for outcome in outcomes)
    lines = [f"Microsoft's samples (azure-ai-projects {VERSION}): {passed} of {len(outcomes)} exit 0, no item errored"]
    for outcome in outcomes:
        if not outcome.passed:
            lines.append(f"  FAIL {outcome.sample} (exit {outcome.exit_code}, {outcome.seconds} s)")
            lines.extend(f"       {line}" for line in outcome.tail.splitlines())
    lines.append(f"excluded, needing Azure-only services ({len(excluded)}):")
    lines.extend(f"  {name}: {why}" for name, why in sorted(excluded.items()))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="samples to run (file names or stems); all by default")
    parser.add_argument("--json", type=Path, help="also write the outcomes here")
    arguments = parser.parse_args()
    result = run_all(arguments.names)
    if result is None:
        sys.stdout.write(f"skipped: azure-ai-projects=={VERSION} sdist could not be downloaded (no package index?)\n")
        return 0
    outcomes, excluded = result
    sys.stdout.write(report(outcomes, excluded) + "\n")
    if arguments.json:
        arguments.json.write_text(json.dumps([asdict(outcome) for outcome in outcomes], indent=1))
    return 0 if all(outcome.passed for outcome in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
