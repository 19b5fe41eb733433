"""Check for py-lrucache-evictions: python check.py PATH (PATH: the edited file)."""
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
    c = mod.LRUCache(2)
    if getattr(c, "evictions", None) != 0:
        fail(f"a new LRUCache has evictions = {getattr(c, 'evictions', None)!r}, expected 0")
    c.put("a", 1)
    c.put("b", 2)
    c.put("a", 10)
    if c.evictions != 0:
        fail("updating an existing key counted as an eviction")
    c.put("c", 3)
    if c.evictions != 1 or c.keys() != ["a", "c"]:
        fail(f"after one eviction: evictions={c.evictions!r}, keys={c.keys()!r}")
    c.get("a")
    c.put("d", 4)
    c.put("e", 5)
    if c.evictions != 3:
        fail(f"after three evictions the counter is {c.evictions!r}")
    if c.keys() != ["d", "e"] or c.get("a") is not None:
        fail("the LRU order changed")
    if (c.hits, c.misses) != (1, 1):
        fail(f"hits/misses changed: {(c.hits, c.misses)!r}")
    other = mod.LRUCache(1)
    if other.evictions != 0:
        fail("the counter is shared between caches")
    gone = []
    d = mod.LRUCache(1, on_evict=lambda k, v: gone.append(k))
    d.put(1, "x")
    d.put(2, "y")
    if gone != [1] or d.evictions != 1 or other.evictions != 0:
        fail("on_evict or the per-cache counter is wrong")


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
