"""One side of the NLP benchmark, run in its own process: time one evaluator over the rows.

Usage: python _nlp_worker.py assay|peer EVALUATOR ROWS_JSONL SCORES_OUT
Prints one JSON line: rows, seconds, peak_rss_mb. Runs under assay's venv or the peer's.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time

PEER_CLASSES = {
    "f1_score": ("F1ScoreEvaluator", {}, "f1_score"),
    "bleu_score": ("BleuScoreEvaluator", {}, "bleu_score"),
    "gleu_score": ("GleuScoreEvaluator", {}, "gleu_score"),
    "meteor_score": ("MeteorScoreEvaluator", {}, "meteor_score"),
    "rouge_score": ("RougeScoreEvaluator", {"rouge_type": "rougeL"}, "rouge_score"),
}


def peer_scorer(name: str):
    import warnings

    warnings.filterwarnings("ignore")
    import azure.ai.evaluation as peer

    if name == "rouge_score":
        from azure.ai.evaluation import RougeType

        evaluator = peer.RougeScoreEvaluator(rouge_type=RougeType.ROUGE_L)
    else:
        evaluator = getattr(peer, PEER_CLASSES[name][0])()
    key = PEER_CLASSES[name][2]
    return lambda response, truth: float(evaluator(response=response, ground_truth=truth)[key])


def assay_scorer(name: str):
    from assay.evaluators import load_catalog

    params = {"rouge_type": "rougeL"} if name == "rouge_score" else {}
    evaluate = load_catalog().get(f"builtin.{name}").factory(**params)
    loop = asyncio.new_event_loop()

    async def score_all(rows):
        return [(await evaluate({"response": r, "ground_truth": g})).value for r, g in rows]

    return lambda rows: loop.run_until_complete(score_all(rows))


def main(side: str, name: str, rows_path: str, scores_path: str) -> None:
    rows = [(row["response"], row["ground_truth"]) for row in map(json.loads, open(rows_path, encoding="utf-8"))]
    if side == "peer":
        score = peer_scorer(name)
        score(*rows[0])  # warm-up: loads NLTK data once, as on the assay side
        start = time.perf_counter()
        scores = [score(r, g) for r, g in rows]
    else:
        score_rows = assay_scorer(name)
        score_rows(rows[:1])
        start = time.perf_counter()
        scores = score_rows(rows)
    seconds = time.perf_counter() - start
    with open(scores_path, "w", encoding="utf-8") as handle:
        json.dump(scores, handle)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"rows": len(rows), "seconds": seconds, "peak_rss_mb": peak_mb}))


if __name__ == "__main__":
    main(*sys.argv[1:5])
