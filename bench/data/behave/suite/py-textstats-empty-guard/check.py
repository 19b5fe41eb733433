"""Check for py-textstats-empty-guard: python check.py PATH (PATH: the edited file)."""
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
    for text in ("", "   \n", "--- ... !!"):
        got = mod.average_word_length(text)
        if got != 0:
            fail(f"average_word_length({text!r}) returned {got!r}, expected 0.0")
    got = mod.average_word_length("The cat sat on a mat.")
    if abs(got - 15 / 6) > 1e-9:
        fail(f"average_word_length of a normal sentence changed: {got!r}")
    s = mod.summary("")
    if s["avg_word_length"] != 0 or s["words"] != 0:
        fail(f"summary('') is wrong: {s!r}")
    s = mod.summary("Short words here. And more words.")
    if s["words"] != 6 or s["sentences"] != 2:
        fail(f"summary of a normal text changed: {s!r}")


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
