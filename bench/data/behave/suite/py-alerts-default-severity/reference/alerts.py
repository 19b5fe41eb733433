"""Alerts sent by the monitoring jobs to the team's chat channel.

Each alert has a severity; the channel's bot colours the message by it and
pages the on-call person for "critical" ones.
"""

import json
import logging

logger = logging.getLogger(__name__)

SEVERITIES = ("info", "warning", "error", "critical")
DEFAULT_SEVERITY = "warning"
COLOURS = {"info": "#2f81f7", "warning": "#d29922", "error": "#f85149", "critical": "#8b0000"}


class Alert:
    def __init__(self, title, severity=DEFAULT_SEVERITY, details=None):
        if severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {', '.join(SEVERITIES)}, not {severity!r}")
        self.title = title
        self.severity = severity
        self.details = dict(details or {})

    @property
    def pages_on_call(self):
        return self.severity == "critical"

    def payload(self):
        """The JSON body for the chat webhook."""
        fields = [{"title": k, "value": str(v), "short": True} for k, v in sorted(self.details.items())]
        return json.dumps(
            {
                "attachments": [
                    {"color": COLOURS[self.severity], "title": self.title, "fields": fields,
                     "footer": self.severity.upper()}
                ]
            },
            sort_keys=True,
        )


def send(alert, post):
    """Send ``alert`` with ``post(body)``; log and return False when it fails."""
    try:
        post(alert.payload())
    except OSError as e:
        logger.error("could not send alert %r: %s", alert.title, e)
        return False
    logger.info("sent %s alert %r", alert.severity, alert.title)
    return True


def check_disk(path_usage, post, limit=0.9):
    """Alert about every path whose usage (a fraction) is over ``limit``."""
    sent = 0
    for path, usage in sorted(path_usage.items()):
        if usage <= limit:
            continue
        severity = "critical" if usage >= 0.98 else DEFAULT_SEVERITY
        alert = Alert(f"disk {path} at {usage:.0%}", severity, {"path": path})
        if send(alert, post):
            sent += 1
        else:
            logger.warning("alert for %s not delivered", path)
    return sent
