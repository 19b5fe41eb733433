"""Check for py-featureflags-rename-get: python check.py PATH (PATH: the edited file)."""
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
    FF = mod.FeatureFlags
    if "lookup" not in FF.__dict__:
        fail("FeatureFlags has no method lookup")
    if "get" in FF.__dict__:
        fail("FeatureFlags still defines get")
    spec = {
        "beta": {"enabled": True, "rollout": 100, "variants": ["a", "b"]},
        "half": {"enabled": True, "rollout": 50},
        "off": {"enabled": False},
        "bad": "not a dict",
    }
    flags = FF(spec)
    if flags.lookup("beta") != spec["beta"] or flags.lookup("nope") != {} or flags.lookup("bad") != {}:
        fail("lookup does not return what get returned")
    if not flags.is_enabled("beta") or flags.is_enabled("off") or flags.is_enabled("half") or flags.is_enabled("nope"):
        fail("is_enabled changed")
    users = [flags.is_enabled("half", u) for u in range(200)]
    if not (60 < sum(users) < 140):
        fail("the rollout of is_enabled changed")
    if flags.variant("beta", 7) not in ("a", "b") or flags.variant("off", 7) is not None:
        fail("variant changed")
    if flags.variant("half", next(u for u in range(200) if users[u])) != "on":
        fail("variant without variants changed")
    if mod.describe(flags, "half") != "half: on (50%)" or mod.describe(flags, "off") != "off: off" or mod.describe(flags, "nope") != "nope: off":
        fail("describe changed")
    with open("flags.json", "w") as f:
        json.dump(spec, f)
    if mod.flags_from_env({"FLAGS_FILE": "flags.json"}).names() != ["bad", "beta", "half", "off"]:
        fail("flags_from_env with an environ dict changed")
    os.environ["FLAGS_FILE"] = "flags.json"
    if mod.flags_from_env().names() != ["bad", "beta", "half", "off"]:
        fail("flags_from_env with os.environ changed")
    del os.environ["FLAGS_FILE"]
    if mod.flags_from_env().names() != []:
        fail("flags_from_env without $FLAGS_FILE changed")
    tree = ast.parse(open(path, encoding="utf-8").read())
    env_get = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "get"
               and isinstance(n.value, ast.Attribute) and n.value.attr == "environ"
               and isinstance(n.value.value, ast.Name) and n.value.value.id == "os"]
    if not env_get:
        fail("os.environ.get is no longer used")


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
