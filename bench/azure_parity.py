"""The azure-ai-evaluation usage corpus run twice: by the peer, and by assay with only the import
changed. Prints, per case, whether it ran on each side and whether the outputs agree (identical
for model-free cases; the same keys and value types for judged ones, whose prompts differ), then
the counts. With ``--record`` it writes the peer's outputs to ``tests/azure/peer_outputs.jsonl``,
the goldens ``tests/azure/test_parity.py`` checks assay against in the suite.

    python bench/azure_parity.py [--record]

The peer is installed in ``bench/.peer-venv`` on first use (as bench/nlp_throughput.py does); the
judge is the tests' scripted OpenAI-compatible server, answering every call the same way.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from nlp_throughput import PEER_PYTHON, ensure_peer, peer_nltk_data

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.azure.corpus import CASES, JUDGE_ANSWER, JUDGE_RULES, agrees  # noqa: E402
from tests.support.fixtures import start_llm_server  # noqa: E402

RUNNER = ROOT / "tests" / "azure" / "run_case.py"
GOLDENS = ROOT / "tests" / "azure" / "peer_outputs.jsonl"


def outcomes(python: str, base_url: str, data: Path, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    found = subprocess.run(
        [python, str(RUNNER), "--base-url", base_url, "--data", str(data), *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
        check=True,
    )
    # The peer's evaluate() prints its own summary to stdout: only the runner's lines are outcomes.
    lines = [json.loads(line) for line in found.stdout.splitlines() if line.startswith('{"case"')]
    return {line["case"]: line for line in lines}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--record", action="store_true", help="Write the peer's outputs as the suite's goldens.")
    args = parser.parse_args()
    ensure_peer()
    llm = start_llm_server()
    try:
        llm.script(rules=JUDGE_RULES, default=JUDGE_ANSWER)
        with tempfile.TemporaryDirectory() as folder:
            env = {"NLTK_DATA": str(peer_nltk_data()), "PATH": "/usr/bin:/bin"}
            peer = outcomes(str(PEER_PYTHON), f"{llm.base_url}", Path(folder) / "peer", env=env)
            ours = outcomes(sys.executable, f"{llm.base_url}", Path(folder) / "assay", "--assay")
    finally:
        llm.stop()
    counts = {"cases": 0, "peer ran": 0, "assay ran": 0, "agree": 0}
    for name, kind, _ in CASES:
        p, o = peer.get(name, {}), ours.get(name, {})
        same = agrees(kind, p, o)
        counts["cases"] += 1
        counts["peer ran"] += bool(p.get("ran"))
        counts["assay ran"] += bool(o.get("ran"))
        counts["agree"] += same
        sides = [f"{side} {'ran' if found.get('ran') else 'FAILED':6}" for side, found in (("peer", p), ("assay", o))]
        print(f"{name:34} {kind:10} {' '.join(sides)} {'agree' if same else 'DIFFER'}")
    print(", ".join(f"{key}: {value}" for key, value in counts.items()))
    if args.record:
        GOLDENS.write_text(
            "".join(json.dumps(peer[name]) + "\n" for name, _, _ in CASES if name in peer), encoding="utf-8"
        )
        print(f"wrote {GOLDENS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
