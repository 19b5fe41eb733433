"""Check for py-humanize-bytes-precision: python check.py PATH (PATH: the edited file)."""
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
    fb = mod.format_bytes
    cases = [((1536,), "1.5 KiB"), ((512,), "512 B"), ((3 * 1024**3 + 1024**3 // 5,), "3.2 GiB"),
             ((1536, 2), "1.50 KiB"), ((1536, 0), "2 KiB"), ((512, 3), "512 B"),
             ((1_647_000_000, 3), "1.534 GiB"), ((-1536,), "-1.5 KiB")]
    for args, want in cases:
        got = fb(*args)
        if got != want:
            fail(f"format_bytes{args!r} gave {got!r}, expected {want!r}")
    if fb(1536, precision=3) != "1.500 KiB":
        fail("format_bytes(1536, precision=3) is not '1.500 KiB'")
    if fb(5 * 1024**6, precision=2) != "5120.00 PiB":
        fail("the largest unit does not use the precision")
    if mod.usage_line(3 * 1024**3, 10 * 1024**3) != "3.0 GiB of 10.0 GiB (30%)":
        fail("usage_line changed")
    if mod.parse_bytes("1.5 KiB") != 1536 or mod.format_duration(7500) != "2 h 5 min":
        fail("other helpers changed")


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
