"""The run page at 100,000 items against the same page at 1,000, in the same run.

    python bench/ui_paging.py [--items 100000] [--repeats 5]

Two stores are filled with output items directly (two criteria each, a score and a reason), then
the UI's run page is requested through the real app (FastAPI's test client: no socket, so the
figures are the page's own cost) for the first page, a deep page, a criterion + verdict filter,
a sort by score and a text search. Printed: the median time per request at each size and the
ratio. Target: every ratio ≤ 5 (server-side paging and search keep a page's cost far from
linear: 100× the items must not cost 100×).
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
    stored = store.create_eval(name="paging", data_source_config={"type": "custom"}, testing_criteria=[
        {"type": "string_check", "name": "exact"}, {"type": "string_check", "name": "near"}])  # fmt: skip
    run = store.create_run(eval_id=stored["id"], data_source={"type": "jsonl"}, name="paging")
    batch: list[OutputItem] = []
    for i in range(items):
        score = (i * 7919 % 1000) / 1000
        results = [Result(type="string_check", name=name, metric=name, score=score, passed=score >= cut,
                          label="pass" if score >= cut else "fail", threshold=cut, reason=f"reason {i} {name}")
                   for name, cut in (("exact", 0.5), ("near", 0.3))]  # fmt: skip
        batch.append(OutputItem(datasource_item_id=i, datasource_item={"query": f"question {i}", "response": "r"},
                                results=results, status="pass" if score >= 0.5 else "fail"))  # fmt: skip
        if len(batch) == 5_000:
            store.add_output_items(run["id"], batch)
            batch = []
    if batch:
        store.add_output_items(run["id"], batch)
    store.update_run(run["id"], status="completed")
    return store, run["id"]


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
        queries = {"first page": "", "page 10": "?page=10", "criterion=exact, verdict=fail":
                   "?criterion=exact&verdict=fail", "sorted by score": "?criterion=near&sort=-score",
                   "search 'question 77'": "?q=question+77"}  # fmt: skip
        worst = 0.0
        for label, query in queries.items():
            small, large = (median_ms(c, f"/ui/runs/{run}{query}", args.repeats) for c, run in sizes.values())
            ratio = large / small
            worst = max(worst, ratio)
            print(f"{label:32} {small:7.1f} ms at {SMALL:,}  {large:7.1f} ms at {args.items:,}  {ratio:5.1f}×")
    print(f"worst ratio {worst:.1f}× ({'target met' if worst <= 5 else 'target missed'}: ≤ 5×)")


if __name__ == "__main__":
    main()
