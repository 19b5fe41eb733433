"""Client-side rate limiting for outgoing API calls.

A ``TokenBucket`` refills at a steady rate up to a capacity; every call takes
tokens from it.  ``RateLimiter`` keeps one bucket per key (an API host, a user)
so that unrelated callers do not starve each other.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Dict


class RateLimitExceeded(RuntimeError):
    """Raised by ``RateLimiter.check`` when a key has no tokens left."""

    def __init__(self, key: str, retry_after: float) -> None:
        super().__init__(f"rate limit exceeded for {key!r}; retry in {retry_after:.2f}s")
        self.key = key
        self.retry_after = retry_after


class TokenBucket:
    """A bucket of ``capacity`` tokens refilled at ``rate`` tokens per second."""

    def __init__(self, capacity: float, rate: float, clock: Callable[[], float] = time.monotonic) -> None:
        if capacity <= 0 or rate <= 0:
            raise ValueError("capacity and rate must be positive")
        self.capacity = float(capacity)
        self.rate = float(rate)
        self._clock = clock
        self._tokens = float(capacity)
        self._updated = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(0.0, now - self._updated)
        self._tokens = min(self.capacity, self._tokens + elapsed * self.rate)
        self._updated = now

    @property
    def tokens(self) -> float:
        """The number of tokens available right now."""
        with self._lock:
            self._refill()
            return self._tokens

    def acquire(self) -> bool:
        """Take one token if there is one; return whether it was taken."""
        with self._lock:
            self._refill()
            if self._tokens >= 1:
                self._tokens -= 1
                return True
            return False

    def wait_time(self, needed: float = 1.0) -> float:
        """Seconds until ``needed`` tokens will be available (0 if they are now)."""
        with self._lock:
            self._refill()
            missing = needed - self._tokens
            return 0.0 if missing <= 0 else missing / self.rate


class RateLimiter:
    """One ``TokenBucket`` per key, created on first use."""

    def __init__(self, capacity: float, rate: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = capacity
        self.rate = rate
        self._clock = clock
        self._buckets: Dict[str, TokenBucket] = {}
        self._lock = threading.Lock()

    def bucket(self, key: str) -> TokenBucket:
        with self._lock:
            if key not in self._buckets:
                self._buckets[key] = TokenBucket(self.capacity, self.rate, self._clock)
            return self._buckets[key]

    def check(self, key: str) -> None:
        """Take a token for ``key`` or raise ``RateLimitExceeded``."""
        bucket = self.bucket(key)
        if not bucket.acquire():
            raise RateLimitExceeded(key, bucket.wait_time())

    def reset(self, key: str | None = None) -> None:
        """Forget the bucket of ``key`` (all buckets when ``key`` is None)."""
        with self._lock:
            if key is None:
                self._buckets.clear()
            else:
                self._buckets.pop(key, None)


def throttled(limiter: RateLimiter, key: str) -> Callable:
    """Decorator: call ``limiter.check(key)`` before each call of the function."""

    def wrap(func: Callable) -> Callable:
        def inner(*args, **kwargs):
            limiter.check(key)
            return func(*args, **kwargs)

        inner.__name__ = func.__name__
        inner.__doc__ = func.__doc__
        return inner

    return wrap
