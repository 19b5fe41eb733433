"""Check for ho-py-jobqueue-delayed-blocks: pop_ready skips jobs that are not ready yet."""

import importlib.util
import logging
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("jobqueue_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def drain(q) -> list:
    out = []
    for _ in range(20):
        job = q.pop_ready()
        if job is None:
            break
        out.append(job.payload["n"])
    return out


def main() -> None:
    logging.disable(logging.CRITICAL)
    mod = load(Path(sys.argv[1]))
    try:
        clock = Clock()
        q = mod.JobQueue(clock=clock)
        q.put("thumb", {"n": "late"}, delay=10)
        q.put("thumb", {"n": "b"})
        q.put("thumb", {"n": "c"})
        got = drain(q)
        if got != ["b", "c"]:
            fail(f"with a delayed job at the head, pop_ready gave {got}, expected ['b', 'c']")
        if len(q) != 1:
            fail(f"{len(q)} jobs left, expected the delayed one")
        clock.t += 9.5
        if q.pop_ready() is not None:
            fail("pop_ready returned a job before its not_before time")
        clock.t += 1
        got = drain(q)
        if got != ["late"]:
            fail(f"once its delay passed, pop_ready gave {got}, expected ['late']")

        clock = Clock()
        q = mod.JobQueue(clock=clock)
        q.put("thumb", {"n": "low1"}, priority=0)
        q.put("thumb", {"n": "high-later"}, priority=9, delay=5)
        q.put("thumb", {"n": "mid"}, priority=3)
        q.put("thumb", {"n": "low2"}, priority=0)
        q.put("thumb", {"n": "mid-later"}, priority=3, delay=60)
        q.put("thumb", {"n": "mid2"}, priority=3)
        got = drain(q)
        if got != ["mid", "mid2", "low1", "low2"]:
            fail(f"ready jobs came out as {got}, expected ['mid', 'mid2', 'low1', 'low2']")
        clock.t += 100
        got = drain(q)
        if got != ["high-later", "mid-later"]:
            fail(f"after the delays, jobs came out as {got}, expected ['high-later', 'mid-later']")
        if mod.JobQueue(clock=clock).pop_ready() is not None:
            fail("pop_ready on an empty queue is not None")

        clock = Clock()
        q = mod.JobQueue(clock=clock)
        ran = []

        def work(n):
            ran.append(n)
            if n == "flaky":
                raise OSError("disk full")

        q.put("thumb", {"n": "flaky"}, priority=5)
        q.put("thumb", {"n": "x"})
        q.put("thumb", {"n": "y"})
        handlers = {"thumb": work}
        while mod.run_once(q, handlers):
            pass
        if ran != ["flaky", "x", "y"]:
            fail(f"after a failed job was put back for retry, the workers ran {ran}, expected ['flaky', 'x', 'y']")
        if len(q) != 1 or q.pending() != {"thumb": 1}:
            fail(f"after the retry the queue holds {q.pending()}")
        clock.t += 5
        if not mod.run_once(q, handlers) or ran[-1] != "flaky":
            fail("the retried job did not run after its back-off")
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        fail(f"raised {type(e).__name__}: {e}")
    print("ok")


main()
