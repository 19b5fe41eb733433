"""Check for py-batchsend-last-batch: python check.py PATH (PATH: the edited file)."""
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
    items = list(range(12))
    cases = {5: [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11]], 4: [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]],
             12: [items], 20: [items], 1: [[i] for i in items]}
    for size, want in cases.items():
        got = [list(b) for b in mod.batches(items, size)]
        if got != want:
            fail(f"batches(range(12), {size}) gave {got!r}")
    if list(mod.batches([], 3)) != []:
        fail("batches([], 3) is not empty")
    try:
        mod.batches(items, 0)
    except ValueError:
        pass
    else:
        fail("batches no longer rejects size 0")
    sent = []
    samples = [{"name": "cpu", "value": i, "ts": 1} for i in range(1200)] + [{"name": "", "value": 1, "ts": 1}]
    n = mod.send_all(samples, sent.append, sleep=lambda s: None)
    if n != 1200 or len(sent) != 3:
        fail(f"send_all of 1200 samples sent {n} in {len(sent)} requests, expected 1200 in 3")
    n = mod.send_all(samples[:300], sent.append, sleep=lambda s: None)
    if n != 300:
        fail(f"send_all of 300 samples sent {n}")


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
