"""Send metric samples to the collector in batches.

The collector accepts at most ``MAX_BATCH`` samples per request; samples are
dicts with ``name``, ``value`` and ``ts`` (a UNIX timestamp).
"""

import json
import math
import time

MAX_BATCH = 500
RETRY_PAUSE = 1.5


class SendError(Exception):
    pass


def valid_sample(sample):
    return (
        isinstance(sample.get("name"), str)
        and sample["name"] != ""
        and isinstance(sample.get("value"), (int, float))
        and not (isinstance(sample["value"], float) and math.isnan(sample["value"]))
        and isinstance(sample.get("ts"), (int, float))
    )


def batches(samples, size=MAX_BATCH):
    """``samples`` cut into consecutive lists of at most ``size`` items."""
    if size < 1:
        raise ValueError("size must be at least 1")
    out = []
    for start in range(0, len(samples), size):
        out.append(samples[start : start + size])
    return out


def encode(batch):
    return json.dumps({"samples": batch}, separators=(",", ":")).encode("utf-8")


def send_all(samples, transport, size=MAX_BATCH, retries=2, sleep=time.sleep):
    """Send the valid ``samples`` with ``transport(payload_bytes)``; return how
    many samples were sent.  A batch is retried ``retries`` times before a
    SendError is raised."""
    good = [s for s in samples if valid_sample(s)]
    sent = 0
    for batch in batches(good, size):
        payload = encode(batch)
        for attempt in range(retries + 1):
            try:
                transport(payload)
                break
            except OSError as e:
                if attempt == retries:
                    raise SendError(f"batch of {len(batch)} failed: {e}") from e
                sleep(RETRY_PAUSE)
        sent += len(batch)
    return sent


def summarise(samples):
    """{name: (count, min, max)} of the valid samples."""
    out = {}
    for s in filter(valid_sample, samples):
        count, low, high = out.get(s["name"], (0, s["value"], s["value"]))
        out[s["name"]] = (count + 1, min(low, s["value"]), max(high, s["value"]))
    return out
