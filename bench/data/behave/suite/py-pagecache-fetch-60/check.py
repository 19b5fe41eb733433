"""Check for py-pagecache-fetch-60: python check.py PATH (PATH: the edited file)."""
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
    now = [1000.0]
    seen = []

    def loader(url, timeout):
        seen.append((url, timeout))
        return 200, f"<html>{url} {len(seen)}</html>"

    cache = mod.PageCache(loader, clock=lambda: now[0])
    first = cache.fetch("a")
    now[0] += 45
    if cache.fetch("a") != first or cache.loads != 1:
        fail("fetch reloaded a page cached 45 seconds ago (it should keep it for 60)")
    if cache.stale_urls() != ["a"]:
        fail("stale_urls no longer lists a page older than 30 seconds")
    now[0] += 14
    if cache.fetch("a") != first or cache.loads != 1:
        fail("fetch reloaded a page cached 59 seconds ago")
    now[0] += 2
    if cache.fetch("a") == first or cache.loads != 2:
        fail("fetch did not reload a page cached 61 seconds ago")
    if seen[-1] != ("a", 10):
        fail("the loader timeout changed")
    if mod.STALE_AFTER != 30 or mod.MAX_ENTRIES != 30:
        fail("STALE_AFTER or MAX_ENTRIES changed")
    for i in range(40):
        cache.fetch(f"u{i}")
    if len(cache) != 30:
        fail(f"the cache holds {len(cache)} entries, expected MAX_ENTRIES = 30")


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
