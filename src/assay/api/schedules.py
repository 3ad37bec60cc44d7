"""Schedules: Foundry's ``project_client.beta.schedules``. A schedule has a trigger (``OneTime``,
``Recurrence``, ``Cron``; ``assay.loop.triggers`` says when) and a task: ``Evaluation`` (``evalId`` and
``evalRun``, the body of a run create) or ``Insight`` (``insight``, the body of an insight
generate; a cluster insight without ``runIds`` takes its eval's newest completed run each time, so a
daily insight groups the latest failures). The firer thread of ``assay serve`` (beside the evaluation
rules') fires each due schedule through the same door as an API run (``queue_run``) and records the
firing (``list_runs``: success, error, the eval run).

One firing per trigger: the store moves ``next_fire`` on with a compare-and-set, so of several
servers on one database exactly one fires it. Each firing is recorded with its time
(``triggerTime``), when it fired (``properties.firedAt``) and how late (``properties.delaySeconds``).

Missed firings, as Kubernetes CronJob's ``startingDeadlineSeconds``: when no server ran (or none was
free) at a firing's time, the latest firing missed fires once, late (``properties.late``), if it is
at most ``ASSAY_SCHEDULE_STARTING_DEADLINE_SECONDS`` (an hour) old; the others are not made up (no
burst of catch-up runs). When even the latest is older, the schedule records one firing that made
nothing (``success: false``, the error saying it was missed) and goes on from the present.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from assay.api.alerts import check_alert
from assay.api.ratelimit import per_minute
from assay.errors import ConfigError
from assay.loop.triggers import check as check_trigger
from assay.loop.triggers import next_fire

if TYPE_CHECKING:
    from assay.api.context import ApiContext
    from assay.store import Store

TASKS = ("Evaluation", "Insight")
TICK_SECONDS = 0.5
"""How often the firer looks for due schedules: a firing is made within this of its time."""
LATE_SECONDS = 60.0
"""A firing made later than this after its time is marked ``late``: it was caught up on."""
CATCH_UP_SEARCH = 10_000
"""At most this many missed firings are stepped over looking for the latest within the deadline."""
log = logging.getLogger(__name__)


def check_schedule(body: dict[str, Any], store: Store, project: str) -> dict[str, Any]:
    """Foundry's ``Schedule`` body, checked (each mistake named by its field) and kept as given."""
    alert = check_alert(body.get("alert"))  # first: a refused URL is named before anything is looked up
    # A disabled schedule may keep a trigger whose time has passed (turning an ended one off is fine).
    check_trigger(body.get("trigger"), time.time() if body.get("enabled", True) is True else None)
    task = body.get("task")
    if not isinstance(task, dict) or task.get("type") not in TASKS:
        raise ConfigError("task: expected {type: Evaluation, evalId, evalRun} or {type: Insight, insight: {request}}")
    if task["type"] == "Insight":
        _check_insight_task(task, store, project)
    else:
        _check_evaluation_task(task, store, project)
    enabled = body.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError("enabled: true or false")
    kept = ("displayName", "description", "trigger", "task", "tags", "properties")
    return {**{k: body[k] for k in kept if k in body}, "enabled": enabled, **({"alert": alert} if alert else {})}


def _check_insight_task(task: dict[str, Any], store: Store, project: str) -> None:
    insight = task.get("insight")
    request = insight.get("request") if isinstance(insight, dict) else None
    if not isinstance(request, dict) or request.get("type") not in (
        "EvaluationRunClusterInsight",
        "EvaluationComparison",
    ):
        raise ConfigError(
            "task.insight.request: expected {type: EvaluationRunClusterInsight, evalId, runIds?} "
            "or {type: EvaluationComparison, ...}"
        )
    if not isinstance(request.get("evalId"), str):
        raise ConfigError("task.insight.request.evalId: name the eval whose runs the insight reads")
    store.get_eval_in(project, request["evalId"])  # a NotFoundError (404) names it


def _check_evaluation_task(task: dict[str, Any], store: Store, project: str) -> None:
    eval_id = task.get("evalId")
    if not isinstance(eval_id, str) or not eval_id:
        raise ConfigError("task.evalId: name the eval the schedule runs")
    store.get_eval_in(project, eval_id)  # a NotFoundError (404) names it
    run = task.get("evalRun")
    if not isinstance(run, dict) or not isinstance(run.get("data_source"), dict):
        raise ConfigError("task.evalRun: the run to create each time, {name?, data_source: {...}}")


def first_fire(body: dict[str, Any], now: float) -> float | None:
    """When a schedule saved ``now`` first fires; a one-time trigger already past is refused, not fired."""
    found = next_fire(body["trigger"], now, anchor=now)
    if found is None and body["trigger"].get("type") == "OneTime":
        raise ConfigError("trigger.triggerAt: the time has passed", hint="give a time to come")
    return found


def schedule_object(row: dict[str, Any]) -> dict[str, Any]:
    system = {"createdAt": _iso(row["created_at"]), "lastModifiedAt": _iso(row["updated_at"])}
    shown = {**row["body"], "id": row["id"], "enabled": row["enabled"], "provisioningStatus": "Succeeded"}
    return {**shown, "systemData": system}


def schedule_run_object(row: dict[str, Any]) -> dict[str, Any]:
    properties = {k: str(row[k]) for k in ("eval_id", "eval_run_id", "insight_id") if row.get(k)}
    found = {
        "id": row["id"],
        "scheduleId": row["schedule_id"],
        "success": row["success"],
        "triggerTime": _iso(row["trigger_time"]),
        "properties": properties | _timing(row),
    }
    return {**found, "error": row["error"]} if row["error"] else found


def _timing(row: dict[str, Any]) -> dict[str, str]:
    """When the firing was made and how late, as the strings Foundry's ``properties`` hold."""
    if row.get("fired_at") is None:  # recorded before firings were timed
        return {}
    delay = max(0.0, row["fired_at"] - row["trigger_time"])
    timing = {"firedAt": _iso(row["fired_at"]), "delaySeconds": f"{delay:.3f}"}
    return timing | ({"late": "true"} if delay > LATE_SECONDS else {})


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def fire_due(ctx: ApiContext, clock: float | None = None) -> list[dict[str, Any]]:
    """Fire every schedule whose time has come (once each across servers); the firings recorded.
    One schedule that cannot fire (a trigger stored before triggers were checked as they are now)
    records why and stops; the others fire."""
    store, clock = ctx.store, time.time() if clock is None else clock
    fired = []
    for row in store.due_schedules(clock):
        try:
            firing = _fire_one(ctx, row, clock)
        except Exception:  # noqa: BLE001 - one schedule's failure is not every project's
            log.exception("schedule %s of project %s: cannot fire", row["id"], row["project"])
            continue
        if firing is not None:
            fired.append(firing)
    return fired


def _fire_one(ctx: ApiContext, row: dict[str, Any], clock: float) -> dict[str, Any] | None:
    from assay.api.routes_runs import queue_run

    store = ctx.store
    error = None
    try:
        due, following = _due(row, clock)
    except (ConfigError, ArithmeticError, ValueError) as exc:
        due, following = row["next_fire"], None
        error = f"the trigger cannot be read, so the schedule stops: {getattr(exc, 'message', exc)}"
    if not store.claim_firing(row["project"], row["id"], row["next_fire"], following):
        return None  # another server fired it
    if due is None:
        due = row["next_fire"]
        error = error or (
            f"missed: no server fired it at its time, and it was more than {_deadline():.0f} s late when one could "
            "(ASSAY_SCHEDULE_STARTING_DEADLINE_SECONDS), so it made nothing; the schedule goes on from now"
        )
    task = row["body"]["task"]
    made: dict[str, str | None] = {"eval_run_id": None, "insight_id": None}
    eval_id = str(task.get("evalId") or (task.get("insight") or {}).get("request", {}).get("evalId"))
    try:
        error = error or _over_the_run_limit(ctx, row["project"])
        if error is None and task["type"] == "Insight":
            made["insight_id"] = _fire_insight(ctx, row["project"], task["insight"])
        elif error is None:
            stored = store.get_eval_in(row["project"], eval_id)
            body = {"name": f"schedule {row['id']}", **task["evalRun"]}
            made["eval_run_id"] = queue_run(ctx, row["project"], stored, body).id
    except Exception as exc:  # noqa: BLE001 - the firing records why it failed; the schedule goes on
        error = getattr(exc, "message", None) or str(exc)
    return store.add_schedule_run(row["project"], row["id"], due, eval_id=eval_id, error=error, fired_at=clock, **made)


def _due(row: dict[str, Any], clock: float) -> tuple[float | None, float | None]:
    """(the firing to make now: the latest one due within the starting deadline, None when every
    one due is older; the firing after ``clock``)."""
    trigger, anchor = row["body"]["trigger"], float(row["updated_at"])
    latest, moment = None, row["next_fire"]
    if moment < clock - _deadline():  # missed by more than the deadline: look from where it ends
        moment = next_fire(trigger, clock - _deadline() - 1e-6, anchor)
    for _ in range(CATCH_UP_SEARCH):
        if moment is None or moment > clock:
            break
        latest, moment = moment, next_fire(trigger, moment, anchor)
    else:
        moment = next_fire(trigger, clock, anchor)
    return latest, moment


def _deadline() -> float:
    from assay.config.settings import settings

    return settings().schedule_starting_deadline_seconds


def _over_the_run_limit(ctx: ApiContext, project: str) -> str | None:
    """Why the project may not start another run now (None: it may): a schedule's firings count
    against the project's run limit, as the runs its callers create do."""
    wait: float = ctx.rate_limits.take(f"project:{project}", "runs", per_minute("runs"))
    if wait <= 0:
        return None
    return (
        "the project's run rate limit (ASSAY_RATE_RUNS_PER_MINUTE) was reached: this firing made nothing "
        f"(the next may in {wait:.0f} s)"
    )


def _fire_insight(ctx: ApiContext, project: str, insight: dict[str, Any]) -> str:
    """Queue the task's insight for a worker; a cluster insight naming no runs reads the eval's
    newest completed run."""
    from assay.api.insights import accept

    request = dict(insight["request"])
    if request["type"] == "EvaluationRunClusterInsight" and not request.get("runIds"):
        done = [run for run in ctx.store.list_runs_of(request["evalId"]) if run.status == "completed"]
        if not done:
            raise ConfigError(f"eval {request['evalId']} has no completed run to read yet")
        request["runIds"] = [done[0].id]
    return str(accept(ctx, project, {**insight, "request": request})["id"])
