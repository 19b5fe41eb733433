"""Check for py-logscan-skip-comments: python check.py PATH (PATH: the edited file)."""
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
    lines = [
        "# rotated at 2024-03-01 00:00:00\n",
        "2024-03-01 12:00:05 ERROR payments: card declined (id=42)\n",
        "\n",
        "2024-03-01 12:00:06 INFO api: GET /health 200\n",
        "   \n",
        "#2024-03-01 12:00:07 ERROR commented: out\n",
        "2024-03-01 12:00:08 INFO api: GET / 200\n",
        "",
    ]
    counts = mod.count_levels(lines)
    if dict(counts) != {"ERROR": 1, "INFO": 2}:
        fail(f"count_levels with blank and comment lines gave {dict(counts)!r}, expected ERROR 1, INFO 2")
    plain = [l for l in lines if l.strip() and not l.startswith("#")]
    if dict(mod.count_levels(plain)) != {"ERROR": 1, "INFO": 2}:
        fail("count_levels on plain lines changed")
    try:
        mod.count_levels(["2024-03-01 12:00:05 LOUD x: y\n"])
    except ValueError:
        pass
    else:
        fail("count_levels no longer rejects a malformed line")
    if mod.errors_by_component(plain) != {"payments": ["card declined (id=42)"]}:
        fail("errors_by_component changed")


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
