"""Foundry's schedule triggers as next firing times, worked out by hand for a Wednesday evening."""

from __future__ import annotations

import datetime as dt

import pytest

from assay.errors import ConfigError
from assay.triggers import check, next_fire

NOW = dt.datetime(2026, 12, 2, 20, 52, 30, tzinfo=dt.UTC).timestamp()  # a Wednesday


def at(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


@pytest.mark.parametrize(
    ("trigger", "expected"),
    [
        ({"type": "Cron", "expression": "*/15 * * * *"}, "2026-12-02T21:00:00+00:00"),
        ({"type": "Cron", "expression": "0 9 * * 1-5"}, "2026-12-03T09:00:00+00:00"),
        ({"type": "Cron", "expression": "0 9 * * 0"}, "2026-12-06T09:00:00+00:00"),
        ({"type": "Cron", "expression": "30 8 1 * *", "timeZone": "Europe/Paris"}, "2027-01-01T07:30:00+00:00"),
        (
            {"type": "Recurrence", "interval": 2, "schedule": {"type": "Hourly"}, "startTime": "2026-12-02T10:05:00Z"},
            "2026-12-02T22:05:00+00:00",
        ),
        (
            {
                "type": "Recurrence",
                "interval": 1,
                "schedule": {"type": "Daily", "hours": [6, 18]},
                "startTime": "2026-12-01T00:30:00Z",
            },
            "2026-12-03T06:30:00+00:00",
        ),
        (
            {
                "type": "Recurrence",
                "interval": 2,
                "schedule": {"type": "Weekly", "daysOfWeek": ["Monday"]},
                "startTime": "2026-11-23T09:00:00Z",
            },
            "2026-12-07T09:00:00+00:00",
        ),
        (
            {
                "type": "Recurrence",
                "interval": 1,
                "schedule": {"type": "Monthly", "daysOfMonth": [31]},
                "startTime": "2026-01-01T07:00:00Z",
            },
            "2026-12-31T07:00:00+00:00",
        ),
        ({"type": "OneTime", "triggerAt": "2026-12-02T21:00:00Z"}, "2026-12-02T21:00:00+00:00"),
    ],
)
def test_the_next_firing(trigger, expected):
    assert next_fire(trigger, NOW) == at(expected)


def test_a_trigger_past_its_end_or_time_fires_no_more():
    assert next_fire({"type": "OneTime", "triggerAt": "2026-12-02T20:00:00Z"}, NOW) is None
    ended = {"type": "Cron", "expression": "0 * * * *", "endTime": "2026-12-02T20:59:00Z"}
    assert next_fire(ended, NOW) is None


@pytest.mark.parametrize(
    ("trigger", "named"),
    [
        ({"type": "Cron", "expression": "61 * * * *"}, "the minute field '61'"),
        ({"type": "Cron", "expression": "* * *"}, "five fields"),
        ({"type": "Recurrence", "interval": 0, "schedule": {"type": "Hourly"}}, "trigger.interval"),
        ({"type": "Recurrence", "interval": 1, "schedule": {"type": "Daily", "hours": [25]}}, "schedule.hours"),
        ({"type": "OneTime", "triggerAt": "tomorrow"}, "trigger.triggerAt"),
        ({"type": "Cron", "expression": "0 9 * * *", "timeZone": "Mars/Olympus"}, "trigger.timeZone"),
        ({"type": "Weekly"}, "trigger.type"),
    ],
)
def test_a_trigger_it_cannot_read_is_named(trigger, named):
    with pytest.raises(ConfigError, match=named.replace("(", "\\(")):
        check(trigger)
