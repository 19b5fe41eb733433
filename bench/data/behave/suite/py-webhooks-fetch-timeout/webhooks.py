"""Deliver and poll webhooks for the integrations service.

Outgoing events are POSTed as JSON to the subscriber's URL; some partners
only support polling, so we also GET their status endpoints.
"""

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request

USER_AGENT = "integrations-bot/2.3"
SIGNATURE_HEADER = "X-Signature-256"


class DeliveryError(Exception):
    def __init__(self, url, status, detail=""):
        super().__init__(f"{url}: HTTP {status} {detail}".rstrip())
        self.url = url
        self.status = status


def sign(secret, body):
    """The hex HMAC-SHA256 signature of ``body`` (bytes) with ``secret``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _request(url, body=None, headers=None, method="GET"):
    req = urllib.request.Request(url, data=body, method=method)
    req.add_header("User-Agent", USER_AGENT)
    req.add_header("Accept", "application/json")
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    return req


def fetch_json(url, headers=None):
    """GET ``url`` and decode its JSON answer."""
    req = _request(url, headers=headers)
    try:
        with urllib.request.urlopen(req) as resp:
            return json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        raise DeliveryError(url, e.code, e.reason) from None


def post_event(url, event, secret, timeout=30):
    """POST ``event`` (a dict) signed with ``secret``; return the HTTP status."""
    body = json.dumps(event, separators=(",", ":"), sort_keys=True).encode("utf-8")
    headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(secret, body)}
    req = _request(url, body, headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        raise DeliveryError(url, e.code, e.reason) from None


def deliver_with_retries(url, event, secret, attempts=4, pause=2.0, sleep=time.sleep):
    """Try ``post_event`` up to ``attempts`` times, doubling the pause after each
    failure; the last error is raised when all attempts fail."""
    for attempt in range(1, attempts + 1):
        try:
            return post_event(url, event, secret)
        except (DeliveryError, urllib.error.URLError, OSError):
            if attempt == attempts:
                raise
            sleep(pause)
            pause *= 2
    return None
