"""The run page at 100,000 items against the same page at 1,000, in the same run.

    python bench/ui_paging.py [--items 100000] [--repeats 5]

Two stores are filled with output items directly (two criteria each, a score and a reason), then
the UI's run page is requested through the real app (FastAPI's test client: no socket, so the
figures are the page's own cost) for the first page, a deep page, a criterion + verdict filter,
a sort by score and a text search. Printed: the median time per request at each size and the
ratio. Targets: a plain page ≤ 3× (its cost does not grow with the run: counts and charts come
from the finished run's summary, items by index), a filtered, sorted or searched page ≤ 15×:
it scans the run's rows in the database (never in Python), so it does grow with the run, from a
fixed cost that dominates at 1,000 items; about 0.1–0.2 s at 100,000 items on these machines.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from assay.api import create_app
from assay.results import OutputItem, Result
from assay.store import Store

SMALL = 1_000


def filled(folder: Path, items: int) -> tuple[Store, str]:
    store = Store(f"sqlite:///{folder / f'{items}.db'}")
    stored = store.create_eval(
        name="paging",
        data_source_config={"type": "custom"},
        testing_criteria=[{"type": "string_check", "name": "exact"}, {"type": "string_check", "name": "near"}],
    )
    run = store.create_run(eval_id=stored.id, data_source={"type": "jsonl"}, name="paging")
    batch: list[OutputItem] = []
    for i in range(items):
        score = (i * 7919 % 1000) / 1000
        results = [
            Result(
                type="string_check",
                name=name,
                metric=name,
                score=score,
                passed=score >= cut,
                label="pass" if score >= cut else "fail",
                threshold=cut,
                reason=f"reason {i} {name}",
            )
            for name, cut in (("exact", 0.5), ("near", 0.3))
        ]
        batch.append(
            OutputItem(
                datasource_item_id=i,
                datasource_item={"query": f"question {i}", "response": "r"},
                results=results,
                status="pass" if score >= 0.5 else "fail",
            )
        )
        if len(batch) == 5_000:
            store.add_output_items(run.id, batch)
            batch = []
    if batch:
        store.add_output_items(run.id, batch)
    summary = store.summarize(run.id, [("exact", "exact"), ("near", "near")])  # as a finished run has
    store.update_run(run.id, status="completed", summary=summary.model_dump())
    return store, run.id


def median_ms(client: TestClient, url: str, repeats: int) -> float:
    client.get(url)  # warm
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        sizes = {}
        for items in (SMALL, args.items):
            started = time.perf_counter()
            store, run_id = filled(Path(folder), items)
            print(f"{items:>7} items stored in {time.perf_counter() - started:.1f} s")
            sizes[items] = (TestClient(create_app(store)), run_id)
        queries = {
            "first page": "",
            "page 10": "?page=10",
            "criterion=exact, verdict=fail": "?criterion=exact&verdict=fail",
            "sorted by score": "?criterion=near&sort=-score",
            "search 'question 77'": "?q=question+77",
        }
        met = True
        for label, query in queries.items():
            small, large = (median_ms(c, f"/ui/runs/{run}{query}", args.repeats) for c, run in sizes.values())
            ratio, target = large / small, 3 if "page" in label else 15
            met &= ratio <= target
            print(
                f"{label:32} {small:7.1f} ms at {SMALL:,}  {large:7.1f} ms at {args.items:,}  {ratio:5.1f}×"
                f"  (target ≤ {target}×)"
            )
    print("targets met" if met else "target missed")


if __name__ == "__main__":
    main()
