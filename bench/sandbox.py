"""What the sandbox costs per python-grader call, beside a plain subprocess, in one run.

    python bench/sandbox.py [--calls 40] [--concurrency 1,4]

Both sides run the same runner (``assay.sandbox.runner``) on the same grader: the sandboxed side
under bubblewrap (namespaces, an unprivileged uid, rlimits), the baseline as a plain subprocess
with the same rlimits. Prints median ms per call for each, their ratio, and calls per second at
each concurrency. Timing varies on a shared machine; the ratio is what to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import time

from assay.sandbox import Limits, Sandbox, bwrap, ceilings

GRADER = "def grade(sample, item):\n    return float(sample['output_text'] == item['reference'])\n"
KWARGS = {"sample": {"output_text": "Paris"}, "item": {"reference": "Paris"}}


async def _timed(sandbox: Sandbox, calls: int, concurrency: int) -> tuple[float, float]:
    """Median ms per call and calls per second."""
    latencies: list[float] = []
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            start = time.perf_counter()
            assert await sandbox.call(GRADER, "grade", KWARGS, Limits(seconds=30, memory_mb=512)) == 1.0
            latencies.append((time.perf_counter() - start) * 1000)

    began = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(calls)))
    return statistics.median(latencies), calls / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--concurrency", default="1,4")
    args = parser.parse_args()
    path = bwrap.find_bwrap()
    if path is None:
        sys.exit("bwrap is not installed: apt-get install bubblewrap")
    os.environ.pop("ASSAY_SANDBOX", None)
    logging.getLogger("assay.sandbox").setLevel(logging.ERROR)  # the baseline's "no bwrap" warning is on purpose
    sandboxed = Sandbox(path, required=True, ceiling=ceilings())
    plain = Sandbox(None, required=False, ceiling=ceilings())
    for concurrency in (int(c) for c in args.concurrency.split(",")):
        asyncio.run(_timed(plain, 4, 1))  # warm both paths once (page cache, imports)
        asyncio.run(_timed(sandboxed, 4, 1))
        plain_ms, plain_rate = asyncio.run(_timed(plain, args.calls, concurrency))
        box_ms, box_rate = asyncio.run(_timed(sandboxed, args.calls, concurrency))
        print(
            f"concurrency {concurrency}: plain subprocess {plain_ms:.1f} ms/call ({plain_rate:.1f}/s), "
            f"sandbox {box_ms:.1f} ms/call ({box_rate:.1f}/s); sandbox/plain {box_ms / plain_ms:.2f}x, "
            f"+{box_ms - plain_ms:.1f} ms per call"
        )


if __name__ == "__main__":
    main()
