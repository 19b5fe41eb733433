"""An append-only audit log of JSON lines.

Each event is one JSON object per line, with the keys sorted so that the file
diffs well.  ``EventLog`` writes to any text stream (a file opened in append
mode in production, an ``io.StringIO`` in tests).
"""

import datetime as _dt
import json

REQUIRED_KEYS = ("type", "actor")
REDACTED = "***"
SECRET_KEYS = {"password", "token", "secret", "api_key"}


def utc_now():
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def redact(event):
    """A copy of ``event`` with the values of secret-looking keys hidden."""
    out = {}
    for key, value in event.items():
        if key.lower() in SECRET_KEYS:
            out[key] = REDACTED
        elif isinstance(value, dict):
            out[key] = redact(value)
        else:
            out[key] = value
    return out


class EventLog:
    def __init__(self, stream, clock=utc_now):
        self.stream = stream
        self.clock = clock
        self.count = 0

    def _line(self, event):
        missing = [k for k in REQUIRED_KEYS if k not in event]
        if missing:
            raise ValueError("event without " + ", ".join(missing))
        record = dict(redact(event))
        record.setdefault("at", self.clock())
        return json.dumps(record, sort_keys=True, default=str) + "\n"

    def write(self, event):
        """Append one event (buffered: the stream decides when it reaches disk)."""
        self.stream.write(self._line(event))
        self.count += 1

    def write_many(self, events):
        """Append several events, e.g. all the changes of one request."""
        lines = [self._line(e) for e in events]
        for line in lines:
            self.stream.write(line)
        self.count += len(lines)

    def close(self):
        self.stream.flush()
        self.stream.close()


def read_events(lines):
    """The events of a log's lines, skipping blank lines."""
    return [json.loads(line) for line in lines if line.strip()]


def events_of(lines, actor):
    return [e for e in read_events(lines) if e.get("actor") == actor]
