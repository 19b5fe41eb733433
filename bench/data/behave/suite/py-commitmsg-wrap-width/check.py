"""Check for py-commitmsg-wrap-width: python check.py PATH (PATH: the edited file)."""
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


import textwrap

WORDS = ("the release bot now retries uploads to the package index when the "
         "server answers with a temporary error, and it waits a little longer "
         "between attempts so that the mirror has time to catch up with us "
         "before the next try; this fixes the flaky nightly builds we saw")


def check(mod, path):
    want80 = textwrap.fill(WORDS, width=80)
    got = mod.wrap_body(WORDS)
    if got != want80:
        widths = sorted({len(l) for l in got.splitlines()})
        fail(f"wrap_body(body) does not wrap at 80 columns (line lengths {widths})")
    msg = mod.format_message("Retry uploads", WORDS)
    if msg != "Retry uploads\n\n" + want80 + "\n":
        fail("format_message(subject, body) does not wrap the body at 80 columns")
    if mod.format_message("Retry uploads", WORDS, 60) != "Retry uploads\n\n" + textwrap.fill(WORDS, 60) + "\n":
        fail("format_message with an explicit width changed")
    if mod.wrap_body(WORDS, width=72) != textwrap.fill(WORDS, 72):
        fail("wrap_body with an explicit width changed")
    if getattr(mod, "MAX_SUBJECT", None) != 72:
        fail("MAX_SUBJECT is no longer 72")
    long_subject = "x" * 75
    if mod.lint(long_subject) != ["subject longer than 72 characters"]:
        fail(f"lint of a 75-character subject changed: {mod.lint(long_subject)!r}")
    if mod.lint("y" * 60) != ["subject longer than 50 characters (soft limit)"]:
        fail("lint's soft limit changed")
    body = "- item one\n- item two\n\nSigned-off-by: A <a@b.c>"
    if mod.wrap_body(body) != body:
        fail("wrap_body no longer keeps lists and trailers")


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
