"""API under load: 100 concurrent clients reading a 100,000-item run, on SQLite and PostgreSQL.

    python bench/api_load.py [--items 100000] [--clients 100] [--seconds 60] [--postgres URL]

For each database, a run with ``--items`` output items is written straight into a fresh store,
``assay serve`` is started on it, and ``--clients`` concurrent clients loop for ``--seconds``:
a third list the first page of output items, a third list the last page (``after`` = the item
before it), a third poll the run. Printed: requests, errors, p50/p99 latency per kind, and the
last page's p50 as a ratio to the first page's (keyset pagination: it should be about 1).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fixtures import free_port  # noqa: E402

from assay.api.wire import output_item_id  # noqa: E402
from assay.results import OutputItem, Result  # noqa: E402
from assay.store import Store  # noqa: E402


def fill(store: Store, items: int) -> tuple[str, str]:
    config = {"type": "custom", "item_schema": {"type": "object"}}
    criteria = [{"type": "string_check", "name": "exact", "id": "exact-1"}]
    stored = store.create_eval(name="load", data_source_config=config, testing_criteria=criteria)
    run = store.create_run(eval_id=stored["id"], data_source={"type": "jsonl"})
    batch = []
    for index in range(items):
        passed = index % 3 != 0
        result = Result(type="string_check", name="exact", metric="string_check", score=float(passed), passed=passed,
                        label="pass" if passed else "fail")  # fmt: skip
        batch.append(OutputItem(datasource_item_id=index, datasource_item={"query": f"question {index}", "n": index},
                                results=[result], status="pass" if passed else "fail"))  # fmt: skip
        if len(batch) == 5000:
            store.add_output_items(run["id"], batch)
            batch = []
    store.add_output_items(run["id"], batch)
    store.update_run(
        run["id"], status="completed", summary=store.summarize(run["id"], [("exact", "string_check")]).model_dump()
    )
    return stored["id"], run["id"]


async def client_loop(
    session: aiohttp.ClientSession, kind: str, url: str, stop_at: float, out: dict[str, list[float]], errors: list[str]
) -> None:
    while time.monotonic() < stop_at:
        started = time.perf_counter()
        try:
            async with session.get(url) as response:
                await response.read()
                if response.status != 200:
                    errors.append(f"{kind}: {response.status}")
        except aiohttp.ClientError as exc:
            errors.append(f"{kind}: {exc}")
        out[kind].append(time.perf_counter() - started)


async def load(
    base: str, eval_id: str, run_id: str, items: int, clients: int, seconds: float
) -> tuple[dict[str, list[float]], list[str]]:
    runs = f"{base}/v1/evals/{eval_id}/runs/{run_id}"
    urls = {
        "first page": f"{runs}/output_items?limit=100",
        "last page": f"{runs}/output_items?limit=100&after={output_item_id(run_id, items - 101)}",
        "poll run": runs,
    }
    latencies: dict[str, list[float]] = {kind: [] for kind in urls}
    errors: list[str] = []
    stop_at = time.monotonic() + seconds
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector) as session:
        kinds = list(urls)
        await asyncio.gather(*(client_loop(session, kinds[i % 3], urls[kinds[i % 3]], stop_at, latencies, errors)
                               for i in range(clients)))  # fmt: skip
    return latencies, errors


def serve(url: str, home: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "ASSAY_DATABASE_URL": url, "ASSAY_HOME": str(home)}
    process = subprocess.Popen([sys.executable, "-m", "assay", "serve", "--port", str(port), "--workers", "0"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    import urllib.request

    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/v1/evals", timeout=1)
            return process, base
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("assay serve did not start")


def report(name: str, latencies: dict[str, list[float]], errors: list[str], seconds: float) -> bool:
    total = sum(len(v) for v in latencies.values())
    print(f"\n{name}: {total} requests in {seconds:.0f} s ({total / seconds:.0f}/s), {len(errors)} errors")
    p50 = {}
    for kind, values in latencies.items():
        values.sort()
        p50[kind] = statistics.median(values)
        p99 = values[int(len(values) * 0.99) - 1] if values else float("nan")
        print(f"  {kind:11} n={len(values):6d}  p50 {p50[kind] * 1000:7.1f} ms  p99 {p99 * 1000:7.1f} ms")
    ratio = p50["last page"] / p50["first page"]
    print(f"  last page ÷ first page (p50): {ratio:.2f}")
    if errors:
        print("  first errors:", errors[:3])
    return not errors and ratio <= 1.5


def run_on(name: str, url: str, args: argparse.Namespace) -> bool:
    with tempfile.TemporaryDirectory() as home:
        store = Store(url)
        started = time.perf_counter()
        eval_id, run_id = fill(store, args.items)
        print(f"{name}: wrote {args.items:,} output items in {time.perf_counter() - started:.1f} s")
        store.close()
        process, base = serve(url, Path(home))
        try:
            latencies, errors = asyncio.run(load(base, eval_id, run_id, args.items, args.clients, args.seconds))
        finally:
            process.terminate()
            process.wait(timeout=20)
    return report(name, latencies, errors, args.seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60)
    local = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    parser.add_argument("--postgres", default=os.environ.get("ASSAY_TEST_DATABASE_URL", local))
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as folder:
        ok &= run_on("SQLite", f"sqlite:///{folder}/load.db", args)
    name = f"assay_load_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(args.postgres, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        ok &= run_on("PostgreSQL", sa.engine.make_url(args.postgres).set(database=name).render_as_string(False), args)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    print("\ntargets met" if ok else "\nsome targets missed")


if __name__ == "__main__":
    main()
