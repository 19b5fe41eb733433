"""Check for ho-py-ratelimit-refill: a bucket never refills past its capacity; the rest is unchanged."""

import importlib.util
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("ratelimit", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ratelimit"] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:  # noqa: BLE001
        fail(f"the module does not import: {type(exc).__name__}: {exc}")
    return mod


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def close(a: float, b: float) -> bool:
    return abs(a - b) < 1e-6


def main() -> None:
    rl = load(Path(sys.argv[1]).resolve())

    clock = FakeClock()
    bucket = rl.TokenBucket(5, 1.0, clock)
    clock.now += 100
    got = bucket.available()
    if not close(got, 5):
        fail(f"a full bucket idle for 100 s holds {got} tokens, expected its capacity 5")

    clock = FakeClock()
    bucket = rl.TokenBucket(5, 1.0, clock)
    for _ in range(5):
        bucket.try_take()
    clock.now += 1000
    taken = 0
    while taken < 50 and bucket.try_take():
        taken += 1
    if taken != 5:
        fail(f"after 1000 s idle a capacity-5 bucket allowed a burst of {taken} takes, expected 5")

    clock = FakeClock()
    bucket = rl.TokenBucket(5, 1.0, clock)
    for _ in range(5):
        if not bucket.try_take():
            fail("a fresh capacity-5 bucket refused one of its first 5 takes")
    if bucket.try_take():
        fail("an empty bucket allowed a take")
    clock.now += 2
    if not close(bucket.available(), 2):
        fail(f"2 s after emptying at 1 token/s the bucket holds {bucket.available()}, expected 2")
    if not close(bucket.wait_time(3), 1):
        fail(f"wait_time(3) with 2 tokens at 1/s is {bucket.wait_time(3)}, expected 1.0")
    if bucket.wait_time(1) != 0:
        fail("wait_time(1) with 2 tokens should be 0")

    clock = FakeClock()
    limiter = rl.RateLimiter.from_spec("10/s", clock)
    allowed = sum(limiter.allow("a.example") for _ in range(12))
    if allowed != 10:
        fail(f"a 10/s limiter allowed {allowed} of 12 immediate requests, expected 10")
    if not limiter.allow("b.example"):
        fail("buckets are not kept per key")
    try:
        limiter.acquire("a.example")
    except rl.RateLimitExceeded as exc:
        if not close(exc.retry_after, 0.1):
            fail(f"retry_after is {exc.retry_after}, expected 0.1")
    else:
        fail("acquire on an empty bucket did not raise RateLimitExceeded")
    clock.now += 300
    allowed = sum(limiter.allow("a.example") for _ in range(50))
    if allowed != 10:
        fail(f"after 300 s idle a 10/s limiter allowed a burst of {allowed}, expected 10")

    if rl.parse_limit("600/m") != (600.0, 10.0):
        fail(f"parse_limit('600/m') = {rl.parse_limit('600/m')}, expected (600.0, 10.0)")
    for bad in ("10", "10/d", "x/s", "0/s"):
        try:
            rl.parse_limit(bad)
        except ValueError:
            continue
        fail(f"parse_limit({bad!r}) did not raise ValueError")
    try:
        rl.TokenBucket(0, 1.0, FakeClock())
    except ValueError:
        pass
    else:
        fail("TokenBucket(capacity=0) did not raise ValueError")
    print("ok")


main()
