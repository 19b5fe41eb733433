"""In-process job queue for the thumbnail workers.

Jobs carry a priority (higher runs first) and an optional ``not_before`` time used for
retries with back-off. Among jobs of equal priority the one enqueued first runs first.
The queue is small (a few hundred entries at most), so it is a plain list scanned on
each pop rather than a heap.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
BACKOFF_SECONDS = (5, 30, 120, 600)


@dataclass
class Job:
    kind: str
    payload: dict[str, Any]
    priority: int = 0
    not_before: float = 0.0
    attempts: int = 0
    seq: int = field(default=0, compare=False)

    def ready(self, now: float) -> bool:
        return self.not_before <= now


class JobQueue:
    def __init__(self, clock=time.monotonic):
        self._jobs: list[Job] = []
        self._lock = threading.Lock()
        self._seq = itertools.count()
        self._clock = clock
        self.dead: list[Job] = []

    def __len__(self) -> int:
        return len(self._jobs)

    def put(self, kind: str, payload: dict[str, Any], priority: int = 0, delay: float = 0.0) -> Job:
        job = Job(kind, payload, priority, self._clock() + delay)
        job.seq = next(self._seq)
        with self._lock:
            self._jobs.append(job)
        return job

    def pop_ready(self) -> Job | None:
        """Remove and return the ready job with the highest priority, or None if none is ready."""
        now = self._clock()
        with self._lock:
            best: int | None = None
            for i, job in enumerate(self._jobs):
                if not job.ready(now):
                    return None
                if best is None or job.priority > self._jobs[best].priority:
                    best = i
            if best is None:
                return None
            return self._jobs.pop(best)

    def retry(self, job: Job, error: str) -> bool:
        """Put a failed job back with back-off; False (and onto ``dead``) once it is out of attempts."""
        job.attempts += 1
        if job.attempts >= MAX_ATTEMPTS:
            log.error("%s job %d failed for good: %s", job.kind, job.seq, error)
            self.dead.append(job)
            return False
        delay = BACKOFF_SECONDS[min(job.attempts, len(BACKOFF_SECONDS)) - 1]
        job.not_before = self._clock() + delay
        log.warning("%s job %d failed (%s), retrying in %ss", job.kind, job.seq, error, delay)
        with self._lock:
            self._jobs.append(job)
        return True

    def pending(self) -> dict[str, int]:
        """How many jobs of each kind are waiting, ready or not."""
        counts: dict[str, int] = {}
        for job in self._jobs:
            counts[job.kind] = counts.get(job.kind, 0) + 1
        return counts


def run_once(queue: JobQueue, handlers: dict[str, Any]) -> bool:
    """Run one ready job; False when there was nothing to do."""
    job = queue.pop_ready()
    if job is None:
        return False
    try:
        handlers[job.kind](**job.payload)
    except Exception as e:  # noqa: BLE001 - any failure is retried
        queue.retry(job, f"{type(e).__name__}: {e}")
    return True
