"""Foundry's schedule triggers as next firing times, worked out by hand for a Wednesday evening."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from assay.errors import ConfigError
from assay.loop.triggers import check, next_fire

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


def firings(trigger, since, until, anchor=None):
    """Every firing of ``trigger`` after ``since`` up to ``until`` (ISO times), as UTC ISO times."""
    found, moment = [], at(since)
    while (moment := next_fire(trigger, moment, anchor)) is not None and moment <= at(until):
        found.append(dt.datetime.fromtimestamp(moment, dt.UTC).strftime("%m-%dT%H:%M"))
    return found


# Europe/Paris: spring 2026-03-29 02:00 CET -> 03:00 CEST (01:00Z); autumn 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z).
# America/New_York: spring 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z); autumn 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z).


@pytest.mark.parametrize(
    ("zone", "since", "until"),
    [
        ("Europe/Paris", "2026-10-24T22:30:00+00:00", "2026-10-25T03:00:00+00:00"),
        ("America/New_York", "2026-11-01T03:30:00+00:00", "2026-11-01T08:00:00+00:00"),
        ("Europe/Paris", "2026-03-28T22:30:00+00:00", "2026-03-29T03:00:00+00:00"),
        ("America/New_York", "2026-03-08T04:30:00+00:00", "2026-03-08T09:00:00+00:00"),
    ],
)
def test_an_hourly_recurrence_fires_every_real_hour_through_a_change(zone, since, until):
    hourly = {"type": "Recurrence", "interval": 1, "schedule": {"type": "Hourly"}, "timeZone": zone}
    found = firings(hourly, since, until, anchor=at(since) - 86400)
    assert len(found) == 5  # each real hour of the four and a half, the repeated one twice
    gaps = {at(f"2026-{b}:00+00:00") - at(f"2026-{a}:00+00:00") for a, b in zip(found, found[1:], strict=False)}
    assert gaps == {3600}


def test_a_wildcard_cron_fires_in_both_passes_of_the_repeated_hour():
    quarterly = {"type": "Cron", "expression": "*/15 * * * *", "timeZone": "America/New_York"}
    # 01:00 EDT (05:00Z) to 01:45 EST (06:45Z): two real hours of 01:xx on the wall.
    found = firings(quarterly, "2026-11-01T04:59:00+00:00", "2026-11-01T06:59:00+00:00")
    assert found == [f"11-01T{h:02}:{m:02}" for h in (5, 6) for m in (0, 15, 30, 45)]
    paris = {**quarterly, "timeZone": "Europe/Paris"}  # 02:00 CEST (00:00Z) to 02:45 CET (01:45Z)
    assert len(firings(paris, "2026-10-24T23:59:00+00:00", "2026-10-25T01:59:00+00:00")) == 8


def test_a_wildcard_cron_has_nothing_to_fire_in_the_skipped_hour():
    quarterly = {"type": "Cron", "expression": "*/15 * * * *", "timeZone": "Europe/Paris"}
    # 01:45 CET is 00:45Z; the next wall time that exists is 03:00 CEST, 01:00Z: fifteen real minutes on.
    assert firings(quarterly, "2026-03-29T00:40:00+00:00", "2026-03-29T01:20:00+00:00") == [
        "03-29T00:45",
        "03-29T01:00",
        "03-29T01:15",
    ]


@pytest.mark.parametrize(
    "trigger",
    [
        {"type": "Cron", "expression": "30 2 * * *"},
        {
            "type": "Recurrence",
            "interval": 1,
            "schedule": {"type": "Daily", "hours": [2]},
            "startTime": "2026-01-01T02:30:00",
        },
    ],
    ids=["cron", "daily"],
)
@pytest.mark.parametrize(
    ("zone", "spring", "autumn"),
    [
        # Paris: 02:30 is skipped on 29 March (fires at the change, 03:00 CEST = 01:00Z) and
        # repeated on 25 October (fires once, at 02:30 CEST = 00:30Z).
        ("Europe/Paris", ("2026-03-29", "03-29T01:00"), ("2026-10-25", "10-25T00:30")),
        # New York: 02:30 is skipped on 8 March (03:00 EDT = 07:00Z); 1 November repeats 01:xx, not
        # 02:xx, so 02:30 EST (07:30Z) fires once as any day.
        ("America/New_York", ("2026-03-08", "03-08T07:00"), ("2026-11-01", "11-01T07:30")),
    ],
)
def test_a_fixed_time_fires_once_on_a_change_day(trigger, zone, spring, autumn):
    trigger = {**trigger, "timeZone": zone}
    for day, expected in (spring, autumn):
        midnight = dt.datetime.fromisoformat(day).replace(tzinfo=ZoneInfo(zone))
        since, until = (midnight + dt.timedelta(hours=h) for h in (0, 23))  # that wall day, whatever its length
        assert firings(trigger, since.isoformat(), until.isoformat()) == [expected]


def test_a_fixed_time_in_the_repeated_hour_fires_once_on_its_first_pass():
    trigger = {"type": "Cron", "expression": "30 1 * * *", "timeZone": "America/New_York"}
    assert firings(trigger, "2026-11-01T00:00:00-04:00", "2026-11-01T23:00:00-05:00") == ["11-01T05:30"]


def test_a_recurrence_without_a_start_keeps_its_hours_on_the_hour():
    saved = at("2026-12-02T10:43:17+00:00")
    daily = {"type": "Recurrence", "interval": 1, "schedule": {"type": "Daily", "hours": [9]}}
    assert firings(daily, "2026-12-02T10:43:17+00:00", "2026-12-05T12:00:00+00:00", anchor=saved) == [
        "12-03T09:00",
        "12-04T09:00",
        "12-05T09:00",
    ]
    every_other = {"type": "Recurrence", "interval": 2, "schedule": {"type": "Daily", "hours": [9, 21]}}
    assert firings(every_other, "2026-12-02T11:00:00+00:00", "2026-12-05T00:00:00+00:00", anchor=saved) == [
        "12-02T21:00",
        "12-04T09:00",
        "12-04T21:00",
    ]
    hourly = {"type": "Recurrence", "interval": 3, "schedule": {"type": "Hourly"}}
    assert firings(hourly, "2026-12-02T10:43:17+00:00", "2026-12-02T20:00:00+00:00", anchor=saved) == [
        "12-02T13:00",
        "12-02T16:00",
        "12-02T19:00",
    ]


def test_a_day_past_a_months_end_fires_on_its_last_day():
    monthly = {
        "type": "Recurrence",
        "interval": 1,
        "schedule": {"type": "Monthly", "daysOfMonth": [30, 31]},
        "startTime": "2027-01-01T07:00:00Z",
    }
    assert firings(monthly, "2027-01-01T00:00:00+00:00", "2027-05-01T00:00:00+00:00") == [
        "01-30T07:00",
        "01-31T07:00",
        "02-28T07:00",  # once, though both 30 and 31 are past February's end
        "03-30T07:00",
        "03-31T07:00",
        "04-30T07:00",
    ]
    leap = {**monthly, "schedule": {"type": "Monthly", "daysOfMonth": [31]}, "startTime": "2028-02-01T07:00:00Z"}
    assert firings(leap, "2028-02-01T00:00:00+00:00", "2028-03-01T00:00:00+00:00") == ["02-29T07:00"]


@pytest.mark.parametrize(
    "trigger",
    [
        {"type": "Cron", "expression": "0 9 * * *", "endTime": "2026-12-01T00:00:00Z"},
        {
            "type": "Recurrence",
            "interval": 1,
            "schedule": {"type": "Daily", "hours": [9]},
            "startTime": "2026-12-10T10:00:00Z",
            "endTime": "2026-12-10T11:00:00Z",
        },
        {
            "type": "Cron",
            "expression": "0 0 29 2 *",
            "startTime": "2097-03-01T00:00:00Z",
            "endTime": "2100-12-31T00:00:00Z",
        },
    ],
    ids=["ended", "window-between-firings", "no-29-february-left"],
)
def test_a_trigger_that_never_fires_again_is_refused(trigger):
    check(trigger)  # it reads
    with pytest.raises(ConfigError, match="never fires"):
        check(trigger, NOW)
