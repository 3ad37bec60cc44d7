"""Judge throughput against the scripted OpenAI-compatible server, and against azure-ai-evaluation.

    python bench/judge_throughput.py [--latency-ms 200] [--seconds 4] [--rpm 1200]

1. At 8, 32 and 128 calls in flight against a server answering after ``--latency-ms``: judge calls
   per second as a fraction of the ceiling in-flight ÷ latency, and client CPU per call.
2. Against a server enforcing a requests-per-minute budget with 429s: calls per second as a
   fraction of the budget.
3. azure-ai-evaluation 1.18's ``evaluate()`` with its RelevanceEvaluator on the same server, at its
   default concurrency (``PF_WORKER_COUNT`` unset, i.e. 10), against assay at its default (64).

Each assay figure is an in-process run of the real engine (``builtin.relevance`` judge, cache off,
results written to a throwaway SQLite store); one more line gives 128 in flight with the cache on.
Targets: ≥ 0.9 of the limit, ≤ 2 ms CPU per call, ≥ 10× the peer.

What bounds the 128-in-flight figure on a small machine is client CPU per call: at 640 calls a
second one event loop has about 1.5 ms per call, less once completions arrive in waves. So each
level is also run once with ``transport: sdk`` (every request built by the openai SDK rather than
by ``assay.llm.http`` from the SDK's template), as the baseline the CPU column is compared with.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fixtures import LLMServer, start_llm_server  # noqa: E402

from assay.dataset import Dataset  # noqa: E402
from assay.evaluators import load_catalog  # noqa: E402
from assay.llm import ModelConfig, ModelRegistry  # noqa: E402
from assay.run import EvalDefinition, RunOptions, finish_run, prepare, start  # noqa: E402
from assay.run.engine import DEFAULT_CONCURRENCY  # noqa: E402
from assay.store import Store  # noqa: E402

PEER_PYTHON = ROOT / "bench/.peer-venv/bin/python"
ANSWER = '{"reason": "on topic", "score": 4}'
PEER_SCRIPT = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
from azure.ai.evaluation import RelevanceEvaluator, evaluate
from azure.ai.evaluation import OpenAIModelConfiguration
base_url, data, out = sys.argv[1:4]
config = OpenAIModelConfiguration(type="openai", base_url=base_url, api_key="test", model="gpt-4.1-mini")
started = time.perf_counter()
result = evaluate(data=data, evaluators={"relevance": RelevanceEvaluator(model_config=config)}, output_path=out)
seconds = time.perf_counter() - started
scores = [row.get("outputs.relevance.relevance") for row in result["rows"]]
print(json.dumps({"seconds": seconds, "rows": len(scores), "scored": sum(s is not None for s in scores)}))
"""


def rows(count: int) -> list[dict[str, str]]:
    return [
        {"query": f"How do I reset password number {i}?", "response": f"Use the reset link, step {i}."}
        for i in range(count)
    ]


def assay_run(
    server: LLMServer,
    count: int,
    in_flight: int,
    rpm: int | None = None,
    transport: str = "fast",
    cache: bool = False,
    tpm: int | None = None,
) -> tuple[float, float, int]:
    """(calls per second, CPU seconds, errored items) for one in-process run (``cache``: every call
    looked up in and written to the store's model-call cache, as ``assay run`` does by default)."""
    config = ModelConfig(
        name="judge",
        model="gpt-4.1-mini",
        base_url=server.base_url,
        api_key="t",
        max_concurrency=in_flight,
        rpm=rpm,
        tpm=tpm,
        max_retries=20,
        transport=transport,
    )
    criteria = [
        {
            "type": "azure_ai_evaluator",
            "name": "relevance",
            "evaluator_name": "builtin.relevance",
            "initialization_parameters": {"model": "judge"},
        }
    ]
    with tempfile.TemporaryDirectory() as folder:
        store = Store(f"sqlite:///{folder}/bench.db")
        models = ModelRegistry([config], cache=store if cache else None, cache_mode="use" if cache else "off")
        prepared = prepare(EvalDefinition("bench", criteria), Dataset.from_content(rows(count)), load_catalog(), models)
        run = start(prepared, store)
        wall, cpu = time.perf_counter(), time.process_time()
        outcome = finish_run(prepared, run, store, options=RunOptions(concurrency=in_flight))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        store.close()
    return count / wall, cpu, outcome.summary.result_counts.errored


class SteadyRate:
    """Completions per second as the server counts them, over the middle of a run: the first and last
    fifth (opening connections, the final partial wave) are left out, as they are fixed costs of a
    run, not throughput."""

    def __init__(self, server: LLMServer) -> None:
        self.server, self.samples, self.stop = server, [], threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self.stop.is_set():
            self.samples.append((time.perf_counter(), self.server.stats()["completions"]))
            self.stop.wait(0.1)

    def __enter__(self) -> SteadyRate:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()

    def rate(self) -> float:
        moving = [s for s, nxt in zip(self.samples, self.samples[1:], strict=False) if nxt[1] > s[1]]
        if len(moving) < 5:
            return float("nan")
        first, last = moving[len(moving) // 5], moving[-(len(moving) // 5) - 1]
        return (last[1] - first[1]) / (last[0] - first[0])


def measured(server: LLMServer, count: int, in_flight: int, rpm: int | None = None) -> tuple[float, float, float, int]:
    """Rate of a run of ``2 × count`` calls; CPU per successful call and per HTTP request (429s
    included) as the difference from a run of ``count``, so start-up costs paid once per run, such as
    building HTTP clients, are not spread over calls."""
    before = server.stats()["requests"]
    _, small_cpu, small_errors = assay_run(server, count, in_flight, rpm)
    middle = server.stats()["requests"]
    rate, cpu, errors = assay_run(server, 2 * count, in_flight, rpm)
    extra_requests = (server.stats()["requests"] - middle) - (middle - before)
    per_call = (cpu - small_cpu) / count * 1000
    return rate, per_call, (cpu - small_cpu) / max(1, extra_requests) * 1000, small_errors + errors


def in_flight_figures(
    server: LLMServer, count: int, in_flight: int, repeats: int, transport: str = "fast", cache: bool = False
) -> tuple[list[float], list[float], float, int]:
    """Steady and whole-run rates of ``repeats`` runs of ``count`` calls (this machine is noisy, so the
    median is reported), and the median CPU per call."""
    steady_rates, whole_rates, cpus, errors = [], [], [], 0
    for _ in range(repeats):
        _, small_cpu, small_errors = assay_run(server, count // 2, in_flight, transport=transport, cache=cache)
        with SteadyRate(server) as steady:
            rate, cpu, run_errors = assay_run(server, count, in_flight, transport=transport, cache=cache)
        steady_rates.append(steady.rate())
        whole_rates.append(rate)
        cpus.append((cpu - small_cpu) / (count // 2) * 1000)
        errors += small_errors + run_errors
    return steady_rates, whole_rates, statistics.median(cpus), errors


def peer_run(server: LLMServer, count: int) -> float | None:
    if not PEER_PYTHON.exists():
        print("  (bench/.peer-venv missing: run bench/nlp_throughput.py once to install the peer)")
        return None
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows(count)))
        env = {k: v for k, v in os.environ.items() if k != "PF_WORKER_COUNT"}
        output = subprocess.run(
            [str(PEER_PYTHON), "-c", PEER_SCRIPT, server.base_url, str(data), f"{folder}/out.json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=1800,
        )
    if output.returncode != 0:
        print("  peer failed:", output.stderr.strip().splitlines()[-3:])
        return None
    figures = json.loads(output.stdout.strip().splitlines()[-1])
    if figures["scored"] != figures["rows"]:
        print(f"  peer scored only {figures['scored']} of {figures['rows']} rows")
    return float(figures["rows"] / figures["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=4.0, help="target length of each in-flight run")
    parser.add_argument("--rpm", type=int, default=1200)
    parser.add_argument("--peer-rows", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3, help="runs per in-flight level (the median is reported)")
    args = parser.parse_args()
    server = start_llm_server()
    ok = True
    try:
        server.script(default={"content": ANSWER}, latency_ms=args.latency_ms)
        print(
            "\nsteady = the server's count of completions per second over the middle of a run; whole run = "
            "calls ÷ wall time, start-up and the last partial wave included"
        )
        print(f"medians of {args.repeats} runs per level (this machine is noisy)")
        print(
            f"\n{'in flight':>9} {'limit/s':>8} {'steady/s':>9} {'÷ limit':>8} {'whole run':>10} {'÷ limit':>8} "
            f"{'CPU ms/call':>12} {'errors':>7}  steady ÷ limit, each run "
            "| SDK transport: ÷ limit, CPU ms/call (× ours)"
        )
        for in_flight in (8, 32, 128):
            limit = in_flight / (args.latency_ms / 1000)
            count = max(in_flight * 8, int(limit * args.seconds))
            steadies, wholes, cpu, errors = in_flight_figures(server, count, in_flight, args.repeats)
            steady, rate = statistics.median(steadies), statistics.median(wholes)
            ok &= steady / limit >= 0.9 and cpu <= 2.0 and errors == 0
            each = " ".join(f"{value / limit:.2f}" for value in steadies)
            sdk_steadies, _, sdk_cpu, _ = in_flight_figures(server, count, in_flight, 1, transport="sdk")
            print(
                f"{in_flight:9d} {limit:8.0f} {steady:9.1f} {steady / limit:8.2f} {rate:10.1f} {rate / limit:8.2f} "
                f"{cpu:12.2f} {errors:7d}  {each:15} | {sdk_steadies[0] / limit:.2f}, {sdk_cpu:.2f} "
                f"({sdk_cpu / cpu:.1f}×)"
            )

        limit = 128 / (args.latency_ms / 1000)
        count = max(128 * 8, int(limit * args.seconds))
        steadies, wholes, cpu, errors = in_flight_figures(server, count, 128, args.repeats, cache=True)
        print(
            "\n128 in flight, cache on (the default; all misses, each looked up and stored): "
            f"steady {statistics.median(steadies) / limit:.2f} of the limit, "
            f"whole run {statistics.median(wholes) / limit:.2f}, CPU {cpu:.2f} ms/call, {errors} errors"
        )

        server.reset()
        server.script(default={"content": ANSWER}, latency_ms=20, rpm=args.rpm)
        budget = args.rpm / 60
        print(f"\nserver budget {args.rpm} requests/minute ({budget:.0f}/s), 64 in flight:")
        for told, label in ((None, "client not told the budget (429-driven)"), (args.rpm, "client told rpm")):
            before = server.stats()["by_status"].get("429", 0)
            rate, cpu, per_request, errors = measured(server, int(budget * 6), 64, told)
            throttled = server.stats()["by_status"].get("429", 0) - before
            ok &= rate / budget >= 0.9 and errors == 0
            print(
                f"  {label:42} {rate:6.1f}/s = {rate / budget:.2f} of the budget, {errors} errors, "
                f"{throttled} 429s absorbed; CPU {cpu:.2f} ms per call ({per_request:.2f} per request)"
            )

        server.reset()
        server.script(default={"content": ANSWER}, latency_ms=args.latency_ms)
        peer = peer_run(server, args.peer_rows)
        if peer is not None:
            ours, _, _ = assay_run(server, args.peer_rows * 8, DEFAULT_CONCURRENCY)
            ok &= ours / peer >= 10
            print(
                f"\ndefaults, {args.latency_ms} ms latency: assay {ours:.1f} calls/s ({DEFAULT_CONCURRENCY} in flight),"
                f" azure-ai-evaluation evaluate() {peer:.1f} rows/s (its default): {ours / peer:.1f}x"
            )
    finally:
        server.stop()
    print("\ntargets met" if ok else "\nsome targets missed")


if __name__ == "__main__":
    main()
