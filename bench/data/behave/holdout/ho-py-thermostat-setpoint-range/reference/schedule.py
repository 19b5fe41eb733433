"""Weekly heating schedule for the thermostat controller.

A schedule file has one switch point per line, ``DAYS HH:MM TEMP``::

    # weekdays
    mon-fri 06:30 21.0
    mon-fri 22:00 17.5
    sat,sun 08:00 21.5

DAYS is a day (``mon``), a range (``mon-fri``) or a comma list of those. The setpoint
of a switch point holds until the next one, wrapping round from Sunday to Monday.
"""

from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
MIN_SETPOINT = 5.0  # frost protection
MAX_SETPOINT = 30.0
MINUTES_PER_WEEK = 7 * 24 * 60


class ScheduleError(ValueError):
    pass


@dataclass(frozen=True, order=True)
class SwitchPoint:
    minute_of_week: int
    celsius: float


def parse_days(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.lower().split(","):
        first, _, last = part.partition("-")
        if first not in DAYS or (last and last not in DAYS):
            raise ScheduleError(f"unknown day in {spec!r}")
        a = DAYS.index(first)
        b = DAYS.index(last) if last else a
        if b < a:
            raise ScheduleError(f"day range {part!r} runs backwards")
        out.extend(range(a, b + 1))
    return out


def parse_time(text: str) -> int:
    """``HH:MM`` -> minutes after midnight."""
    hours, sep, minutes = text.partition(":")
    if not sep or not hours.isdigit() or not minutes.isdigit():
        raise ScheduleError(f"bad time {text!r}, expected HH:MM")
    h, m = int(hours), int(minutes)
    if h > 23 or m > 59:
        raise ScheduleError(f"bad time {text!r}")
    return h * 60 + m


def parse_schedule(text: str) -> list[SwitchPoint]:
    """The switch points of a schedule file, in week order (Monday 00:00 first)."""
    points: dict[int, float] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 3:
            raise ScheduleError(f"line {lineno}: expected DAYS HH:MM TEMP, got {raw!r}")
        days_spec, time_spec, temp_spec = fields
        try:
            minute = parse_time(time_spec)
            days = parse_days(days_spec)
            celsius = float(temp_spec)
            if not MIN_SETPOINT <= celsius <= MAX_SETPOINT:
                raise ScheduleError(f"{celsius} °C is outside {MIN_SETPOINT}-{MAX_SETPOINT} °C")
        except ValueError as e:
            raise ScheduleError(f"line {lineno}: {e}") from None
        for day in days:
            points[day * 24 * 60 + minute] = celsius
    if not points:
        raise ScheduleError("the schedule has no switch points")
    return sorted(SwitchPoint(m, c) for m, c in points.items())


def setpoint_at(schedule: list[SwitchPoint], when: dt.datetime) -> float:
    """The scheduled temperature at ``when`` (local time)."""
    minute = when.weekday() * 24 * 60 + when.hour * 60 + when.minute
    i = bisect.bisect_right([p.minute_of_week for p in schedule], minute)
    return schedule[i - 1].celsius  # i == 0 wraps to last week's final point


class Thermostat:
    def __init__(self, schedule: list[SwitchPoint]):
        self.schedule = schedule
        self.override: float | None = None

    def set_override(self, celsius: float) -> None:
        if not MIN_SETPOINT <= celsius <= MAX_SETPOINT:
            raise ValueError(f"{celsius} °C is outside {MIN_SETPOINT}-{MAX_SETPOINT} °C")
        self.override = celsius

    def clear_override(self) -> None:
        self.override = None

    def target(self, when: dt.datetime) -> float:
        if self.override is not None:
            return self.override
        return setpoint_at(self.schedule, when)


def load_schedule(path: str) -> list[SwitchPoint]:
    with open(path, encoding="utf-8") as f:
        return parse_schedule(f.read())
