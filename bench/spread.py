"""What spreading a model-free run over this machine's cores gives, metric by metric: for F1, ROUGE-L,
BLEU and METEOR, a bare loop of the metric on the same rows, the run held to one process, and the
run as it runs by default (one process per core, ``assay.run.processes``), in one run.

    python bench/spread.py [--rows 5000] [--words 40] [--repeat 2] [--metrics f1,rouge,bleu,meteor]

Prints items per second and each run's ratio to the bare loop. The cheaper the metric, the more the
engine and the store weigh (``bench/run_overhead.py`` takes F1 apart); the dearer, the closer a run
comes to the number of cores.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from assay.dataset import Dataset
from assay.evaluators import load_catalog
from assay.evaluators.nlp import scores
from assay.evaluators.nlp.tokenize import nltk_tokenize
from assay.run import EvalDefinition, RunOptions, finish_run, prepare, start
from assay.run.processes import ITEMS_PER_PROCESS, usable_cores
from assay.store import Store
from run_overhead import rows

METRICS: dict[str, tuple[str, Callable[[str, str], object]]] = {
    "f1": ("builtin.f1_score", scores.f1),
    "rouge": ("builtin.rouge_score", lambda response, truth: scores.rouge("rougeL", response, truth)),
    "bleu": ("builtin.bleu_score", lambda response, truth: scores.bleu(nltk_tokenize(truth), nltk_tokenize(response))),
    "meteor": (
        "builtin.meteor_score",
        lambda response, truth: scores.meteor(nltk_tokenize(truth), nltk_tokenize(response), 0.9, 3.0, 0.5),
    ),
}


def bare(metric: Callable[[str, str], object], data: list[dict[str, str]]) -> float:
    started = time.perf_counter()
    for row in data:
        metric(row["response"], row["ground_truth"])
    return len(data) / (time.perf_counter() - started)


def run(evaluator: str, path: Path, folder: Path, name: str, processes: int | None) -> float:
    criteria = [{"type": "azure_ai_evaluator", "name": "m", "evaluator_name": evaluator}]
    store = Store(f"sqlite:///{folder / f'{name}.db'}")
    try:
        started = time.perf_counter()
        prepared = prepare(EvalDefinition("spread", criteria), Dataset.from_path(path), load_catalog())
        outcome = finish_run(prepared, start(prepared, store), store, options=RunOptions(processes=processes))
        elapsed = time.perf_counter() - started
        assert outcome.run.status == "completed"
        return outcome.evaluated_now / elapsed
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--words", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--metrics", default=",".join(METRICS))
    args = parser.parse_args()
    data = rows(args.rows, args.words)
    cores = max(1, min(usable_cores(), args.rows // ITEMS_PER_PROCESS))
    print(f"{args.rows} rows of {args.words}-word texts, best of {args.repeat}; the default spreads over {cores}:")
    print(f"  {'metric':8s} {'bare loop':>12s} {'1 process':>12s} {'ratio':>6s} {'default':>12s} {'ratio':>6s}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "data.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in data))
        for name in args.metrics.split(","):
            evaluator, metric = METRICS[name]
            run(evaluator, path, folder, f"{name}-warm", 1)  # imports, NLTK's data, the first store
            best_bare = max(bare(metric, data) for _ in range(args.repeat))
            one = max(run(evaluator, path, folder, f"{name}-one-{i}", 1) for i in range(args.repeat))
            spread = max(run(evaluator, path, folder, f"{name}-spread-{i}", None) for i in range(args.repeat))
            print(
                f"  {name:8s} {best_bare:10.0f}/s {one:10.0f}/s {one / best_bare:6.2f} "
                f"{spread:10.0f}/s {spread / best_bare:6.2f}"
            )


if __name__ == "__main__":
    main()
