"""azure-ai-evaluation's users switch by changing one import: the usage corpus, run by assay with
``azure.ai.evaluation`` replaced by ``assay.azure``, gives what the peer gave (recorded from
azure-ai-evaluation 1.18.10 by ``bench/azure_parity.py --record``): identical outputs for every
model-free case and every error case, the same keys and value types for every judged one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.azure.corpus import CASES, JUDGE_ANSWER, JUDGE_RULES, MODEL_FREE, agrees

HERE = Path(__file__).resolve().parent


def test_every_case_runs_unchanged_and_agrees_with_the_peer(llm, tmp_path):
    llm.script(rules=JUDGE_RULES, default=JUDGE_ANSWER)
    peer = {line["case"]: line for line in map(json.loads, (HERE / "peer_outputs.jsonl").read_text().splitlines())}
    found = subprocess.run(
        [sys.executable, str(HERE / "run_case.py"), "--base-url", llm.base_url, "--data", str(tmp_path), "--assay"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    ours = {line["case"]: line for line in map(json.loads, found.stdout.splitlines())}
    assert sorted(peer) == sorted(ours) == sorted(name for name, _, _ in CASES)
    failed = {name: ours[name].get("error") for name in ours if not ours[name]["ran"]}
    assert failed == {}
    differ = [name for name, kind, _ in CASES if not agrees(kind, peer[name], ours[name])]
    assert differ == []
    # Not a check that cannot fail: a model-free value off by one ulp would be a difference.
    assert sum(kind == MODEL_FREE for _, kind, _ in CASES) >= 20
    assert ours["f1_threshold"]["result"]["f1_score_threshold"] == 0.6
