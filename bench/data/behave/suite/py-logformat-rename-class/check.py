"""Check for py-logformat-rename-class: python check.py PATH (PATH: the edited file)."""
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


from datetime import datetime


def check(mod, path):
    if not hasattr(mod, "JSONFormatter"):
        fail("the module has no JSONFormatter")
    if hasattr(mod, "JsonFormatter"):
        fail("the module still has JsonFormatter")
    if mod.JSONFormatter.__name__ != "JSONFormatter":
        fail(f"JSONFormatter is a class named {mod.JSONFormatter.__name__}")
    if "JSONFormatter" not in mod.__all__ or "JsonFormatter" in mod.__all__:
        fail(f"__all__ is {mod.__all__!r}")
    if sorted(mod.__all__) != ["JSONFormatter", "LogfmtFormatter", "TextFormatter", "get_formatter"]:
        fail(f"__all__ lost or gained names: {mod.__all__!r}")
    ns = {}
    exec(f"from {mod.__name__} import *", ns)
    f = mod.get_formatter("JSON")
    if type(f) is not mod.JSONFormatter or not isinstance(f, mod.TextFormatter):
        fail("get_formatter('json') does not give a JSONFormatter")
    rec = {"time": datetime(2024, 5, 1, 12, 0, 0), "level": "INFO", "msg": "done", "job": 7}
    if f.format(rec) != '{"time": "2024-05-01T12:00:00.000Z", "level": "INFO", "msg": "done", "job": 7}':
        fail(f"the JSON output changed: {f.format(rec)!r}")
    if mod.get_formatter("logfmt").format(rec) != 'time=2024-05-01T12:00:00.000Z level=INFO msg=done job=7':
        fail("the logfmt output changed")
    if sorted(mod.FORMATTERS) != ["json", "logfmt", "text"]:
        fail(f"the format names changed: {sorted(mod.FORMATTERS)!r}")


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
