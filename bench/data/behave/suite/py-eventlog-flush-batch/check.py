"""Check for py-eventlog-flush-batch: python check.py PATH (PATH: the edited file)."""
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


import io


class Recorder(io.StringIO):
    def __init__(self):
        super().__init__()
        self.ops = []

    def write(self, s):
        self.ops.append("write")
        return super().write(s)

    def flush(self):
        self.ops.append("flush")
        return super().flush()


def check(mod, path):
    rec = Recorder()
    log = mod.EventLog(rec, clock=lambda: "T")
    log.write_many([{"type": "update", "actor": "ann", "password": "x"}, {"type": "delete", "actor": "bob"}])
    if "flush" not in rec.ops:
        fail("write_many did not flush the stream")
    last_write = max(i for i, op in enumerate(rec.ops) if op == "write")
    if not any(op == "flush" for op in rec.ops[last_write + 1:]):
        fail("write_many flushed before writing the last line, not after")
    if rec.ops.count("write") < 1 or log.count != 2:
        fail(f"write_many's writes changed: {rec.ops!r}, count {log.count}")
    events = mod.read_events(rec.getvalue().splitlines())
    if events != [{"type": "update", "actor": "ann", "password": "***", "at": "T"}, {"type": "delete", "actor": "bob", "at": "T"}]:
        fail(f"the written events changed: {events!r}")
    rec2 = Recorder()
    log2 = mod.EventLog(rec2, clock=lambda: "T")
    try:
        log2.write_many([{"type": "x", "actor": "a"}, {"type": "no actor"}])
    except ValueError:
        pass
    else:
        fail("write_many no longer rejects an event without an actor")
    if "write" in rec2.ops or log2.count != 0:
        fail("a batch with a bad event was partly written")
    log2.write({"type": "x", "actor": "a"})
    if log2.count != 1 or mod.events_of(rec2.getvalue().splitlines(), "a")[0]["type"] != "x":
        fail("write changed")


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
