"""Check for py-dbconnect-attempts-value: python check.py PATH (PATH: the edited file)."""
import importlib.util
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p) != HERE]


def fail(why):
    print(" ".join(str(why).split()))
    sys.exit(1)


def load(path, name="edited_module"):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def check(mod, path):
    calls = []

    def refuse(host, port, timeout=None):
        calls.append(timeout)
        raise ConnectionRefusedError("refused")

    try:
        mod.connect("db1:6432/app", opener=refuse, sleep=lambda s: None)
    except mod.ConnectionFailed as e:
        if e.attempts != 5:
            fail(f"ConnectionFailed reports {e.attempts} attempts, expected 5")
    else:
        fail("connect did not raise ConnectionFailed")
    if len(calls) != 5:
        fail(f"connect tried {len(calls)} times, expected 5")
    if set(calls) != {3}:
        fail(f"the connect timeout changed: {sorted(set(calls))!r}")
    if getattr(mod, "CONNECT_TIMEOUT", None) != 3:
        fail("CONNECT_TIMEOUT is no longer 3")
    tries = []

    def third_time(host, port, timeout=None):
        tries.append(1)
        if len(tries) < 4:
            raise OSError("not yet")
        return "sock"

    if mod.connect("db1/app", opener=third_time, sleep=lambda s: None) != "sock" or len(tries) != 4:
        fail("connect does not return the socket of a later successful attempt")
    if mod.parse_dsn("h/d") != ("h", 5432, "d"):
        fail("parse_dsn changed")
    if abs(mod.pause_for(3, rng=lambda: 1.0) - 2.0) > 1e-9:
        fail("pause_for changed")


if __name__ == "__main__":
    try:
        module = load(sys.argv[1])
    except BaseException as e:
        fail(f"the file does not import: {type(e).__name__}: {e}")
    try:
        check(module, sys.argv[1])
    except SystemExit:
        raise
    except BaseException as e:
        fail(f"{type(e).__name__}: {e}")
