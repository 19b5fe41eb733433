"""Check for py-difflib-close-matches-ignorecase: python check.py PATH (PATH: the edited file)."""
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
    mod = load(path, "edited_difflib")
    gcm = mod.get_close_matches
    commands = ["status", "stash", "commit", "checkout", "Push"]
    got = gcm("STAUS", commands, ignorecase=True)
    if got[:1] != ["status"]:
        fail(f"get_close_matches('STAUS', ..., ignorecase=True) gave {got!r}, expected 'status' first")
    got = gcm("push", commands, ignorecase=True)
    if got != ["Push"]:
        fail(f"get_close_matches('push', ..., ignorecase=True) gave {got!r}, expected ['Push'] as spelled")
    got = gcm("APPEL", ["ape", "apple", "peach", "puppy"], ignorecase=True)
    if got != ["apple", "ape"]:
        fail(f"get_close_matches('APPEL', ..., ignorecase=True) gave {got!r}")
    if gcm("STAUS", commands) != []:
        fail("without ignorecase, the comparison is no longer case-sensitive")
    if gcm("appel", ["ape", "apple", "peach", "puppy"]) != ["apple", "ape"]:
        fail("get_close_matches without ignorecase changed")
    if gcm("STAUS", commands, 3, 0.6) != [] or gcm("staus", commands, 1, 0.6) != ["status"]:
        fail("positional n and cutoff changed")
    try:
        gcm("x", ["x"], n=0, ignorecase=True)
    except ValueError:
        pass
    else:
        fail("n=0 is no longer rejected")
    diff = list(mod.unified_diff(["a\n", "b\n"], ["a\n", "c\n"], lineterm="\n"))
    if diff[-2:] != ["-b\n", "+c\n"]:
        fail("unified_diff changed")
    if round(mod.SequenceMatcher(None, "abcd", "bcde").ratio(), 2) != 0.75:
        fail("SequenceMatcher changed")


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
