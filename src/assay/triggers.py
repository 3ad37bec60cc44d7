"""When a schedule fires: Foundry's triggers (``OneTime``, ``Recurrence``, ``Cron``) as the next
instant after a given one, in the trigger's time zone (``timeZone``, an IANA name; UTC when absent).

- ``OneTime``: ``triggerAt``, once.
- ``Recurrence``: every ``interval`` hours (``Hourly``), days (``Daily``, at each of ``hours``),
  weeks (``Weekly``, on each of ``daysOfWeek``) or months (``Monthly``, on each of ``daysOfMonth``),
  counted from ``startTime`` (whose minute, and hour where no hours are given, they keep), until
  ``endTime``.
- ``Cron``: a five-field expression (minute hour day-of-month month day-of-week; ``*``, lists,
  ranges and ``/`` steps; day 0 or 7 is Sunday), between ``startTime`` and ``endTime``.

Every function raises ``ConfigError`` naming the field for a trigger it cannot read.
"""

from __future__ import annotations

import calendar
import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from assay.errors import ConfigError

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
HORIZON_DAYS = 366 * 5
"""How far ahead a search looks before saying the trigger never fires again."""
YEARS = (1970, 9000)
"""The years a trigger's times may name: within them every time converts to epoch seconds and back."""
LONGEST_INTERVAL = {"Hourly": 24 * 3653, "Daily": 3653, "Weekly": 522, "Monthly": 120}
"""A recurrence's longest ``interval`` in its unit: ten years."""


def next_fire(trigger: dict[str, Any], after: float) -> float | None:
    """The first firing strictly after ``after`` (epoch seconds), or None when there is none."""
    zone = _zone(trigger.get("timeZone"))
    kind = trigger.get("type")
    moment = dt.datetime.fromtimestamp(after, zone)
    if kind == "OneTime":
        at = _when(trigger.get("triggerAt"), "trigger.triggerAt", zone)
        return at.timestamp() if at.timestamp() > after else None
    start = _when(trigger["startTime"], "trigger.startTime", zone) if trigger.get("startTime") else None
    end = _when(trigger["endTime"], "trigger.endTime", zone) if trigger.get("endTime") else None
    if kind == "Recurrence":
        found = _recurrence(trigger, start or moment.replace(second=0, microsecond=0), moment)
    elif kind == "Cron":
        found = _cron(parse_cron(trigger.get("expression")), max(moment, start) if start else moment)
    else:
        raise ConfigError("trigger.type: OneTime, Recurrence or Cron")
    if found is None or (end is not None and found > end):
        return None
    return found.timestamp()


def check(trigger: Any) -> None:
    """Refuse a trigger that cannot be read (each field named), before it is stored."""
    if not isinstance(trigger, dict):
        raise ConfigError("trigger: expected {type: OneTime | Recurrence | Cron, ...}")
    kind = trigger.get("type")
    if kind == "Recurrence":
        unit = _recurrence_kind(trigger.get("schedule"))
        interval, longest = trigger.get("interval"), LONGEST_INTERVAL[unit]
        if isinstance(interval, bool) or not isinstance(interval, int) or not 1 <= interval <= longest:
            raise ConfigError(f"trigger.interval: a whole number from 1 to {longest} ({unit}), got {interval!r}")
    elif kind == "Cron":
        fields = parse_cron(trigger.get("expression"))
        if _cron(fields, dt.datetime(2000, 1, 1, tzinfo=dt.UTC)) is None:  # 2000 to 2005: every date there is
            raise ConfigError(
                f"trigger.expression: {trigger.get('expression')!r} names no date that exists (such as 30 February)"
            )
    elif kind != "OneTime":
        raise ConfigError(f"trigger.type: OneTime, Recurrence or Cron, got {kind!r}")
    next_fire(trigger, 0.0)  # dates and the time zone read


def _zone(name: Any) -> dt.tzinfo:
    if name in (None, "", "UTC"):
        return dt.UTC
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"trigger.timeZone: {name!r} is not an IANA time zone such as Europe/Paris") from None


def _when(value: Any, where: str, zone: dt.tzinfo) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        if not YEARS[0] <= moment.year <= YEARS[1]:
            raise OverflowError
        moment = moment.replace(tzinfo=zone) if moment.tzinfo is None else moment.astimezone(zone)
        moment.timestamp()  # within the years, yet a zone's offset could still carry it past them
    except ValueError:
        raise ConfigError(f"{where}: an ISO 8601 time such as 2026-12-03T09:00:00Z, got {value!r}") from None
    except OverflowError:
        raise ConfigError(f"{where}: a time in the years {YEARS[0]} to {YEARS[1]}, got {value!r}") from None
    return moment


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
            or not all(isinstance(v, int) and low <= v <= high for v in values)
        ):
            raise ConfigError(f"trigger.schedule.{field}: a list of whole numbers from {low} to {high}")
    if kind == "Weekly":
        days = schedule.get("daysOfWeek")
        if not isinstance(days, list) or not days or any(str(d).capitalize() not in DAYS for d in days):
            raise ConfigError(f"trigger.schedule.daysOfWeek: a list of {', '.join(DAYS)}")
    return kind


def _recurrence(trigger: dict[str, Any], start: dt.datetime, after: dt.datetime) -> dt.datetime | None:
    schedule, interval = trigger["schedule"], int(trigger["interval"])
    kind = _recurrence_kind(schedule)
    if kind == "Hourly":
        if start > after:
            return start
        steps = int((after - start).total_seconds() // (3600 * interval)) + 1
        return start + dt.timedelta(hours=interval * steps)
    day = max(start, after).date() if kind != "Monthly" else max(start, after).date().replace(day=1)
    for _ in range(HORIZON_DAYS):
        for candidate in _day_times(schedule, kind, start, day):
            if candidate > after and candidate >= start and _in_step(kind, start, candidate, interval):
                return candidate
        day = _next_month(day) if kind == "Monthly" else day + dt.timedelta(days=1)
    return None


def _day_times(schedule: dict[str, Any], kind: str, start: dt.datetime, day: dt.date) -> list[dt.datetime]:
    def at(date: dt.date, hour: int) -> dt.datetime:
        return dt.datetime(date.year, date.month, date.day, hour, start.minute, tzinfo=start.tzinfo)

    if kind == "Daily":
        return [at(day, hour) for hour in sorted(schedule["hours"])]
    if kind == "Weekly":
        wanted = {DAYS.index(str(d).capitalize()) for d in schedule["daysOfWeek"]}
        return [at(day, start.hour)] if day.weekday() in wanted else []
    last = calendar.monthrange(day.year, day.month)[1]
    return [at(day.replace(day=d), start.hour) for d in sorted(schedule["daysOfMonth"]) if d <= last]


def _in_step(kind: str, start: dt.datetime, candidate: dt.datetime, interval: int) -> bool:
    """Whether ``candidate`` falls in an active period: every ``interval`` days, weeks or months from the start."""
    if kind == "Daily":
        return (candidate.date() - start.date()).days % interval == 0
    if kind == "Weekly":
        weeks = (candidate.date() - (start.date() - dt.timedelta(days=start.weekday()))).days // 7
        return weeks % interval == 0
    months = (candidate.year - start.year) * 12 + candidate.month - start.month
    return months % interval == 0


def _next_month(day: dt.date) -> dt.date:
    return dt.date(day.year + (day.month == 12), day.month % 12 + 1, 1)


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


def _cron(fields: list[set[int]], after: dt.datetime) -> dt.datetime | None:
    minutes, hours, days, months, weekdays = fields
    any_day, any_weekday = days == set(range(1, 32)), weekdays == set(range(0, 7))
    moment = after.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
    for _ in range(HORIZON_DAYS):
        weekday = (moment.weekday() + 1) % 7  # cron counts from Sunday
        # Cron's rule: when both day fields are restricted, either one matching is enough.
        if any_day or any_weekday:
            day_ok = moment.day in days and weekday in weekdays
        else:
            day_ok = moment.day in days or weekday in weekdays
        if moment.month in months and day_ok:
            for hour in sorted(h for h in hours if h >= moment.hour):
                for minute in sorted(minutes):
                    candidate = moment.replace(hour=hour, minute=minute)
                    if candidate >= moment:
                        return candidate
        moment = (moment + dt.timedelta(days=1)).replace(hour=0, minute=0)
    return None
