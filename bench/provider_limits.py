"""Throughput where the provider sets the limit, assay not told it.

    python bench/provider_limits.py [--seconds 40] [--tpm 300000] [--rpm 1200]

The scripted server enforces a budget the way OpenAI and Azure OpenAI do: a tokens-per-minute
budget charged each request's prompt tokens (by the server's own tokenizer, which is not assay's
guess) and its completion, or a requests-per-minute budget, each a bucket holding one second's
allowance, refusing with 429 and ``retry-after-ms``, and stating its limits in ``x-ratelimit-*``
headers on every answer. The real engine runs ``builtin.relevance`` judge calls against it at 64
in flight, with no ``tpm``/``rpm`` configured.

Reported per budget: tokens (or requests) per minute the server let through over the steady part of
the run (the first and last fifth left out), as a fraction of the budget, and the share of requests
answered 429 over the whole run. Targets: ≥ 0.95 of the budget, ≤ 5% answered 429. Each line also
shows the same server without the headers (429s alone to go by), for comparison.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests.support.fixtures import LLMServer, start_llm_server  # noqa: E402

from judge_throughput import ANSWER, assay_run  # noqa: E402

IN_FLIGHT = 64
CHARS_PER_TOKEN = 3.3  # the server's tokenizer: assay's first guess (4) is wrong until it calibrates


def steady_share(charged: list[list[float]], per_minute: float) -> float:
    """What the server let through per minute over the middle three fifths, over the budget."""
    times = sorted(charged)
    start, end = times[0][0], times[-1][0]
    low, high = start + (end - start) / 5, end - (end - start) / 5
    inside = sum(amount for at, amount in times if low <= at < high)
    return inside / (high - low) * 60 / per_minute


def one(server: LLMServer, budget: dict[str, object], headers: bool, seconds: float) -> tuple[float, float, int]:
    """(share of the budget used, share of requests answered 429, errored items) of one run."""
    server.reset()
    server.script(
        default={"content": ANSWER},
        latency_ms=200,
        chars_per_token=CHARS_PER_TOKEN,
        limit_headers=headers,
        **budget,
    )
    # One request's size, as the server counts it, from a single call made before the run.
    assay_run(server, 1, 1)
    stats = server.stats()
    first = stats["charged"]
    if "tpm" in budget:
        per_call = sum(amount for _, amount in first)
        count = int(float(budget["tpm"]) / 60 * seconds / per_call)  # type: ignore[arg-type]
    else:
        count = int(float(budget["rpm"]) / 60 * seconds)  # type: ignore[arg-type]
    server.reset()
    server.script(
        default={"content": ANSWER}, latency_ms=200, chars_per_token=CHARS_PER_TOKEN, limit_headers=headers, **budget
    )
    _, _, errors = assay_run(server, count, IN_FLIGHT)
    stats = server.stats()
    refused = stats["by_status"].get("429", 0) / max(1, stats["requests"])
    if "tpm" in budget:
        share = steady_share(stats["charged"], float(budget["tpm"]))  # type: ignore[arg-type]
    else:
        share = steady_share([[at, 1.0] for at in stats["arrivals"]], float(budget["rpm"]))  # type: ignore[arg-type]
        share *= stats["completions"] / max(1, stats["requests"])  # arrivals include the refused
    return share, refused, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=40.0, help="the length each run aims at")
    parser.add_argument("--tpm", type=int, default=300_000)
    parser.add_argument("--rpm", type=int, default=1200)
    args = parser.parse_args()
    server = start_llm_server()
    ok = True
    try:
        for label, budget in (("tokens", {"tpm": args.tpm}), ("requests", {"rpm": args.rpm})):
            print(f"server budget {list(budget.values())[0]:,} {label}/minute, {IN_FLIGHT} in flight, assay not told:")
            for headers in (True, False):
                share, refused, errors = one(server, budget, headers, args.seconds)
                if headers:
                    ok &= share >= 0.95 and refused <= 0.05 and errors == 0
                said = "stated in x-ratelimit-* headers" if headers else "no headers (429s alone)"
                print(f"  {said:34} {share:.2f} of the budget, {refused:.1%} of requests 429, {errors} errors")
    finally:
        server.stop()
    print("\ntargets met" if ok else "\nsome targets missed")


if __name__ == "__main__":
    main()
