"""Simulated conversations per hour against the scripted server, as a fraction of the ceiling.

    python bench/simulation.py [--latency-ms 500] [--turns 4] [--waves 2]

A simulated conversation of T turns makes 2·T calls one after another (the simulated user, then
the target), so C conversations in flight against a server answering after L seconds can finish
at most C·3600 / (2·T·L) conversations an hour. At C = 8, 64 and 256 the real engine runs a
``conversation_gen_preview``-style simulation (``assay.simulate`` through ``prepare``/``finish_run``,
a model target, results written to a throwaway SQLite store, cache off) over ``--waves`` × C
scenarios whose simulated user never stops, and the rate it reaches is printed beside the
ceiling. Target: >= 0.9 at every level. For scale, tau2-bench publishes 626 simulations an hour
with 6 processes × 10 in flight.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fixtures import start_llm_server  # noqa: E402

from assay.dataset import Dataset  # noqa: E402
from assay.evaluators import load_catalog  # noqa: E402
from assay.llm import ModelConfig, ModelRegistry  # noqa: E402
from assay.run import EvalDefinition, RunOptions, finish_run, prepare, start  # noqa: E402
from assay.simulate.runs import conversation_gen_settings, scenario_dataset  # noqa: E402
from assay.store import Store  # noqa: E402
from assay.targets import TargetSpec  # noqa: E402

CRITERIA = [
    {
        "type": "string_check",
        "name": "ended",
        "input": "{{item.termination_reason}}",
        "reference": "max_turns",
        "operation": "eq",
    }
]


def measure(base_url: str, store: Store, in_flight: int, turns: int, waves: int) -> tuple[float, int]:
    """(seconds, conversations) for ``waves`` × ``in_flight`` conversations of ``turns`` turns."""
    configs = [
        ModelConfig(name=name, model=name, base_url=base_url, api_key="t", max_concurrency=1024)
        for name in ("user", "agent")
    ]
    models = ModelRegistry(configs)  # no cache: every call goes to the server
    params = {"type": "conversation_gen_preview", "model": "user", "max_turns": turns, "num_conversations": 1}
    target = TargetSpec(kind="model", model="agent", simulation=conversation_gen_settings(params))
    scenarios = [
        {"test_case_description": f"Scenario {i}: ask about order {1000 + i}."} for i in range(in_flight * waves)
    ]
    dataset = scenario_dataset(Dataset.from_content(scenarios), target.simulation)
    prepared = prepare(EvalDefinition("simulation", CRITERIA), dataset, load_catalog(), models=models, target=target)
    run = start(prepared, store)
    started = time.perf_counter()
    outcome = finish_run(prepared, run, store, options=RunOptions(concurrency=in_flight))
    seconds = time.perf_counter() - started
    assert outcome.summary.result_counts.passed == len(scenarios), outcome.summary.result_counts
    return seconds, len(scenarios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency-ms", type=float, default=500)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--waves", type=int, default=2)
    args = parser.parse_args()
    server = start_llm_server()
    latency = args.latency_ms / 1000
    user_turn = json.dumps({"message": "And what about the delivery date?", "done": False})
    server.script(
        rules=[{"match": "role-playing a user", "reply": {"content": user_turn}}],
        default={"content": "It arrives on Friday."},
        latency_ms=args.latency_ms,
    )
    ok = True
    try:
        with tempfile.TemporaryDirectory() as folder:
            store = Store(f"sqlite:///{folder}/simulation.db")
            print(f"{args.turns} turns, {args.latency_ms:.0f} ms per call, {args.waves} waves per level")
            for in_flight in (8, 64, 256):
                seconds, done = measure(server.base_url, store, in_flight, args.turns, args.waves)
                rate = done / seconds * 3600
                ceiling = in_flight * 3600 / (2 * args.turns * latency)
                ok &= rate / ceiling >= 0.9
                print(
                    f"  {in_flight:3d} in flight: {rate:8.0f} conversations/hour, ceiling {ceiling:8.0f}: "
                    f"{rate / ceiling:.2f}"
                )
            store.close()
    finally:
        server.stop()
    print("target met (>= 0.9 at every level)" if ok else "target missed")


if __name__ == "__main__":
    main()
