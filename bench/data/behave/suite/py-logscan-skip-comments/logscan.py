"""Scan service log files and summarise them for the on-call report.

A log line looks like::

    2024-03-01 12:00:05 ERROR payments: card declined (id=42)

that is a date, a time, a level, the component and a colon, then the message.
"""

from collections import Counter, defaultdict
from datetime import datetime

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


class LogLine:
    __slots__ = ("when", "level", "component", "message")

    def __init__(self, when, level, component, message):
        self.when = when
        self.level = level
        self.component = component
        self.message = message


def parse_line(line):
    """A ``LogLine`` from one line of a log file; ValueError if it is malformed."""
    date, time, level, rest = line.split(" ", 3)
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}")
    component, sep, message = rest.partition(": ")
    if not sep:
        raise ValueError("no component")
    when = datetime.strptime(f"{date} {time}", TIME_FORMAT)
    return LogLine(when, level, component, message.rstrip("\n"))


def read_log(path):
    with open(path, encoding="utf-8") as f:
        return f.readlines()


def count_levels(lines):
    """How many lines there are of each level, as a Counter."""
    counts = Counter()
    for line in lines:
        entry = parse_line(line)
        counts[entry.level] += 1
    return counts


def errors_by_component(lines):
    """The ERROR and CRITICAL messages grouped by component."""
    grouped = defaultdict(list)
    for line in lines:
        if not line.strip():
            continue
        entry = parse_line(line)
        if entry.level in ("ERROR", "CRITICAL"):
            grouped[entry.component].append(entry.message)
    return dict(grouped)


def time_span(lines):
    """The first and last timestamps of the log, or None for an empty log."""
    stamps = [parse_line(line).when for line in lines if line.strip()]
    if not stamps:
        return None
    return min(stamps), max(stamps)


def report(lines):
    """A short text report for the on-call channel."""
    counts = count_levels(lines)
    out = [f"{level}: {counts.get(level, 0)}" for level in LEVELS if counts.get(level)]
    span = time_span(lines)
    if span:
        out.append(f"from {span[0]:%H:%M} to {span[1]:%H:%M}")
    return "\n".join(out)
