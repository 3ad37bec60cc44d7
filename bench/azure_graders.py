"""azure-ai-evaluation's grader wrappers two ways: the peer's own ``evaluate()`` sending its graders
to ``assay serve`` as its Evals API (what a user pointing ``azure_endpoint`` at assay gets), and
``assay.azure.evaluate()`` running them in-process. Prints whether every grader column and metric
agrees.

    python bench/azure_graders.py

The peer is installed in ``bench/.peer-venv`` on first use (bench/nlp_throughput.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nlp_throughput import PEER_PYTHON, ensure_peer

ROOT = Path(__file__).resolve().parents[1]
ROWS = [
    {"query": "What is the refund window?", "response": "30 days"},
    {"query": "Hi there", "response": "hello"},
    {"query": "What is up?", "response": "nothing much"},
]
CASE = """
import json, sys
{imports}
config = {config}
evaluators = {{
    "asks": AzureOpenAIStringCheckGrader(model_config=config, input="{{{{item.query}}}}", name="asks",
                                         operation="like", reference="?"),
    "close": AzureOpenAITextSimilarityGrader(model_config=config, input="{{{{item.response}}}}", reference="30 days",
                                             evaluation_metric="fuzzy_match", pass_threshold=0.5, name="close"),
    "polite": AzureOpenAIStringCheckGrader(model_config=config, input="{{{{item.response}}}}", name="polite",
                                           operation="ilike", reference="HELLO"),
}}
result = evaluate(data=sys.argv[1], evaluators=evaluators)
print(json.dumps({{"rows": result["rows"], "metrics": result["metrics"]}}, default=str))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(python: str, package: str, config: dict, data: Path, env: dict[str, str]) -> dict:
    names = "AzureOpenAIStringCheckGrader, AzureOpenAITextSimilarityGrader, evaluate"
    code = CASE.format(imports=f"from {package} import {names}", config=json.dumps(config))
    done = subprocess.run([python, "-c", code, str(data)], capture_output=True, text=True, env=env, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"{package} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def outputs(found: dict) -> list[dict]:
    return [{k: v for k, v in row.items() if k.startswith("outputs.")} for row in found["rows"]]


def main() -> None:
    ensure_peer()
    with tempfile.TemporaryDirectory() as folder:
        home, data = Path(folder) / "home", Path(folder) / "data.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
        (Path(folder) / "models.yaml").write_text("models: {}\n")
        port = free_port()
        env = {**os.environ, "ASSAY_HOME": str(home)}
        env.pop("ASSAY_DATABASE_URL", None)
        models = str(Path(folder) / "models.yaml")
        server = subprocess.Popen(
            [sys.executable, "-m", "assay", "serve", "--port", str(port), "--models", models],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            time.sleep(4)
            config = {"azure_endpoint": f"http://127.0.0.1:{port}", "azure_deployment": "d", "api_key": "local"}
            config["api_version"] = "2025-04-01-preview"
            peer = run(str(PEER_PYTHON), "azure.ai.evaluation", config, data, {"PATH": "/usr/bin:/bin"})
        finally:
            server.terminate()
            server.wait(timeout=30)
        ours = run(sys.executable, "assay.azure", config, data, {**env, "ASSAY_HOME": str(Path(folder) / "local")})
    same_rows = outputs(peer) == outputs(ours)
    same_metrics = peer["metrics"] == ours["metrics"]
    print(f"peer (graders sent to assay serve) vs assay.azure (in-process), {len(ROWS)} rows, 3 graders:")
    print(f"  output columns identical: {same_rows}")
    print(f"  metrics identical:        {same_metrics}  {peer['metrics']}")
    if not (same_rows and same_metrics):
        print(json.dumps({"peer": outputs(peer), "assay": outputs(ours)}, indent=1)[:4000])


if __name__ == "__main__":
    main()
