"""Token-bucket rate limiting for the outbound webhook dispatcher.

Every remote host gets its own :class:`TokenBucket`; :class:`RateLimiter` keeps
one bucket per key and hands out permits.  Time comes from an injectable clock
so the dispatcher's tests can drive it by hand.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Tuple

log = logging.getLogger(__name__)

Clock = Callable[[], float]

_UNIT_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0}


class RateLimitExceeded(Exception):
    """Raised by :meth:`RateLimiter.acquire` when no permit is available."""

    def __init__(self, key: str, retry_after: float) -> None:
        super().__init__(f"rate limit exceeded for {key!r}; retry in {retry_after:.2f}s")
        self.key = key
        self.retry_after = retry_after


@dataclass
class TokenBucket:
    """A bucket of up to ``capacity`` tokens, refilled at ``rate`` tokens a second."""

    capacity: float
    rate: float
    clock: Clock = time.monotonic
    tokens: float = field(init=False)
    updated: float = field(init=False)

    def __post_init__(self) -> None:
        if self.capacity <= 0:
            raise ValueError("capacity must be positive")
        if self.rate <= 0:
            raise ValueError("rate must be positive")
        self.tokens = float(self.capacity)
        self.updated = self.clock()

    def _refill(self) -> None:
        now = self.clock()
        elapsed = now - self.updated
        if elapsed > 0:
            self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)
        self.updated = now

    def available(self) -> float:
        """Tokens that could be taken right now."""
        self._refill()
        return self.tokens

    def try_take(self, cost: float = 1.0) -> bool:
        """Take ``cost`` tokens if the bucket holds them; say whether it did."""
        self._refill()
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False

    def wait_time(self, cost: float = 1.0) -> float:
        """Seconds until ``cost`` tokens will be there (0.0 when they are now)."""
        self._refill()
        missing = cost - self.tokens
        return max(0.0, missing / self.rate)


class RateLimiter:
    """Per-key token buckets that share one capacity and rate."""

    def __init__(self, capacity: float, rate: float, clock: Clock = time.monotonic) -> None:
        self.capacity = capacity
        self.rate = rate
        self.clock = clock
        self._buckets: Dict[str, TokenBucket] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, spec: str, clock: Clock = time.monotonic) -> "RateLimiter":
        """Build a limiter from a spec such as ``"10/s"`` or ``"600/m"``."""
        capacity, rate = parse_limit(spec)
        return cls(capacity, rate, clock)

    def bucket(self, key: str) -> TokenBucket:
        with self._lock:
            found = self._buckets.get(key)
            if found is None:
                found = TokenBucket(self.capacity, self.rate, self.clock)
                self._buckets[key] = found
            return found

    def allow(self, key: str, cost: float = 1.0) -> bool:
        """Take a permit for ``key`` if one is free; never blocks."""
        allowed = self.bucket(key).try_take(cost)
        if not allowed:
            log.debug("rate limited %s (cost %s)", key, cost)
        return allowed

    def acquire(self, key: str, cost: float = 1.0) -> None:
        """Take a permit for ``key`` or raise :class:`RateLimitExceeded`."""
        bucket = self.bucket(key)
        if not bucket.try_take(cost):
            raise RateLimitExceeded(key, bucket.wait_time(cost))

    def forget_idle(self, idle_for: float) -> int:
        """Drop buckets untouched for ``idle_for`` seconds; return how many went."""
        now = self.clock()
        with self._lock:
            stale = [k for k, b in self._buckets.items() if now - b.updated >= idle_for]
            for key in stale:
                del self._buckets[key]
        return len(stale)


def parse_limit(spec: str) -> Tuple[float, float]:
    """Parse ``"10/s"``, ``"600/m"`` or ``"5000/h"`` into (capacity, tokens per second)."""
    count_text, sep, unit = spec.strip().partition("/")
    if not sep or unit not in _UNIT_SECONDS:
        raise ValueError(f"bad rate limit {spec!r}: expected COUNT/s, COUNT/m or COUNT/h")
    try:
        count = float(count_text)
    except ValueError:
        raise ValueError(f"bad rate limit {spec!r}: {count_text!r} is not a number") from None
    if count <= 0:
        raise ValueError(f"bad rate limit {spec!r}: count must be positive")
    return count, count / _UNIT_SECONDS[unit]
