"""Alerts: an evaluation rule or a schedule may carry a webhook (assay's extension of Foundry's body):

    "alert": {"url": "https://hooks.example.com/evals", "secret": "...", "passRate": 0.8, "criterion": "coherence"}

When a run it made since it was saved ends, the run is checked once (across servers: one row per run): a pass rate
whose Wilson 95% interval lies wholly below ``passRate`` (each criterion, or the one named) is an
alert, so a dip within noise is not; a run that failed, or a firing that could not make its run,
is an alert too.

An alert found goes into an outbox (the store's ``alerts``), and the ``Outbox`` of each server
delivers what is due there, apart from the firer: several at once (``WORKERS``, at most
``PER_HOST`` to one host, so a dead webhook holds none of another's), each attempt within
``TIMEOUT_SECONDS``, retried on a connection error, a timeout, 429 or 5xx with exponential backoff
and jitter up to ``ATTEMPTS`` attempts, then ``failed``. Delivery is at least once: a server holds an
alert for one attempt (a lease), so two servers do not both send it, but a receiver that took it
and did not answer in time gets it again; ``x-assay-delivery`` names the alert so it can tell. The
webhook gets the JSON, signed with HMAC-SHA256 of the body under ``secret`` (``x-assay-signature:
sha256=<hex>``). Every attempt (when, how long, the status or the error) is kept and listed
(``GET /alerts``, the UI's alerts page). The URL passes the server's one outbound policy
(``ASSAY_EVALUATOR_ENDPOINTS``, ``assay.outbound``) when the rule or schedule is saved and again at
each attempt (a host the operator has since removed is not called); no redirect is followed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from assay.errors import ConfigError
from assay.outbound import OutboundRefused, check_url, post
from assay.stats.core import wilson

if TYPE_CHECKING:
    from assay.store import Store

log = logging.getLogger(__name__)
TERMINAL = ("completed", "failed", "canceled")
ATTEMPTS = 6
"""Attempts at one alert before it is ``failed``: with the backoff, about a minute of trying."""
BACKOFF_SECONDS = 2.0
"""The wait after the first failed attempt; each next one doubles it, up to ``LONGEST_WAIT``."""
LONGEST_WAIT = 300.0
TIMEOUT_SECONDS = 5.0
"""One attempt's time to connect, send and read the answer."""
LEASE_MARGIN = 30.0
"""How much longer than an attempt's timeout a server holds an alert: past it, another may try."""
WORKERS = 8
PER_HOST = 2
POLL_SECONDS = 0.2
PAGE, PAGES = 200, 10
"""Due alerts are read a page at a time, so many to one dead host do not hide the others."""


def check_alert(value: Any) -> dict[str, Any] | None:
    """The ``alert`` of a rule or schedule, checked; None when there is none."""
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("url"), str):
        raise ConfigError("alert: expected {url, secret?, passRate?, criterion?}")
    unknown = sorted(set(value) - {"url", "secret", "passRate", "criterion"})
    if unknown:
        raise ConfigError(f"alert: unknown key {unknown[0]!r}")
    check_url(value["url"], "alert.url")
    rate = value.get("passRate")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= 1):
        raise ConfigError(f"alert.passRate: a pass rate in (0, 1], got {rate!r}")
    for key in ("secret", "criterion"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise ConfigError(f"alert.{key}: text")
    return dict(value)


def check_finished(store: Store) -> list[dict[str, Any]]:
    """Check every run a rule or schedule with an alert made that has ended; the alerts put in the outbox."""
    sent: list[dict[str, Any]] = []
    checked: dict[str, set[str]] = {}

    def done(project: str) -> set[str]:
        if project not in checked:
            checked[project] = store.checked_runs(project)
        return checked[project]

    def check(project: str, source: str, source_id: str, alert: dict[str, Any], key: str, failure: str | None) -> None:
        nonlocal sent
        try:
            sent += _check(store, project, source, source_id, alert, key, failure)
        except Exception:  # noqa: BLE001 - one run that cannot be checked holds up no other
            log.exception("%s %s of project %s: run %s cannot be checked", source, source_id, project, key)

    for rule in store.list_rules(None):
        alert = rule["body"].get("alert")
        # Runs made since the rule was saved with its alert: not every run it ever made.
        for run_id in store.rule_run_ids(rule["project"], rule["id"], since=rule["updated_at"]) if alert else []:
            if run_id not in done(rule["project"]):
                check(rule["project"], "rule", rule["id"], alert, run_id, None)
    for schedule in store.list_schedules(None):
        alert = schedule["body"].get("alert")
        firings = store.schedule_runs(schedule["project"], schedule["id"]) if alert else []
        for firing in (f for f in firings if f["trigger_time"] >= schedule["updated_at"]):
            run_key = firing["eval_run_id"] or firing["id"]
            if run_key not in done(schedule["project"]):
                check(schedule["project"], "schedule", schedule["id"], alert, run_key, firing["error"])
    return sent


def _check(
    store: Store, project: str, source: str, source_id: str, alert: dict[str, Any], run_key: str, failure: str | None
) -> list[dict[str, Any]]:
    if failure is None:
        if store.get_run(run_key).status not in TERMINAL:
            return []
    if not store.claim_alert(project, run_key, source, source_id):
        return []  # another server checks it
    payload = _finding(store, alert, run_key, failure)
    if payload is None:
        store.record_alert(project, run_key, kind="none", state="none")
        return []
    payload = {"source": source, "sourceId": source_id, "project": project, **payload}
    target = {"url": alert["url"], **({"secret": alert["secret"]} if alert.get("secret") else {})}
    store.record_alert(
        project,
        run_key,
        kind=payload["type"],
        payload=payload,
        target=target,
        state="pending",
        next_attempt_at=time.time(),
    )
    return [payload]


def _finding(store: Store, alert: dict[str, Any], run_key: str, failure: str | None) -> dict[str, Any] | None:
    """What is wrong with the run, as the alert's body; None when nothing is."""
    if failure is not None:
        return {"type": "run_failed", "runId": None, "error": failure}
    run = store.get_run(run_key)
    if run.status != "completed":
        message = (run.error or {}).get("message") or run.status
        return {"type": "run_failed", "runId": run_key, "evalId": run.eval_id, "error": message}
    threshold = alert.get("passRate")
    if threshold is None or run.summary is None:
        return None
    below = []
    for criterion in run.summary.per_testing_criteria_results:
        if alert.get("criterion") and criterion.testing_criteria != alert["criterion"]:
            continue
        decided = criterion.passed + criterion.failed
        interval = wilson(criterion.passed, decided)
        if interval is not None and interval[1] < threshold:  # wholly below: not noise
            rate = criterion.passed / decided
            below.append({"criterion": criterion.testing_criteria, "passRate": rate, "interval": list(interval)})
    if not below:
        return None
    return {
        "type": "pass_rate_below",
        "runId": run_key,
        "evalId": run.eval_id,
        "passRate": threshold,
        "criteria": below,
    }


def alert_object(row: dict[str, Any]) -> dict[str, Any]:
    """An alert as ``GET /alerts`` lists it: what it says, where it goes, how each attempt went."""
    return {
        "id": row["run_key"],
        "object": "alert",
        "source": row["source"],
        "sourceId": row["source_id"],
        "type": row["kind"],
        "state": row["state"] or ("delivered" if row["delivered"] else "failed"),
        "url": (row["target"] or {}).get("url"),
        "createdAt": row["created_at"],
        "nextAttemptAt": row["next_attempt_at"] if row["state"] == "pending" else None,
        "attempts": row["attempt_log"] or [],
        "payload": row["payload"],
    }


class Outbox:
    """Delivers the alerts due in the store, beside the firer: a pool of ``workers`` threads, at
    most ``per_host`` attempts at one host at a time. ``clock`` is injectable: tests step it."""

    def __init__(
        self,
        store: Store,
        holder: str,
        *,
        workers: int = WORKERS,
        per_host: int = PER_HOST,
        timeout: float = TIMEOUT_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store, self.holder, self.clock = store, holder, clock
        self.workers, self.per_host, self.timeout = workers, per_host, timeout
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix=f"assay-alerts-{holder}")
        self._lock = threading.Lock()
        self._busy = Counter[str]()
        """Attempts under way, by host."""

    def pump(self) -> int:
        """Start an attempt at each due alert there is room for; how many were started."""
        with self._lock:
            if sum(self._busy.values()) >= self.workers:
                return 0
        started, clock = 0, self.clock()
        for page in range(PAGES):  # past the alerts of hosts that have their share, to the others
            rows = self.store.due_alerts(clock, limit=PAGE, offset=page * PAGE)
            for row in rows:
                host = (urlsplit(row["target"]["url"]).hostname or "").lower()
                with self._lock:
                    if sum(self._busy.values()) >= self.workers:
                        return started
                    if self._busy[host] >= self.per_host:
                        continue  # that host has its share: the others go first
                    now = self.clock()
                    if not self.store.lease_alert(row, self.holder, now, now + self.timeout + LEASE_MARGIN):
                        continue  # another server took it
                    self._busy[host] += 1
                self._pool.submit(self._attempt, row, host)
                started += 1
            if len(rows) < PAGE:
                break
        return started

    def _attempt(self, row: dict[str, Any], host: str) -> None:
        try:
            attempt(self.store, row, self.holder, self.clock, self.timeout)
        except Exception:  # noqa: BLE001 - the lease runs out and the alert is tried again
            log.exception("alert %s: the attempt failed", row["run_key"])
        finally:
            with self._lock:
                self._busy[host] -= 1

    def idle(self) -> bool:
        with self._lock:
            return sum(self._busy.values()) == 0

    def run(self, stop: threading.Event) -> None:
        """Pump until ``stop`` is set."""
        while not stop.is_set():
            try:
                self.pump()
            except Exception:  # noqa: BLE001 - the store may be back next time
                log.exception("alerts: the outbox could not be read")
            stop.wait(POLL_SECONDS)
        self._pool.shutdown(wait=False, cancel_futures=True)


def attempt(
    store: Store,
    row: dict[str, Any],
    holder: str,
    clock: Callable[[], float] = time.time,
    timeout: float = TIMEOUT_SECONDS,
) -> dict[str, Any]:
    """One attempt at a leased alert, recorded with what comes next; the attempt."""
    number = row["attempts"] + 1
    body = json.dumps(row["payload"], sort_keys=True).encode()
    target = row["target"]
    headers = {
        "content-type": "application/json",
        "x-assay-delivery": f"{row['project']}/{row['run_key']}",
        "x-assay-attempt": str(number),
    }
    if target.get("secret"):
        digest = hmac.new(str(target["secret"]).encode(), body, hashlib.sha256).hexdigest()
        headers["x-assay-signature"] = f"sha256={digest}"
    started, status, error, final = clock(), None, None, False
    try:
        status, _ = post(target["url"], body, headers, timeout=timeout, purpose="alert.url")
    except OutboundRefused as exc:
        error, final = exc.message, True
    except OSError as exc:  # refused, reset, timed out
        error = str(exc) or type(exc).__name__
    ended = clock()
    tried = {"attempt": number, "at": round(started, 3), "seconds": round(ended - started, 3), "status": status}
    tried |= {"error": error} if error else {}
    if status is not None and status < 300:
        state, following = "delivered", None
    elif final or (status is not None and status != 429 and status < 500) or number >= ATTEMPTS:
        state, following = "failed", None  # refused for good (a redirect included: none is followed), or tried enough
    else:
        state, following = "pending", ended + backoff(number)
    if state != "delivered":
        log.warning("alert to %s, attempt %d: %s", target["url"], number, error or f"HTTP {status}")
    store.record_attempt(row, holder, tried, state=state, next_attempt_at=following)
    return tried


def backoff(attempts: int) -> float:
    """The wait after ``attempts`` failed attempts: doubling from ``BACKOFF_SECONDS``, up to
    ``LONGEST_WAIT``, of which a random half is jitter (so many alerts to one host spread out)."""
    wait = min(LONGEST_WAIT, BACKOFF_SECONDS * 2 ** (attempts - 1))
    return float(wait / 2 + random.uniform(0, wait / 2))  # noqa: S311 - spreading retries, not a secret
