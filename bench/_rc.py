"""What the engine costs per item, counted rather than timed: instructions and first-level cache
misses of an F1-only run held to one process, against a bare loop of the same F1 calls on the same
rows (``bench/run_overhead.py`` times the two).

    python bench/run_cost.py [--rows 1000] [--words 40]

On a shared machine the speed moves by half from one minute to the next, and a wall-clock ratio
cannot tell a change of a tenth from the noise; counts do not move. Each line runs in a process of
its own under valgrind's callgrind, the caches simulated, with the counting switched on only around
the measured part (``callgrind_control``), so imports, the warm-up and the data's making are left
out. Needs valgrind (Debian: ``apt-get install valgrind``).

The run is the whole local path, as in ``run_overhead.py``: the rows read from JSONL and checked,
the run started, evaluated, written to SQLite and summarised. Its fixed part (starting and closing
the run) is counted once in ``--rows`` items: at 1,000 rows it adds about 37,000 instructions an item.
A first-level cache miss costs the processor several instructions' time; the count of misses is why
the run's time ratio sits below its instruction ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run_overhead import CRITERIA, engine, rows

EVENTS = ("Ir", "I1mr", "D1mr")
"""Instructions, first-level instruction-cache and data-cache read misses."""


def child(line: str, count: int, words: int, signals: Path) -> None:
    """Under valgrind: make the rows, warm up, then run ``line`` between the parent's two signals."""
    from assay.dataset import Dataset
    from assay.evaluators import load_catalog
    from assay.evaluators.nlp import scores
    from assay.run import EvalDefinition, RunOptions, finish_run, prepare, start
    from assay.store import Store

    data = rows(count, words)
    folder = Path(tempfile.mkdtemp())
    path = folder / "data.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in data))
    engine(path, count, folder, -1, processes=1)  # imports, the catalog, the first store
    store = Store(f"sqlite:///{folder / 'counted.db'}")  # made before, as run_overhead's clock starts after
    catalog = load_catalog()
    handshake(signals, "ready")
    if line == "bare":
        for row in data:
            scores.f1(row["response"], row["ground_truth"])
    else:
        prepared = prepare(EvalDefinition(name="f1 only", testing_criteria=CRITERIA), Dataset.from_path(path), catalog)
        finish_run(prepared, start(prepared, store), store, options=RunOptions(processes=1))
    handshake(signals, "done")
    store.close()
    shutil.rmtree(folder)


def handshake(signals: Path, name: str) -> None:
    (signals / name).touch()
    while not (signals / f"{name}.go").exists():
        time.sleep(0.02)


def counted(line: str, count: int, words: int) -> dict[str, int]:
    """The events of ``line`` (``bare`` or ``run``) over ``count`` rows, counted by callgrind."""
    folder = tempfile.mkdtemp(); print(folder)
    if True:
        signals, out = Path(folder), Path(folder) / "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            "--cache-sim=yes",
            "--instr-atstart=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            __file__,
            "--child",
            line,
            f"--rows={count}",
            f"--words={words}",
            f"--signals={signals}",
        ]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name, switch in (("ready", "on"), ("done", "off")):
            while not (signals / name).exists():
                if process.poll() is not None:
                    raise SystemExit(f"the {line} line ended before it was counted (exit {process.returncode})")
                time.sleep(0.05)
            subprocess.run(["callgrind_control", "-i", switch, str(process.pid)], check=True, capture_output=True)
            (signals / f"{name}.go").touch()
        if process.wait() != 0:
            raise SystemExit(f"the {line} line failed (exit {process.returncode})")
        return totals(out)


def totals(out: Path) -> dict[str, int]:
    """The ``totals:`` line of a callgrind output file, by event name (its ``summary:`` line holds
    what was counted before the counting was switched on: nothing)."""
    names: list[str] = []
    for text in out.read_text().splitlines():
        if text.startswith("events:"):
            names = text.split()[1:]
        elif text.startswith("totals:"):
            found = dict(zip(names, (int(value) for value in text.split()[1:]), strict=False))
            return {event: found.get(event, 0) for event in EVENTS}
    raise SystemExit(f"{out} has no totals")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--words", type=int, default=40)
    parser.add_argument("--child", choices=("bare", "run"), help=argparse.SUPPRESS)
    parser.add_argument("--signals", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.rows, args.words, args.signals)
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("run_cost: skipped, valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return
    bare, run = (counted(line, args.rows, args.words) for line in ("bare", "run"))
    print(f"{args.rows} rows of {args.words}-word texts, per item (callgrind, caches simulated):")
    print(f"  {'':24}{'instructions':>14}{'I1 misses':>12}{'D1 misses':>12}")
    for label, found in (("bare loop of F1 calls", bare), ("assay run, 1 process", run)):
        ir, i1, d1 = (found[event] / args.rows for event in EVENTS)
        print(f"  {label:24}{ir:>14.0f}{i1:>12.0f}{d1:>12.0f}")
    print(f"  instructions, bare loop / run  {bare['Ir'] / run['Ir']:.2f}")
    misses = (run["I1mr"] + run["D1mr"] - bare["I1mr"] - bare["D1mr"]) / args.rows
    print(f"  first-level misses the run adds per item  {misses:.0f}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")  # the same counts from one bench run to the next
    main()
