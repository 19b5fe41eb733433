"""Check for py-cleanup-log-removed: python check.py PATH (PATH: the edited file)."""
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


import logging
import tempfile


class Keep(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def check(mod, path):
    keep = Keep()
    root = logging.getLogger()
    root.addHandler(keep)
    root.setLevel(logging.DEBUG)
    now = 1_700_000_000
    with tempfile.TemporaryDirectory(dir=".") as d:
        names = {"old-a.tar": 10, "fresh.tar": 0, "old-b.bin": 30}
        for name, days in names.items():
            p = os.path.join(d, name)
            with open(p, "w") as f:
                f.write("x")
            os.utime(p, (now - days * 86400, now - days * 86400))
        removed = mod.remove_stale(d, 7, now=now)
        got = sorted(os.path.basename(p) for p in removed)
        if got != ["old-a.tar", "old-b.bin"]:
            fail(f"remove_stale removed {got!r}, expected the two old files")
        if sorted(os.listdir(d)) != ["fresh.tar"]:
            fail("remove_stale did not leave the fresh file alone")
    for name in ("old-a.tar", "old-b.bin"):
        hits = [r for r in keep.records if name in r.getMessage()]
        if not hits:
            fail(f"nothing was logged about removing {name}")
        if not any(r.levelno == logging.INFO for r in hits):
            fail(f"the removal of {name} was logged at {hits[0].levelname}, not INFO")
    if any("fresh.tar" in r.getMessage() for r in keep.records):
        fail("a file that was kept was logged as removed")


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
