"""Formatters for the structured logs of the job runner.

A record is a dict with ``time`` (a datetime), ``level``, ``msg`` and any
extra fields.  ``get_formatter`` picks a formatter by the name given in the
runner's ``--log-format`` option.
"""

import json
from datetime import timezone

__all__ = ["TextFormatter", "JSONFormatter", "LogfmtFormatter", "get_formatter"]

BASE_KEYS = ("time", "level", "msg")


def _iso(dt):
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _extras(record):
    return {k: v for k, v in sorted(record.items()) if k not in BASE_KEYS}


class TextFormatter:
    """'2024-05-01T12:00:00.000Z INFO  message key=value' for humans."""

    name = "text"

    def format(self, record):
        extras = " ".join(f"{k}={v}" for k, v in _extras(record).items())
        line = f"{_iso(record['time'])} {record['level']:<5} {record['msg']}"
        return f"{line} {extras}" if extras else line


class JSONFormatter(TextFormatter):
    """One JSON object per line, for the log shipper."""

    name = "json"

    def format(self, record):
        data = {"time": _iso(record["time"]), "level": record["level"], "msg": record["msg"]}
        data.update(_extras(record))
        return json.dumps(data, default=str, ensure_ascii=False)


class LogfmtFormatter(TextFormatter):
    """key=value pairs, quoted when needed (logfmt)."""

    name = "logfmt"

    @staticmethod
    def _value(v):
        s = str(v)
        if s == "" or any(c in s for c in ' ="\\'):
            return json.dumps(s)
        return s

    def format(self, record):
        pairs = {"time": _iso(record["time"]), "level": record["level"], "msg": record["msg"]}
        pairs.update(_extras(record))
        return " ".join(f"{k}={self._value(v)}" for k, v in pairs.items())


FORMATTERS = {cls.name: cls for cls in (TextFormatter, JSONFormatter, LogfmtFormatter)}


def get_formatter(name="text"):
    """A formatter instance for ``name`` ('text', 'json' or 'logfmt')."""
    try:
        return FORMATTERS[name.lower()]()
    except KeyError:
        raise ValueError(f"unknown log format {name!r}; choose from {', '.join(FORMATTERS)}") from None
