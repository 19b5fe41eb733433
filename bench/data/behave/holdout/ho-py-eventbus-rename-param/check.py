"""Check for ho-py-eventbus-rename-param: subscribe(topic, callback=...) works; on() still works."""

import importlib.util
import inspect
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("eventbus_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


def main() -> None:
    mod = load(Path(sys.argv[1]))
    params = list(inspect.signature(mod.EventBus.subscribe).parameters)
    if params[:3] != ["self", "topic", "callback"]:
        fail(f"subscribe's parameters are {params!r}, expected self, topic, callback, ...")
    if "cb" in params:
        fail("subscribe still has a `cb` parameter")
    bus = mod.EventBus()
    seen = []
    try:
        bus.subscribe("sync.done", callback=lambda t, p: seen.append(("kw", t, p)))
        bus.subscribe("sync.*", lambda t, p: seen.append(("pos", t, p)), once=True)

        @bus.on("sync.done")
        def handler(t, p):
            seen.append(("deco", t, p))

        n1 = bus.publish("sync.done", 1)
        n2 = bus.publish("sync.done", 2)
        n3 = bus.publish("sync.start.sub", 3)
    except Exception as e:  # noqa: BLE001
        fail(f"subscribe/on/publish raised {type(e).__name__}: {e}")
    if not callable(handler):
        fail("on() no longer returns the decorated function")
    want = [
        ("kw", "sync.done", 1), ("pos", "sync.done", 1), ("deco", "sync.done", 1),
        ("kw", "sync.done", 2), ("deco", "sync.done", 2),
    ]
    if (n1, n2, n3) != (3, 2, 0) or seen != want:
        fail(f"delivery changed: counts {(n1, n2, n3)}, calls {seen!r}")
    try:
        bus.subscribe("x", callback=42)
    except TypeError:
        pass
    else:
        fail("a non-callable callback no longer raises TypeError")
    print("ok")


main()
