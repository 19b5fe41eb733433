"""Check for py-ratelimit-acquire-tokens: python check.py PATH (PATH: the edited file)."""
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
    now = [0.0]
    b = mod.TokenBucket(10, 1, clock=lambda: now[0])
    if b.acquire(tokens=3) is not True:
        fail("acquire(tokens=3) on a full bucket of 10 did not return True")
    if abs(b.tokens - 7) > 1e-9:
        fail(f"acquire(tokens=3) left {b.tokens} tokens of 10, expected 7")
    if b.acquire(8) is not False:
        fail("acquire(8) with 7 tokens left did not return False")
    if abs(b.tokens - 7) > 1e-9:
        fail(f"a refused acquire(8) changed the tokens from 7 to {b.tokens}")
    if b.acquire() is not True or abs(b.tokens - 6) > 1e-9:
        fail("acquire() no longer takes exactly one token")
    if b.acquire(6) is not True or abs(b.tokens) > 1e-9:
        fail("acquire(6) with exactly 6 tokens did not take them all")
    if b.acquire() is not False:
        fail("acquire() on an empty bucket did not return False")
    now[0] = 2.0
    if b.acquire(2) is not True:
        fail("after a refill of 2 tokens, acquire(2) was refused")
    lim = mod.RateLimiter(1, 1, clock=lambda: 0.0)
    lim.check("a")
    try:
        lim.check("a")
    except mod.RateLimitExceeded:
        pass
    else:
        fail("RateLimiter.check no longer raises when the bucket is empty")


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
