"""Alerts: an evaluation rule or a schedule may carry a webhook (assay's extension of Foundry's body):

    "alert": {"url": "https://hooks.example.com/evals", "secret": "...", "passRate": 0.8, "criterion": "coherence"}

When a run it made since it was saved ends, the run is checked once (across servers: one row per run): a pass rate
whose Wilson 95% interval lies wholly below ``passRate`` (each criterion, or the one named) is an
alert, so a dip within noise is not; a run that failed, or a firing that could not make its run,
is an alert too. The webhook gets the JSON, signed with HMAC-SHA256 of the body under ``secret``
(``x-assay-signature: sha256=<hex>``), retried with backoff on a connection error, 429 or 5xx;
the delivery (attempts, last status) is recorded. The URL passes the server's one outbound policy
(``ASSAY_EVALUATOR_ENDPOINTS``, ``assay.outbound``) when the rule or schedule is saved and again
at each delivery (a host the operator has since removed is not called); no redirect is followed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError
from assay.outbound import OutboundRefused, check_url, post
from assay.stats import wilson

if TYPE_CHECKING:
    from assay.store import Store

log = logging.getLogger(__name__)
TERMINAL = ("completed", "failed", "canceled")
ATTEMPTS = 4
BACKOFF_SECONDS = 0.5


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
    """Check every run a rule or schedule with an alert made that has ended; the alerts sent."""
    sent: list[dict[str, Any]] = []
    checked: dict[str, set[str]] = {}

    def done(project: str) -> set[str]:
        if project not in checked:
            checked[project] = store.checked_runs(project)
        return checked[project]

    for rule in store.list_rules(None):
        alert = rule["body"].get("alert")
        # Runs made since the rule was saved with its alert: not every run it ever made.
        for run_id in store.rule_run_ids(rule["project"], rule["id"], since=rule["updated_at"]) if alert else []:
            if run_id not in done(rule["project"]):
                sent += _check(store, rule["project"], "rule", rule["id"], alert, run_id, None)
    for schedule in store.list_schedules(None):
        alert = schedule["body"].get("alert")
        firings = store.schedule_runs(schedule["project"], schedule["id"]) if alert else []
        for firing in (f for f in firings if f["trigger_time"] >= schedule["updated_at"]):
            run_key = firing["eval_run_id"] or firing["id"]
            if run_key not in done(schedule["project"]):
                sent += _check(store, schedule["project"], "schedule", schedule["id"], alert, run_key, firing["error"])
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
        store.record_alert(project, run_key, kind="none")
        return []
    payload = {"source": source, "sourceId": source_id, "project": project, **payload}
    attempts, status = deliver(alert, payload)
    store.record_alert(
        project,
        run_key,
        kind=payload["type"],
        payload=payload,
        delivered=status is not None and status < 300,
        attempts=attempts,
        status=status,
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


def deliver(alert: dict[str, Any], payload: dict[str, Any]) -> tuple[int, int | None]:
    """POST the payload, signed; (attempts made, the last HTTP status or None)."""
    body = json.dumps(payload, sort_keys=True).encode()
    headers = {"content-type": "application/json"}
    if alert.get("secret"):
        digest = hmac.new(str(alert["secret"]).encode(), body, hashlib.sha256).hexdigest()
        headers["x-assay-signature"] = f"sha256={digest}"
    status: int | None = None
    for attempt in range(1, ATTEMPTS + 1):
        try:
            status, _ = post(alert["url"], body, headers, timeout=10, purpose="alert.url")
        except OutboundRefused as exc:
            log.warning("alert to %s refused: %s", alert["url"], exc.message)
            return attempt, None
        except OSError as exc:
            log.warning("alert to %s: %s", alert["url"], exc)
        else:
            if status < 300 or (status != 429 and status < 500):
                return attempt, status  # delivered, or refused for good (a redirect included: none is followed)
        time.sleep(BACKOFF_SECONDS * 2 ** (attempt - 1))  # the firer's own thread: the API is not held
    return ATTEMPTS, status
