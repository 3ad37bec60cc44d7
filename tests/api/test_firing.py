"""The production loop keeps time: a firing missed while no server ran is caught up on once within
the starting deadline, or recorded as missed; a recurrence keeps its wall time whenever it fires;
a dead webhook holds up no schedule; insights are the workers' jobs, not a request's or the
firer's. Firing times come from an injected clock (``fire_due(ctx, clock)``)."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest

from assay.api import background, schedules
from assay.api.insights import accept
from assay.api.rules import start_firer
from assay.errors import ConfigError
from assay.store.jobs import ENDED
from tests.support.fixtures import poll
from tests.support.servers import scripted_receiver

EVAL = {
    "name": "timed",
    "data_source_config": {"type": "custom", "item_schema": {"type": "object"}},
    "testing_criteria": [{"type": "string_check", "name": "s", "input": "a", "reference": "a", "operation": "eq"}],
}
HOUR = 3600.0


def schedule(eval_id: str, trigger: dict, **more) -> dict:
    source = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": {"a": "a"}}]}}
    task = {"type": "Evaluation", "evalId": eval_id, "evalRun": {"data_source": source}}
    return {"trigger": trigger, "task": task, "enabled": True, **more}


def at(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


def test_the_latest_missed_firing_within_the_deadline_fires_once_late(served, monkeypatch):
    monkeypatch.setenv("ASSAY_RATE_RUNS_PER_MINUTE", "0")
    made = served.client().evals.create(**EVAL)
    hourly = {"type": "Cron", "expression": "0 * * * *"}
    served.store.put_schedule("default", "hourly", schedule(made.id, hourly), at("2026-12-06T06:00:00+00:00"))
    # The server was down from before 06:00 to 08:20: 06:00, 07:00 and 08:00 were missed.
    (firing,) = schedules.fire_due(served.app_state, clock=at("2026-12-06T08:20:00+00:00"))
    assert firing["trigger_time"] == at("2026-12-06T08:00:00+00:00") and firing["eval_run_id"]
    shown = schedules.schedule_run_object(firing)
    assert shown["properties"]["late"] == "true" and shown["properties"]["delaySeconds"] == "1200.000"
    assert served.store.get_schedule("default", "hourly")["next_fire"] == at("2026-12-06T09:00:00+00:00")
    assert schedules.fire_due(served.app_state, clock=at("2026-12-06T08:21:00+00:00")) == []  # no burst


def test_a_firing_missed_by_more_than_the_deadline_is_recorded_and_makes_nothing(served, monkeypatch):
    monkeypatch.setenv("ASSAY_SCHEDULE_STARTING_DEADLINE_SECONDS", "600")
    made = served.client().evals.create(**EVAL)
    daily = {"type": "Cron", "expression": "0 9 * * *"}
    served.store.put_schedule("default", "daily", schedule(made.id, daily), at("2026-12-06T09:00:00+00:00"))
    (firing,) = schedules.fire_due(served.app_state, clock=at("2026-12-06T09:30:00+00:00"))
    assert firing["success"] is False and firing["eval_run_id"] is None
    assert firing["error"].startswith("missed:") and "ASSAY_SCHEDULE_STARTING_DEADLINE_SECONDS" in firing["error"]
    assert firing["trigger_time"] == at("2026-12-06T09:00:00+00:00")
    assert served.store.get_schedule("default", "daily")["next_fire"] == at("2026-12-07T09:00:00+00:00")
    assert served.client().evals.runs.list(eval_id=made.id).data == []


def test_a_recurrence_without_a_start_keeps_its_minute_however_late_it_fires(served, monkeypatch):
    monkeypatch.setenv("ASSAY_RATE_RUNS_PER_MINUTE", "0")
    made = served.client().evals.create(**EVAL)
    daily = {"type": "Recurrence", "interval": 1, "schedule": {"type": "Daily", "hours": [9]}}
    # The days from tomorrow on: the schedule's row is saved now, and a recurrence counts from then.
    tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)

    def day(later: int, hour: int, minute: int = 0) -> float:
        return dt.datetime.combine(tomorrow + dt.timedelta(days=later), dt.time(hour, minute), dt.UTC).timestamp()

    saved = day(0, 10, 43)
    first = schedules.first_fire({"trigger": daily}, saved)
    assert first == day(1, 9)  # not 09:43: the minute is not the clock's
    row, _ = served.store.put_schedule("default", "daily", schedule(made.id, daily), first)
    assert abs(row["updated_at"] - time.time()) < 3600  # saved now: the anchor only decides the first day
    (fired,) = schedules.fire_due(served.app_state, clock=first + 137)  # fired 2 min 17 s late
    assert fired["trigger_time"] == first
    assert served.store.get_schedule("default", "daily")["next_fire"] == day(2, 9)


def test_a_webhook_that_never_answers_delays_no_other_projects_schedule(served, monkeypatch):
    """A finished firing of a project whose alert goes to a webhook that holds every request open,
    and another project's schedule due a moment later: it fires while the webhook still holds
    (the firer once waited on the webhook, attempt after attempt)."""
    monkeypatch.setenv("ASSAY_RATE_RUNS_PER_MINUTE", "0")
    store, release = served.store, threading.Event()
    made = served.client().evals.create(**EVAL)
    # Yearly, so that the firing is the due time set below, never a minute boundary it crossed.
    store.put_schedule("busy", "other", schedule(made.id, {"type": "Cron", "expression": "0 0 1 1 *"}), None)
    with scripted_receiver(lambda n: None, release) as (dead, held):
        quiet = schedule(made.id, {"type": "Cron", "expression": "0 0 1 1 *"}, alert={"url": dead})
        store.put_schedule("quiet", "alerting", quiet, None)
        store.add_schedule_run("quiet", "alerting", time.time() + 5, eval_id=made.id, eval_run_id=None, error="boom")
        stop = threading.Event()
        threads = start_firer(served.app_state, stop, "test")
        try:
            assert poll(lambda: list(held), bool, seconds=30)  # the dead webhook holds an attempt open
            due = time.time()
            row = store.get_schedule("busy", "other")
            store.put_schedule("busy", "other", row["body"], due)
            fired = poll(lambda: store.schedule_runs("busy", "other"), bool, seconds=20)
            assert fired and fired[0]["trigger_time"] == due
            assert not release.is_set() and store.alerts_of("quiet")[0]["state"] == "pending"  # still held
        finally:
            stop.set()
            release.set()
            for thread in threads:
                thread.join(timeout=10)


def test_an_insight_is_a_job_the_workers_take_not_the_requests(served):
    """A ``POST /insights`` answers ``Running`` and stores a job no runner holds; a worker takes it
    and makes the insight."""
    from tests.api.conftest import wait_for

    client = served.client()
    made = client.evals.create(**EVAL)
    source = {"type": "jsonl", "source": {"type": "file_content", "content": [{"item": {"a": "b"}}]}}
    run = wait_for(client, made.id, client.evals.runs.create(eval_id=made.id, data_source=source).id)
    request = {"type": "EvaluationRunClusterInsight", "evalId": made.id, "runIds": [run.id]}
    insight = accept(served.app_state, "default", {"request": request})
    assert insight["state"] == "Running"
    # The job is marked done after the insight is stored: wait for the job, not the insight, so the
    # check never falls between the two writes.
    job = poll(
        lambda: served.store.get_job("default", "insight", insight["id"]),
        lambda j: j["status"] in ENDED,
        seconds=60,
    )
    ended = served.store.get_insight("default", insight["id"])
    assert ended["state"] == "Succeeded", ended
    assert job["status"] == "succeeded" and job["result"]["insightId"] == insight["id"]
    assert background.work_once(served.app_state) is False  # taken once: nothing waits


def test_a_trigger_that_never_fires_again_is_refused_unless_the_schedule_is_off(served):
    made = served.client().evals.create(**EVAL)
    ended = {"type": "Cron", "expression": "0 9 * * *", "endTime": "2026-01-01T00:00:00Z"}
    body = schedule(made.id, ended)
    with pytest.raises(ConfigError, match="never fires"):
        schedules.check_schedule(body, served.store, "default")
    kept = schedules.check_schedule({**body, "enabled": False}, served.store, "default")
    assert kept["enabled"] is False and kept["trigger"] == ended
