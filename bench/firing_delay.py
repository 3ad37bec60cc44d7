"""The production loop keeps time: how late schedules fire on two servers sharing one PostgreSQL
while one project's alerts go to a webhook that never answers and to one that answers 500 twice,
against a baseline measured in the same run without those webhooks.

    python bench/firing_delay.py [--minutes 2]       # on ASSAY_TEST_DATABASE_URL's server (local by default)

Ten projects, ten schedules each (``* * * * *``: all 100 are due at the same second every minute),
two ``assay serve`` processes on one fresh database. The baseline phase runs them for
``--minutes`` with no alerts. The loaded phase gives project p0's schedules alerts (a pass rate
below 90%, which each of its runs is): five to a webhook that holds every request open, five to one
that answers 500 to the first two attempts at each alert and 200 to the third. Each firing's delay
is its ``firedAt`` less its ``triggerTime`` (``GET /schedules/{id}/runs``).

Printed: firings, p50/p99/max delay of the other nine projects' firings in each phase and the
loaded p99 over the baseline's; then, once the outbox has settled, how many alerts the flaky
webhook took and whether each was taken exactly once after two 500s with every attempt listed, and
the dead webhook's alerts ``failed`` after their attempts. Fails (exit 1) when a firing of another
project is 2 s late or more, or an alert is lost or taken twice.
"""

from __future__ import annotations

import argparse
import http.server
import os
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx2 as httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

os.environ.setdefault("ASSAY_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
from tests.conftest import postgres_database  # noqa: E402
from tests.support.servers import start_assay_server  # noqa: E402

from assay.store import Store  # noqa: E402

PROJECTS = [f"p{n}" for n in range(10)]
PER_PROJECT = 10
EVAL = {
    "name": "timed",
    "data_source_config": {"type": "custom", "item_schema": {"type": "object"}},
    "testing_criteria": [
        {"type": "string_check", "name": "s", "input": "{{item.a}}", "reference": "a", "operation": "eq"}
    ],
}


class Webhook:
    """A receiver: ``hold`` keeps every request open until the bench ends; otherwise each alert
    (``x-assay-delivery``) gets 500 to its first two attempts and 200 after."""

    def __init__(self, hold: bool) -> None:
        self.hold, self.release = hold, threading.Event()
        self.got: list[tuple[str, int]] = []
        self.lock = threading.Lock()
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["content-length"]))
                delivery = self.headers["x-assay-delivery"]
                if hook.hold:
                    with hook.lock:
                        hook.got.append((delivery, 0))
                    hook.release.wait()
                    return
                with hook.lock:
                    seen = sum(1 for d, _ in hook.got if d == delivery)
                    status = 500 if seen < 2 else 200
                    hook.got.append((delivery, status))
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def schedule_body(eval_id: str, alert: dict | None) -> dict:
    items = [{"item": {"a": "b"}} for _ in range(20)]  # every item fails: a pass rate of 0
    task = {
        "type": "Evaluation",
        "evalId": eval_id,
        "evalRun": {"data_source": {"type": "jsonl", "source": {"type": "file_content", "content": items}}},
    }
    trigger = {"type": "Cron", "expression": "* * * * *"}
    return {"trigger": trigger, "task": task, "enabled": True, **({"alert": alert} if alert else {})}


def put_schedules(client: httpx.Client, keys: dict[str, str], evals: dict[str, str], alerts: dict | None) -> None:
    for project in PROJECTS:
        for n in range(PER_PROJECT):
            alert = (alerts or {}).get((project, n))
            body = schedule_body(evals[project], alert)
            answer = client.put(
                f"/api/projects/{project}/schedules/s{n}", json=body, headers={"api-key": keys[project]}
            )
            answer.raise_for_status()


def delays(client: httpx.Client, keys: dict[str, str], since: float, until: float) -> dict[str, list[float]]:
    """Each project's firings' delays with a trigger time in [since, until)."""
    found: dict[str, list[float]] = defaultdict(list)
    for project in PROJECTS:
        for n in range(PER_PROJECT):
            answer = client.get(f"/api/projects/{project}/schedules/s{n}/runs", headers={"api-key": keys[project]})
            answer.raise_for_status()
            for firing in answer.json()["value"]:
                when = time.mktime(time.strptime(firing["triggerTime"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
                if since <= when < until:
                    found[project].append(float(firing["properties"]["delaySeconds"]))
    return found


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def phase(client, keys, evals, alerts, minutes: int, name: str) -> list[float]:
    put_schedules(client, keys, evals, alerts)
    start = time.time()
    time.sleep(minutes * 60 + 5)
    found = delays(client, keys, start, time.time())
    others = [d for project, values in found.items() if project != "p0" for d in values]
    print(
        f"{name:>9}: {sum(len(v) for v in found.values())} firings; other projects' delay "
        f"p50 {p(others, 0.5):.3f} s, p99 {p(others, 0.99):.3f} s, max {max(others, default=float('nan')):.3f} s",
        flush=True,
    )
    return others


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=int, default=2)
    arguments = parser.parse_args()
    dead, flaky = Webhook(hold=True), Webhook(hold=False)
    failed = False
    with tempfile.TemporaryDirectory() as home, postgres_database() as url:
        store = Store(url)
        keys = {project: store.create_key(project) for project in PROJECTS}
        store.close()
        models = Path(home) / "models.yaml"
        models.write_text("models: {}\n")
        hosts = ",".join(hook.url.split("/")[2] for hook in (dead, flaky))
        os.environ.update(ASSAY_EVALUATOR_ENDPOINTS=hosts, ASSAY_RATE_RUNS_PER_MINUTE="100000")
        servers = [
            start_assay_server(Path(home) / f"s{i}", models, database_url=url, key=keys["p1"], workers=2)
            for i in range(2)
        ]
        base = str(servers[0][1].base_url).split("/v1")[0]
        try:
            with httpx.Client(base_url=base, timeout=30) as client:
                evals = {}
                for project in PROJECTS:
                    made = client.post("/v1/evals", json=EVAL, headers={"api-key": keys[project]})
                    made.raise_for_status()
                    evals[project] = made.json()["id"]
                baseline = phase(client, keys, evals, None, arguments.minutes, "baseline")
                alerts = {("p0", n): {"url": (dead if n < 5 else flaky).url, "passRate": 0.9} for n in range(10)}
                loaded = phase(client, keys, evals, alerts, arguments.minutes, "loaded")
                print(f"loaded p99 / baseline p99: {p(loaded, 0.99) / max(p(baseline, 0.99), 1e-3):.2f}")
                late = [d for d in loaded if d >= 2.0]
                if late:
                    print(f"FAIL: {len(late)} firings of other projects were 2 s late or more")
                    failed = True
                for project in PROJECTS:  # no more firings, so the outbox can empty
                    for n in range(PER_PROJECT):
                        client.delete(f"/api/projects/{project}/schedules/s{n}", headers={"api-key": keys[project]})
                failed |= settle(client, keys["p0"], flaky, dead)
        finally:
            for process, openai in servers:
                openai.close()
                process.terminate()
                process.wait(timeout=30)
            dead.close()
            flaky.close()
    return 1 if failed else 0


def settle(client: httpx.Client, key: str, flaky: Webhook, dead: Webhook) -> bool:
    """Wait for p0's alerts to leave ``pending``; check each was delivered or failed as it should."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        listed = client.get("/api/projects/p0/alerts", headers={"api-key": key}).json()["value"]
        if listed and all(a["state"] != "pending" for a in listed):
            break
        time.sleep(2)
    flaky_alerts = [a for a in listed if a["url"] == flaky.url]
    dead_alerts = [a for a in listed if a["url"] == dead.url]
    taken = Counter(delivery for delivery, status in flaky.got if status == 200)
    once = all(count == 1 for count in taken.values()) and len(taken) == len(flaky_alerts)
    listed_right = all(
        a["state"] == "delivered" and [t["status"] for t in a["attempts"]] == [500, 500, 200] for a in flaky_alerts
    )
    dead_failed = all(a["state"] == "failed" and len(a["attempts"]) >= 1 for a in dead_alerts)
    print(
        f"alerts: flaky webhook {len(flaky_alerts)} alerts, {len(flaky.got)} attempts, each taken once after two "
        f"500s and listed so: {once and listed_right}; dead webhook {len(dead_alerts)} alerts, "
        f"{len(dead.got)} attempts held open, all failed after their attempts: {dead_failed}"
    )
    return not (once and listed_right and dead_failed and flaky_alerts and dead_alerts)


if __name__ == "__main__":
    sys.exit(main())
