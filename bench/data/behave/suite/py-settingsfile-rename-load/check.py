"""Check for py-settingsfile-rename-load: python check.py PATH (PATH: the edited file)."""
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


import ast
import json


def check(mod, path):
    if not callable(getattr(mod, "load_settings", None)):
        fail("the module has no function load_settings")
    if hasattr(mod, "load"):
        fail("the module still has a function load")
    os.makedirs("proj/src/pkg")
    with open("proj/.toolrc.json", "w") as f:
        json.dump({"line_length": 100}, f)
    with open("bad.json", "w") as f:
        f.write("{oops")
    with open("list.json", "w") as f:
        f.write("[1]")
    want = dict(mod.DEFAULTS, line_length=100)
    if mod.load_settings("proj/.toolrc.json") != want:
        fail("load_settings does not read a settings file")
    if mod.settings_for("proj/src/pkg") != want:
        fail("settings_for changed")
    if mod.load_all(["proj/.toolrc.json"]) != {"proj/.toolrc.json": want}:
        fail("load_all changed")
    for bad in ("bad.json", "list.json"):
        try:
            mod.load_settings(bad)
        except mod.SettingsError:
            pass
        else:
            fail(f"load_settings no longer rejects {bad}")
    mod.dump(want, "out.json")
    with open("out.json") as f:
        if json.load(f) != {"line_length": 100}:
            fail("dump changed")
    tree = ast.parse(open(path, encoding="utf-8").read())
    attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "json"}
    if "load" not in attrs:
        fail("json.load is no longer used")


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
