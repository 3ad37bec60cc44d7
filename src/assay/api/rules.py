"""Continuous evaluation: Foundry's evaluation rules (``project_client.evaluation_rules``).

A rule says: when an agent's response completes (``eventType: responseCompleted``, ``filter:
{agentName}``), sample it (``samplingRate``, a percentage in (0, 100]) and evaluate it in runs of
the eval ``action.evalId`` (``action.type: continuousEvaluation``), at most ``maxHourlyRuns`` an
hour. The pass-through records each sampled response as an event of the rule
(``record_response``; an agent turn that arrives as an OTLP trace counts too, evaluated in a
trace run); the firer (a thread of ``assay serve``, beside its workers) gathers a rule's events for
``ASSAY_RULE_WINDOW_SECONDS`` and queues one run for them, through the same door as an API run
(``queue_run``): an ``azure_ai_responses`` data source over the stored responses. Events live in
the store, so a restarted server evaluates what it had not; a rule's lease makes two servers on
one database take each event once. Sampling is a hash of the rule and the response: the same
response is in or out whichever server sees it.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from assay.api.alerts import check_alert
from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.api.context import ApiContext
    from assay.store import Store

log = logging.getLogger(__name__)
ACTIONS = ("continuousEvaluation",)
EVENTS = ("responseCompleted", "manual")
LEASE_SECONDS = 60.0
TRACE_EVENT = "trace:"
"""An event's id when the agent's turn arrived as a trace (OTLP), not through the pass-through."""


def check_rule(rule_id: str, body: dict[str, Any], store: Store, project: str) -> dict[str, Any]:
    """Foundry's ``EvaluationRule`` body, checked (each mistake named by its field) and kept as given."""
    alert = check_alert(body.get("alert"))  # first: a refused URL is named before anything is looked up
    action = body.get("action")
    if not isinstance(action, dict) or action.get("type") not in ACTIONS:
        raise ConfigError(
            "action: expected {type: continuousEvaluation, evalId, maxHourlyRuns?, samplingRate?}",
            hint="humanEvaluationPreview is not supported yet",
        )
    eval_id = action.get("evalId")
    if not isinstance(eval_id, str) or not eval_id:
        raise ConfigError("action.evalId: name the eval whose runs the rule adds to")
    store.get_eval_in(project, eval_id)  # a NotFoundError (404) names it
    rate = action.get("samplingRate")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= 100):
        raise ConfigError(f"action.samplingRate: a percentage in (0, 100], got {rate!r}")
    hourly = action.get("maxHourlyRuns")
    if hourly is not None and (isinstance(hourly, bool) or not isinstance(hourly, int) or hourly < 1):
        raise ConfigError(f"action.maxHourlyRuns: a whole number of runs, at least 1, got {hourly!r}")
    if body.get("eventType") not in EVENTS:
        raise ConfigError(f"eventType: one of {', '.join(EVENTS)}, got {body.get('eventType')!r}")
    rule_filter = body.get("filter")
    if rule_filter is not None and (
        not isinstance(rule_filter, dict) or not isinstance(rule_filter.get("agentName"), str)
    ):
        raise ConfigError("filter: expected {agentName: <the agent whose responses the rule evaluates>}")
    enabled = body.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError("enabled: true or false")
    kept = ("displayName", "description", "action", "filter", "eventType", "enabled")
    return {**{k: body[k] for k in kept if k in body}, "enabled": enabled, **({"alert": alert} if alert else {})}


def rule_object(row: dict[str, Any]) -> dict[str, Any]:
    """The rule as Foundry returns it: its body, id and ``systemData``."""
    created, updated = _iso(row["created_at"]), _iso(row["updated_at"])
    system = {"createdAt": created, "lastModifiedAt": updated, "createdBy": "assay", "lastModifiedBy": "assay"}
    return {**row["body"], "id": row["id"], "enabled": row["enabled"], "systemData": system}


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def record_response(store: Store, project: str, agent_name: str | None, response_id: str) -> int:
    """A response completed: each enabled rule that wants it and samples it gets an event. How many did."""
    recorded = 0
    for row in store.list_rules(project, enabled=True):
        body = row["body"]
        if body.get("eventType") != "responseCompleted":
            continue
        if row["agent_name"] is not None and row["agent_name"] != agent_name:
            continue
        rate = float((body.get("action") or {}).get("samplingRate") or 100)
        if zlib.crc32(f"{row['id']}\0{response_id}".encode()) % 10_000 >= rate * 100:
            continue
        store.add_rule_event(project, row["id"], response_id)
        recorded += 1
    return recorded


def fire_due(ctx: ApiContext, worker: str, window: float) -> list[str]:
    """Queue a run for each rule whose oldest waiting event is ``window`` old, within its hourly
    cap; the runs' ids. A rule that cannot (its eval deleted, say) is logged and left; the others go on."""
    queued: list[str] = []
    for row in ctx.store.list_rules(None, enabled=True):
        try:
            queued += _fire_rule(ctx, row, worker, window)
        except Exception:  # noqa: BLE001 - one rule's failure is not every project's
            log.exception("rule %s of project %s: cannot fire", row["id"], row["project"])
    return queued


def _fire_rule(ctx: ApiContext, row: dict[str, Any], worker: str, window: float) -> list[str]:
    from assay.api.routes_runs import queue_run

    store, queued = ctx.store, []
    project, rule_id, action = row["project"], row["id"], row["body"].get("action") or {}
    waiting, oldest = store.pending_since(project, rule_id)
    if not waiting or oldest is None or time.time() - oldest < window:
        return []
    cap = action.get("maxHourlyRuns")
    if cap is not None and store.runs_since(project, rule_id, time.time() - 3600) >= cap:
        return []
    marker = f"pending:{uuid.uuid4().hex[:16]}"
    taken = store.take_events(project, rule_id, worker, marker, LEASE_SECONDS)
    if not taken:
        return []
    try:
        stored = store.get_eval_in(project, str(action.get("evalId")))
        traces = [i.removeprefix(TRACE_EVENT) for i in taken if i.startswith(TRACE_EVENT)]
        responses = [i for i in taken if not i.startswith(TRACE_EVENT)]
        for ids, source, events in (
            (responses, responses_source, responses),
            (traces, traces_source, [TRACE_EVENT + t for t in traces]),
        ):
            if ids:
                body = {"name": f"rule {rule_id}", "data_source": source(ids), "metadata": {"rule": rule_id}}
                run = queue_run(ctx, project, stored, body)
                store.relabel_events(project, rule_id, marker, run.id, events)
                queued.append(run.id)
    finally:
        store.release_rule(project, rule_id, worker)
    return queued


def responses_source(response_ids: list[str]) -> dict[str, Any]:
    """An ``azure_ai_responses`` data source over stored responses, by id."""
    return {
        "type": "azure_ai_responses",
        "item_generation_params": {
            "type": "response_retrieval",
            "data_mapping": {"response_id": "{{item.resp_id}}"},
            "source": {"type": "file_content", "content": [{"item": {"resp_id": rid}} for rid in response_ids]},
        },
    }


def traces_source(trace_ids: list[str]) -> dict[str, Any]:
    """A trace data source over stored traces, by id."""
    return {"type": "azure_ai_trace_data_source", "trace_source": {"type": "trace_id_source", "trace_ids": trace_ids}}


def start_firer(ctx: ApiContext, stop: threading.Event, name: str) -> list[threading.Thread]:
    """The threads that keep the production loop's time until ``stop`` is set, one per concern so
    none waits on another: evaluation rules, schedules (``assay.api.schedules``), agent insight
    monitors (``assay.api.agent_insights``) and the check of finished runs for alerts, each a
    short store-only step a second; and the alerts' outbox (``assay.api.alerts.Outbox``), whose
    webhook calls run in a pool of their own. Model calls are the workers' jobs, never these."""
    from assay.api import agent_insights, alerts, schedules
    from assay.config.settings import settings

    def every(concern: str, work: Callable[[], object], period: Callable[[], float]) -> threading.Thread:
        def loop() -> None:
            while not stop.is_set():
                try:
                    work()
                except Exception:  # noqa: BLE001 - what cannot fire now is tried again next time
                    log.exception("%s: firing failed", concern)
                stop.wait(period())

        return threading.Thread(target=loop, name=f"assay-{concern}-{name}", daemon=True)

    outbox = alerts.Outbox(ctx.store, name)
    threads = [
        every(
            "rules",
            lambda: fire_due(ctx, name, settings().rule_window_seconds),
            lambda: min(1.0, settings().rule_window_seconds / 2),
        ),
        every("schedules", lambda: schedules.fire_due(ctx), lambda: schedules.TICK_SECONDS),
        every("monitors", lambda: agent_insights.run_due(ctx), lambda: 1.0),
        every("alert-checks", lambda: alerts.check_finished(ctx.store), lambda: 1.0),
        threading.Thread(target=outbox.run, args=(stop,), name=f"assay-alerts-{name}", daemon=True),
    ]
    for thread in threads:
        thread.start()
    return threads
