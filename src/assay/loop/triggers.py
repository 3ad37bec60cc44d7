"""When a schedule fires: Foundry's triggers (``OneTime``, ``Recurrence``, ``Cron``) as the next
instant after a given one, worked out on the wall clock of the trigger's time zone (``timeZone``, an
IANA name; UTC when absent).

- ``OneTime``: ``triggerAt``, once.
- ``Recurrence``: ``Hourly`` fires every ``interval`` hours of elapsed time; ``Daily`` at each of
  ``hours``, every ``interval`` days; ``Weekly`` on each of ``daysOfWeek``, every ``interval``
  weeks; ``Monthly`` on each of ``daysOfMonth``, every ``interval`` months, a day past a month's end
  (31 in April) meaning its last day. Days, weeks and months are counted from ``startTime``, whose
  minute (and, for ``Weekly`` and ``Monthly``, hour) the firings keep. Without ``startTime`` they
  count from when the schedule was saved (the ``anchor``) and fire on the hour (``Weekly`` and
  ``Monthly`` at midnight): ``Daily hours:[9]`` fires at 09:00, whatever the minute it was saved.
  Firings stop after ``endTime``.
- ``Cron``: a five-field expression (minute hour day-of-month month day-of-week; ``*``, lists,
  ranges and ``/`` steps; day 0 or 7 is Sunday; when both day fields are restricted either one
  matching is enough), between ``startTime`` and ``endTime``.

Daylight-saving changes follow Vixie cron. A firing at a fixed wall time (a recurrence's, or a cron
expression whose minute and hour fields do not start with ``*``) that falls in the hour skipped in
spring fires at the change (02:30 fires at 03:00), and one in the hour repeated in autumn fires once,
the first time. A cron expression whose minute or hour starts with ``*`` (``*/15 * * * *``) fires at
every instant whose wall time matches: none in the skipped hour, both passes of the repeated one.
``Hourly`` counts real hours, so it fires every hour through either change.

Every function raises ``ConfigError`` naming the field for a trigger it cannot read, and ``check``
refuses one that can never fire.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Iterator
from typing import Any, Required, TypedDict, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from assay.errors import ConfigError


class RecurrenceSchedule(TypedDict, total=False):
    """A ``Recurrence`` trigger's ``schedule``, as Foundry's schedules carry it."""

    type: Required[str]
    """Hourly, Daily (``hours``), Weekly (``daysOfWeek``) or Monthly (``daysOfMonth``)."""
    hours: list[int]
    minutes: list[int]
    daysOfWeek: list[str]
    daysOfMonth: list[int]


class Trigger(TypedDict, total=False):
    """A schedule's ``trigger``, as Foundry's schedules carry it (``check`` refuses any other)."""

    type: Required[str]
    """OneTime (``triggerAt``), Recurrence (``interval``, ``schedule``) or Cron (``expression``)."""
    timeZone: str
    triggerAt: str
    startTime: str
    endTime: str
    interval: int
    schedule: RecurrenceSchedule
    expression: str


DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
HORIZON_DAYS = 366 * 5
"""How far ahead a search looks before saying the trigger never fires again."""
YEARS = (1970, 9000)
"""The years a trigger's times may name: within them every time converts to epoch seconds and back."""
LONGEST_INTERVAL = {"Hourly": 24 * 3653, "Daily": 3653, "Weekly": 522, "Monthly": 120}
"""A recurrence's longest ``interval`` in its unit: ten years."""
SHIFT = dt.timedelta(hours=3)
"""More than any daylight-saving change moves a wall time (two hours at most, in any zone)."""


def next_fire(trigger: Trigger, after: float, anchor: float | None = None) -> float | None:
    """The first firing strictly after ``after`` (epoch seconds), or None when there is none.
    ``anchor``: when the schedule was saved, from which a recurrence without ``startTime`` counts
    (``after`` when not given)."""
    zone = _zone(trigger.get("timeZone"))
    kind = trigger.get("type")
    if kind == "OneTime":
        at = _when(trigger.get("triggerAt"), "trigger.triggerAt", zone)
        return at if at > after else None
    start = _when(trigger["startTime"], "trigger.startTime", zone) if trigger.get("startTime") else None
    end = _when(trigger["endTime"], "trigger.endTime", zone) if trigger.get("endTime") else None
    if kind == "Recurrence":
        found = _recurrence(trigger, zone, start, after if anchor is None else anchor, after)
    elif kind == "Cron":
        expression = trigger.get("expression")
        fields, wildcard = parse_cron(expression), _wildcard(expression)
        days = _cron_days(fields, zone, max(after, start or after))
        found = _first_after(days, zone, wildcard, max(after, (start or after) - 1))
    else:
        raise ConfigError("trigger.type: OneTime, Recurrence or Cron")
    if found is None or (end is not None and found > end):
        return None
    return found


def check(trigger: Any, now: float | None = None) -> None:
    """Refuse a trigger that cannot be read (each field named), before it is stored; with ``now``,
    one that will never fire after it too."""
    if not isinstance(trigger, dict):
        raise ConfigError("trigger: expected {type: OneTime | Recurrence | Cron, ...}")
    trigger = cast(Trigger, trigger)  # its fields are each read, and refused, below
    kind = trigger.get("type")
    if kind == "Recurrence":
        _interval(trigger, _recurrence_kind(trigger.get("schedule")))
    elif kind == "Cron":
        fields = parse_cron(trigger.get("expression"))
        if _first_after(_cron_days(fields, dt.UTC, 946684800.0), dt.UTC, True, 946684800.0) is None:
            raise ConfigError(  # 2000 to 2005 hold every date there is, 29 February included
                f"trigger.expression: {trigger.get('expression')!r} names no date that exists (such as 30 February)"
            )
    elif kind != "OneTime":
        raise ConfigError(f"trigger.type: OneTime, Recurrence or Cron, got {kind!r}")
    next_fire(trigger, 0.0)  # dates and the time zone read
    if now is not None and kind != "OneTime" and next_fire(trigger, now) is None:
        raise ConfigError(
            "trigger: it never fires after now (its endTime has passed, or comes before any firing)",
            hint="give an endTime to come, or none",
        )


def _zone(name: Any) -> dt.tzinfo:
    if name in (None, "", "UTC"):
        return dt.UTC
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"trigger.timeZone: {name!r} is not an IANA time zone such as Europe/Paris") from None


def _when(value: Any, where: str, zone: dt.tzinfo) -> float:
    """An ISO 8601 time as epoch seconds; one without an offset is a wall time in ``zone``."""
    try:
        moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        if not YEARS[0] <= moment.year <= YEARS[1]:
            raise OverflowError
        if moment.tzinfo is None:
            return _instant(moment, zone)
        return moment.timestamp()
    except ValueError:
        raise ConfigError(f"{where}: an ISO 8601 time such as 2026-12-03T09:00:00Z, got {value!r}") from None
    except OverflowError:
        raise ConfigError(f"{where}: a time in the years {YEARS[0]} to {YEARS[1]}, got {value!r}") from None


# -- wall clock ------------------------------------------------------------------------------------


def _exists(wall: dt.datetime, zone: dt.tzinfo) -> bool:
    """Whether the wall time happens in ``zone`` (not in the hour a spring change skips)."""
    there = dt.datetime.fromtimestamp(wall.replace(tzinfo=zone).timestamp(), zone)
    return there.replace(tzinfo=None) == wall


def _instant(wall: dt.datetime, zone: dt.tzinfo) -> float:
    """When a fixed wall time fires: its first pass in an autumn's repeated hour; the change
    itself when spring skips it."""
    while not _exists(wall, zone):  # at most a gap's length: minutes to the change's end
        wall = wall.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
    return wall.replace(tzinfo=zone, fold=0).timestamp()


def _instants(wall: dt.datetime, zone: dt.tzinfo, wildcard: bool) -> list[float]:
    """When a wall time fires: as ``_instant`` for a fixed time; for a wildcard one, every pass of
    it (none in a skipped hour, two in a repeated one)."""
    if not wildcard:
        return [_instant(wall, zone)]
    if not _exists(wall, zone):
        return []
    first, second = (wall.replace(tzinfo=zone, fold=fold).timestamp() for fold in (0, 1))
    return [first] if first == second else [first, second]


def _first_after(
    days: Iterator[tuple[dt.date, list[tuple[int, int]]]], zone: dt.tzinfo, wildcard: bool, after: float
) -> float | None:
    """The first instant after ``after`` of the wall times of each day (the days in order, each
    day's times in order). A wall time's instant lies within ``SHIFT`` of its naive reading, so
    the search skips the times well before ``after`` and stops well after the first it finds."""
    floor = dt.datetime.fromtimestamp(after, zone).replace(tzinfo=None) - SHIFT
    best: float | None = None
    ceiling: dt.datetime | None = None
    for day, times in days:
        for hour, minute in times:
            wall = dt.datetime(day.year, day.month, day.day, hour, minute)
            if wall < floor:
                continue
            if ceiling is not None and wall > ceiling:
                return best
            for instant in _instants(wall, zone, wildcard):
                if instant > after and (best is None or instant < best):
                    best, ceiling = instant, wall + SHIFT
    return best


def _days_from(after: float, zone: dt.tzinfo) -> Iterator[dt.date]:
    """The days of ``zone`` from the day before ``after``'s (a change can move a firing across
    midnight), for the search's horizon."""
    day = dt.datetime.fromtimestamp(after, zone).date() - dt.timedelta(days=1)
    for _ in range(HORIZON_DAYS):
        yield day
        day += dt.timedelta(days=1)


# -- recurrences -----------------------------------------------------------------------------------


def _recurrence_kind(schedule: Any) -> str:
    kinds = ("Hourly", "Daily", "Weekly", "Monthly")
    if not isinstance(schedule, dict) or schedule.get("type") not in kinds:
        raise ConfigError(
            "trigger.schedule: {type: Hourly | Daily (hours) | Weekly (daysOfWeek) | Monthly (daysOfMonth)}"
        )
    kind = str(schedule["type"])
    field, low, high = {"Daily": ("hours", 0, 23), "Monthly": ("daysOfMonth", 1, 31)}.get(kind, ("", 0, 0))
    if field:
        values = schedule.get(field)
        if (
            not isinstance(values, list)
            or not values
            or not all(isinstance(v, int) and not isinstance(v, bool) and low <= v <= high for v in values)
        ):
            raise ConfigError(f"trigger.schedule.{field}: a list of whole numbers from {low} to {high}")
    if kind == "Weekly":
        days = schedule.get("daysOfWeek")
        if not isinstance(days, list) or not days or any(str(d).capitalize() not in DAYS for d in days):
            raise ConfigError(f"trigger.schedule.daysOfWeek: a list of {', '.join(DAYS)}")
    return kind


def _interval(trigger: Trigger, unit: str) -> int:
    interval, longest = trigger.get("interval"), LONGEST_INTERVAL[unit]
    if isinstance(interval, bool) or not isinstance(interval, int) or not 1 <= interval <= longest:
        raise ConfigError(f"trigger.interval: a whole number from 1 to {longest} ({unit}), got {interval!r}")
    return interval


def _recurrence(trigger: Trigger, zone: dt.tzinfo, start: float | None, anchor: float, after: float) -> float | None:
    schedule = trigger["schedule"]
    kind = _recurrence_kind(schedule)
    interval = _interval(trigger, kind)
    origin = dt.datetime.fromtimestamp(start if start is not None else anchor, zone).replace(tzinfo=None)
    if start is None:  # on the hour, from the hour it was saved; weekly and monthly at midnight
        origin = origin.replace(minute=0, second=0, microsecond=0)
        if kind in ("Weekly", "Monthly"):
            origin = origin.replace(hour=0)
    if kind == "Hourly":  # elapsed hours: through a daylight-saving change as through any hour
        first = start if start is not None else _instant(origin, zone)
        if first > after:
            return first
        return first + 3600 * interval * (int((after - first) // (3600 * interval)) + 1)
    earliest = start if start is not None else anchor

    def days() -> Iterator[tuple[dt.date, list[tuple[int, int]]]]:
        for day in _days_from(max(after, earliest), zone):
            if _in_step(kind, origin.date(), day, interval):
                yield day, _day_times(schedule, kind, origin, day)

    return _first_after(days(), zone, False, max(after, earliest - 1))


def _day_times(schedule: RecurrenceSchedule, kind: str, origin: dt.datetime, day: dt.date) -> list[tuple[int, int]]:
    """The wall times (hour, minute) a recurrence fires at on ``day`` of an active period."""
    if kind == "Daily":
        return [(hour, origin.minute) for hour in sorted(set(schedule["hours"]))]
    if kind == "Weekly":
        wanted = {DAYS.index(str(d).capitalize()) for d in schedule["daysOfWeek"]}
        return [(origin.hour, origin.minute)] if day.weekday() in wanted else []
    last = calendar.monthrange(day.year, day.month)[1]
    named = set(schedule["daysOfMonth"])
    fires = day.day in named or (day.day == last and max(named) > last)  # 31 in a short month: its last day
    return [(origin.hour, origin.minute)] if fires else []


def _in_step(kind: str, origin: dt.date, day: dt.date, interval: int) -> bool:
    """Whether ``day`` falls in an active period: every ``interval`` days, weeks or months from the origin."""
    if day < origin:
        return False
    if kind == "Daily":
        return (day - origin).days % interval == 0
    if kind == "Weekly":
        return ((day - (origin - dt.timedelta(days=origin.weekday()))).days // 7) % interval == 0
    return ((day.year - origin.year) * 12 + day.month - origin.month) % interval == 0


# -- cron ------------------------------------------------------------------------------------------


FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))


def parse_cron(expression: Any) -> list[set[int]]:
    """The five fields' allowed values (day of week 7 folded into 0: Sunday)."""
    parts = str(expression or "").split()
    if len(parts) != 5:
        raise ConfigError(f"trigger.expression: five fields (minute hour day month weekday), got {expression!r}")
    fields = []
    for part, (name, low, high) in zip(parts, FIELDS, strict=True):
        values: set[int] = set()
        for piece in part.split(","):
            span, _, step_text = piece.partition("/")
            try:
                step = int(step_text) if step_text else 1
                first, last = (low, high) if span == "*" else map(int, (span.split("-") + [span])[:2])
                if step_text and "-" not in span and span != "*":
                    last = high  # "5/15": from 5, every 15
                if step < 1 or not low <= first <= last <= high:
                    raise ValueError
            except ValueError:
                raise ConfigError(f"trigger.expression: the {name} field {part!r} is not {low}-{high}") from None
            values.update(range(first, last + 1, step))
        fields.append(values)
    if 7 in fields[4]:
        fields[4] = (fields[4] - {7}) | {0}
    return fields


def _wildcard(expression: Any) -> bool:
    """Whether the expression's minute or hour field starts with ``*``: Vixie cron runs such a job
    by real time through a daylight-saving change, and a fixed-time one once, at its wall time."""
    minute, hour = str(expression).split()[:2]
    return minute.startswith("*") or hour.startswith("*")


def _cron_days(
    fields: list[set[int]], zone: dt.tzinfo, after: float
) -> Iterator[tuple[dt.date, list[tuple[int, int]]]]:
    minutes, hours, days, months, weekdays = fields
    any_day, any_weekday = days == set(range(1, 32)), weekdays == set(range(0, 7))
    times = [(hour, minute) for hour in sorted(hours) for minute in sorted(minutes)]
    for day in _days_from(after, zone):
        weekday = (day.weekday() + 1) % 7  # cron counts from Sunday
        # Cron's rule: when both day fields are restricted, either one matching is enough.
        if any_day or any_weekday:
            day_ok = day.day in days and weekday in weekdays
        else:
            day_ok = day.day in days or weekday in weekdays
        if day.month in months and day_ok:
            yield day, times
