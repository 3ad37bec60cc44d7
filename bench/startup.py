"""How long ``assay`` takes before it does anything, against starting Python itself.

    python bench/startup.py [--repeats 10]

Each command is started ``--repeats`` times (after one warm-up run, so the OS file cache is
warm); the median wall time is printed beside ``python -c pass`` measured in the same run, and
the ratio. Target: ``assay --help`` and a command's own ``--help`` within 15× of bare Python.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = [["--help"], ["run", "--help"], ["serve", "--help"], ["simulate", "--help"], ["traces", "list"]]


def median_seconds(argv: list[str], repeats: int, env: dict[str, str]) -> float:
    subprocess.run(argv, capture_output=True, env=env, check=False)  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=env, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = {"ASSAY_HOME": home, "PATH": "/usr/bin:/bin"}
        baseline = median_seconds([sys.executable, "-c", "pass"], args.repeats, env)
        print(f"python -c pass: {baseline * 1000:.0f} ms")
        ok = True
        for command in COMMANDS:
            seconds = median_seconds([sys.executable, "-m", "assay", *command], args.repeats, env)
            ratio = seconds / baseline
            target = command[-1] == "--help"
            ok &= ratio <= 15 or not target
            print(
                f"assay {' '.join(command):16} {seconds * 1000:6.0f} ms  {ratio:5.1f}×"
                f"{'' if target else '  (opens the store: no target)'}"
            )
    print("target met (help within 15× of python -c pass)" if ok else "target missed")


if __name__ == "__main__":
    main()
