"""What the engine and the store cost on top of the evaluator: an F1-only local run against a bare
loop of the same F1 calls on the same rows, in the same process and run.

    python bench/run_overhead.py [--rows 5000] [--words 40] [--repeat 3]

Prints items per second for each and their ratio (target: the run held to one process reaches at
least 0.6 of the bare loop, issue 55; the default, spread over the cores, is reported beside it).
The run is the whole local path: the rows read from JSONL, checked, bound, evaluated by the engine,
written to SQLite and summarised (``assay.run``: prepare, start, finish_run), held to one process
and as it runs by default (spread over this machine's cores: ``assay.run.processes``).

A third line is the floor of any such run: a hand-written loop doing only what a stored run cannot
skip (read the file to check it, read it again, F1, encode the item and its result as JSON, insert
both into SQLite in batches, one aggregate query), with no engine, no checks and no framework.
Its ratio to the bare loop says how much of the target is left to an engine at all. A fourth is
the bare loop split over as many forked processes as the run spreads over: how much the cores give
pure F1 work at the moment (on a shared machine it moves, and a spread run's ratio with it).

Each round measures every line once, so that a slower spell of the machine falls on all of them
alike, and the best round of each line is kept. Before each stored run the bench waits for what it
wrote before to reach the disk (``os.sync``), as it has by the time anyone starts a run by hand:
otherwise the last run's 5 MB, still being written back, held up this one's checkpoint (the
write-ahead log copied into the database, and synced, once in a 5,000-item run), and the ratio
moved from 0.50 to 0.70 from one bench run to the next.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from assay.dataset import Dataset
from assay.evaluators import load_catalog
from assay.evaluators.nlp import scores
from assay.run import EvalDefinition, RunOptions, finish_run, prepare, start
from assay.run.processes import ITEMS_PER_PROCESS, usable_cores
from assay.store import Store

WORDS = (
    "the a order refund account password shipping delivery customer support agent tool search lookup cancel "
    "return item price invoice address email phone warranty device network reset update status quickly today"
).split()
CRITERIA = [
    {
        "type": "azure_ai_evaluator",
        "name": "f1",
        "evaluator_name": "builtin.f1_score",
        "data_mapping": {"response": "{{item.response}}", "ground_truth": "{{item.ground_truth}}"},
    }
]


def rows(count: int, words: int) -> list[dict[str, str]]:
    rng = random.Random(7)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(words))

    return [{"response": text(), "ground_truth": text()} for _ in range(count)]


def bare(data: list[dict[str, str]]) -> float:
    started = time.perf_counter()
    for row in data:
        scores.f1(row["response"], row["ground_truth"])
    return len(data) / (time.perf_counter() - started)


def bare_spread(data: list[dict[str, str]], processes: int) -> float:
    """The bare loop split between ``processes`` forked processes (every n-th row each): what this
    machine's cores give pure F1 work, the ceiling of any spread run's ratio to one bare loop."""

    def loop(part: list[dict[str, str]]) -> None:
        for row in part:
            scores.f1(row["response"], row["ground_truth"])

    return forked(data, processes, loop)


def forked(data: list[Any], processes: int, work: Callable[[list[Any]], None]) -> float:
    """Items per second of ``work`` done on every ``processes``-th item of ``data`` in each of
    ``processes`` processes (this one and forked children), all at once."""
    started = time.perf_counter()
    children = []
    for index in range(1, processes):
        pid = os.fork()
        if pid == 0:
            work(data[index::processes])
            os._exit(0)
        children.append(pid)
    work(data[0::processes])
    for pid in children:
        os.waitpid(pid, 0)
    return len(data) / (time.perf_counter() - started)


def hand_written(path: Path, folder: Path, attempt: int) -> float:
    """The least a stored run of F1 does, written inline (see the module's docstring)."""
    os.sync()
    started = time.perf_counter()
    db = sqlite3.connect(folder / f"floor{attempt}.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE items (run TEXT, id INT, status TEXT, item TEXT, results TEXT, PRIMARY KEY (run, id))")
    db.execute("CREATE TABLE results (run TEXT, id INT, metric TEXT, passed INT, score REAL, PRIMARY KEY (run, id))")
    with path.open() as lines:
        count = sum(1 for line in lines if orjson.loads(line))
    items: list[tuple[object, ...]] = []
    results: list[tuple[object, ...]] = []

    def flush() -> None:
        db.executemany("INSERT INTO items VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", items)
        db.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", results)
        db.commit()
        items.clear()
        results.clear()

    with path.open() as lines:
        for index, line in enumerate(lines):
            row = orjson.loads(line)
            score = scores.f1(row["response"], row["ground_truth"])
            passed = score >= 0.5
            result = {"name": "f1", "metric": "f1_score", "score": score, "passed": passed, "threshold": 0.5}
            status = "pass" if passed else "fail"
            items.append(("run", index, status, orjson.dumps(row).decode(), orjson.dumps([result]).decode()))
            results.append(("run", index, "f1_score", passed, score))
            if len(items) == 200:
                flush()
    flush()
    db.execute("SELECT metric, count(*), sum(passed), avg(score) FROM results WHERE run = 'run' GROUP BY metric")
    db.close()
    return count / (time.perf_counter() - started)


def engine(path: Path, count: int, folder: Path, attempt: int, processes: int | None = None) -> float:
    """``processes``: None is the default (one per core here, the run calling no model)."""
    store = Store(f"sqlite:///{folder / f'run{attempt}-{processes}.db'}")
    os.sync()  # see the module's docstring
    try:
        started = time.perf_counter()
        definition = EvalDefinition(name="f1 only", testing_criteria=CRITERIA)
        prepared = prepare(definition, Dataset.from_path(path), load_catalog())
        outcome = finish_run(prepared, start(prepared, store), store, options=RunOptions(processes=processes))
        elapsed = time.perf_counter() - started
        assert outcome.evaluated_now == count and outcome.run.status == "completed"
        return count / elapsed
    finally:
        store.close()


def processes_for(rows: int) -> int:
    """What the default spreads an F1 run of ``rows`` over on this machine (``assay.run.processes``)."""
    return max(1, min(usable_cores(), rows // ITEMS_PER_PROCESS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--words", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = rows(args.rows, args.words)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in data))
        engine(path, args.rows, Path(folder), -1)  # warm: imports, the catalog, the first store
        spread_over = processes_for(args.rows)
        rounds = [
            (
                bare(data),
                bare_spread(data, spread_over),
                hand_written(path, Path(folder), i),
                engine(path, args.rows, Path(folder), i, processes=1),
                engine(path, args.rows, Path(folder), i),
            )
            for i in range(args.repeat)
        ]
        best_bare, best_bare_spread, best_floor, best_one, best_run = (
            max(column) for column in zip(*rounds, strict=True)
        )
    print(f"{args.rows} rows of {args.words}-word texts, best of {args.repeat}:")
    print(f"  bare loop of F1 calls  {best_bare:10.0f} items/s")
    print(f"  hand-written floor     {best_floor:10.0f} items/s  (read twice, F1, JSON, SQLite: no engine)")
    print(f"  assay run, 1 process   {best_one:10.0f} items/s")
    print(f"  assay run (F1 only)    {best_run:10.0f} items/s  ({spread_over} processes, the default)")
    print(
        f"  bare loop, {spread_over} processes {best_bare_spread:10.0f} items/s  "
        f"({best_bare_spread / best_bare:.2f}x one: what this machine's cores give F1 now)"
    )
    print(f"  floor / bare loop      {best_floor / best_bare:10.2f}  (the most any stored run could reach)")
    print(f"  1 process / floor      {best_one / best_floor:10.2f}  (what the engine itself costs)")
    print(f"  1 process / bare loop  {best_one / best_bare:10.2f}  (target >= 0.6)")
    print(f"  default / bare loop    {best_run / best_bare:10.2f}  ({spread_over} processes)")
    each = ", ".join(f"{alone / one:.2f}" for one, _, _, alone, _ in rounds)
    print(f"  each round, 1 process / bare loop: {each}")


if __name__ == "__main__":
    main()
