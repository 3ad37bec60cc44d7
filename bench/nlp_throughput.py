"""NLP evaluator throughput and memory, against azure-ai-evaluation 1.18 in the same run.

    python bench/nlp_throughput.py [--rows 10000] [--million-rows 1000000]

1. 10,000 generated rows (10 % non-ASCII) through each NLP evaluator, assay vs the peer's
   evaluator class, each in its own process: rows per second, the ratio, peak RSS, and the largest
   score difference (must be below 1e-9).
2. ``assay run`` over a 1,000,000-row JSONL: peak RSS of the whole process, as a ratio to the same
   run over 10,000 rows (flat memory means a ratio near 1) and against the 300 MB target.

The peer is installed in ``bench/.peer-venv`` (not a project dependency). It looks for NLTK data
zips and would try to download them, so the bench lays out the data assay ships in the layout
the peer expects and points ``NLTK_DATA`` at it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
DATA = BENCH / ".data"
PEER_VENV = BENCH / ".peer-venv"
PEER_PYTHON = PEER_VENV / "bin/python"
SHIPPED = ROOT / "src/assay/evaluators/nlp/nltk_data"
EVALUATORS = ["f1_score", "bleu_score", "gleu_score", "meteor_score", "rouge_score"]

WORDS = (
    "the a order refund account password shipping delivery customer support agent tool search lookup "
    "cancel return item price invoice address email phone warranty device network reset update status "
    "quickly today tomorrow please thanks cannot will should could would is was are were be been have has "
    "runs ran running fast slow big small happy sad paris london tokyo berlin france japan germany capital "
    "city country river mountain book store shop market product service team project report data model"
).split()
NON_ASCII = "café naïve über straße ñandú 東京 日本 首都 données résumé façade jalapeño".split()


def sentence(rng: random.Random, non_ascii: bool) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(4, 24))]
    if non_ascii:
        words[rng.randrange(len(words))] = rng.choice(NON_ASCII)
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice([".", "!", "?", ". Thanks."])


def perturb(rng: random.Random, text: str) -> str:
    words = text.split()
    for _ in range(rng.randint(0, 4)):
        action = rng.random()
        position = rng.randrange(len(words))
        if action < 0.4:
            words[position] = rng.choice(WORDS)
        elif action < 0.7 and len(words) > 2:
            del words[position]
        else:
            words.insert(position, rng.choice(WORDS))
    return " ".join(words)


def write_rows(path: Path, count: int, seed: int = 7) -> Path:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for _ in range(count):
            truth = sentence(rng, rng.random() < 0.1)
            handle.write(
                json.dumps({"response": perturb(rng, truth), "ground_truth": truth}, ensure_ascii=False) + "\n"
            )
    return path


def ensure_peer() -> None:
    if not PEER_PYTHON.exists():
        if PEER_VENV.is_symlink():  # a link to a venv elsewhere that is gone: start afresh here
            PEER_VENV.unlink()
        print("installing azure-ai-evaluation==1.18.10 into bench/.peer-venv (first run only) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run(
            [str(PEER_PYTHON), "-m", "pip", "install", "-q", "azure-ai-evaluation==1.18.10", "nltk==3.10.4"], check=True
        )


def peer_nltk_data() -> Path:
    """Our shipped data, zipped where the peer's ``ensure_nltk_data_downloaded`` looks for it."""
    target = DATA / "peer_nltk_data"
    if (target / "tokenizers/punkt.zip").exists():
        return target
    (target / "corpora").mkdir(parents=True, exist_ok=True)
    shutil.copy(SHIPPED / "corpora/wordnet.zip", target / "corpora/wordnet.zip")
    for folder, name in (("misc", "perluniprops"), ("tokenizers", "punkt_tab")):
        (target / folder).mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(target / folder / f"{name}.zip", "w") as archive:
            for file in (SHIPPED / folder / name).rglob("*"):
                archive.write(file, str(file.relative_to(SHIPPED / folder)))
    with zipfile.ZipFile(target / "tokenizers/punkt.zip", "w") as archive:
        archive.writestr("punkt/README", "placeholder: the peer checks that this zip exists; NLTK 3.10 uses punkt_tab")
    return target


def run_worker(side: str, name: str, rows: Path) -> tuple[dict[str, float], list[float]]:
    python = str(PEER_PYTHON) if side == "peer" else sys.executable
    scores_path = DATA / f"scores_{side}_{name}.json"
    env = {**os.environ, "NLTK_DATA": str(peer_nltk_data())}
    output = subprocess.run(
        [python, str(BENCH / "_nlp_worker.py"), side, name, str(rows), str(scores_path)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    figures = json.loads(output.strip().splitlines()[-1])
    return figures, json.loads(scores_path.read_text())


def compare_evaluators(rows: Path) -> bool:
    header = ("evaluator", "assay rows/s", "peer rows/s", "ratio", "assay MB", "peer MB", "max |Δscore|")
    widths = (14, 13, 12, 7, 9, 8, 13)
    cells = [f"{h:{'<' if i == 0 else '>'}{w}}" for i, (h, w) in enumerate(zip(header, widths, strict=True))]
    print("\n" + " ".join(cells))
    ok = True
    for name in EVALUATORS:
        ours, our_scores = run_worker("assay", name, rows)
        theirs, their_scores = run_worker("peer", name, rows)
        our_rate, their_rate = ours["rows"] / ours["seconds"], theirs["rows"] / theirs["seconds"]
        delta = max(abs(a - b) for a, b in zip(our_scores, their_scores, strict=True))
        ratio = our_rate / their_rate
        ok &= ratio >= 5 and delta < 1e-9
        print(
            f"{name:14} {our_rate:13.0f} {their_rate:12.0f} {ratio:6.1f}x {ours['peak_rss_mb']:9.0f} "
            f"{theirs['peak_rss_mb']:8.0f} {delta:13.2e}"
        )
    return ok


def run_cli(rows: Path, home: Path) -> tuple[float, float]:
    """Peak RSS (MB) and seconds of ``assay run`` over ``rows`` with the F1 evaluator."""
    config = rows.with_suffix(".yaml")
    config.write_text(f"name: bench\ndataset: {{local_uri: {rows.name}}}\nevaluators: [builtin.f1_score]\n")
    shutil.rmtree(home, ignore_errors=True)
    env = {**os.environ, "ASSAY_HOME": str(home)}
    env.pop("ASSAY_DATABASE_URL", None)
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "run", str(config)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"assay run failed: {process.stderr.read().decode() if process.stderr else status}")
    return usage.ru_maxrss / 1024, seconds


def million_rows(count: int) -> bool:
    small = write_rows(DATA / "rows_10k.jsonl", 10_000, seed=11)
    big = DATA / f"rows_{count}.jsonl"
    if not big.exists():
        write_rows(big, count, seed=13)
    small_rss, small_seconds = run_cli(small, DATA / "home_small")
    big_rss, big_seconds = run_cli(big, DATA / "home_big")
    print(
        f"\nassay run, F1, {count:,} rows: peak RSS {big_rss:.0f} MB ({big_rss / small_rss:.2f}x the 10,000-row "
        f"run's {small_rss:.0f} MB; target < 300 MB), {count / big_seconds:,.0f} rows/s end to end "
        f"({(count / big_seconds) / (10_000 / small_seconds):.2f}x the 10,000-row rate)"
    )
    return big_rss < 300


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--million-rows", type=int, default=1_000_000, help="0 skips the memory run")
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    ensure_peer()
    rows = write_rows(DATA / f"bench_{args.rows}.jsonl", args.rows)
    ok = compare_evaluators(rows)
    if args.million_rows:
        ok &= million_rows(args.million_rows)
    print("\ntargets met" if ok else "\nsome targets missed")


if __name__ == "__main__":
    main()
