"""Check for py-pluginload-skip-broken: python check.py PATH (PATH: the edited file)."""
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


import logging


class Keep(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def check(mod, path):
    here = os.getcwd()
    with open(os.path.join(here, "plug_alpha.py"), "w") as f:
        f.write("PRIORITY = 5\ndef render(report):\n    return 'alpha:' + report\n")
    with open(os.path.join(here, "plug_needs_dep.py"), "w") as f:
        f.write("import no_such_dependency_xyz\n")
    with open(os.path.join(here, "plug_beta.py"), "w") as f:
        f.write("PLUGIN_NAME = 'beta'\ndef render(report):\n    return 'beta:' + report\n")
    sys.path.insert(0, here)
    keep = Keep()
    logging.getLogger().addHandler(keep)
    logging.getLogger().setLevel(logging.DEBUG)
    names = ["plug_alpha", "plug_misspelt_xyz", "plug_needs_dep", "plug_beta"]
    try:
        reg = mod.load_plugins(names)
    except ImportError as e:
        fail(f"load_plugins raised {type(e).__name__} for a plugin that cannot be imported")
    if reg is None or sorted(reg.names()) != ["beta", "plug_alpha"]:
        fail(f"load_plugins did not load the two good plugins: {None if reg is None else reg.names()!r}")
    if mod.render_all(reg, "r") != [("plug_alpha", "alpha:r"), ("beta", "beta:r")]:
        fail("render_all changed")
    for bad, missing in (("plug_misspelt_xyz", "plug_misspelt_xyz"), ("plug_needs_dep", "no_such_dependency_xyz")):
        if not any(r.levelno >= logging.WARNING and (bad in r.getMessage() or missing in r.getMessage()) for r in keep.records):
            fail(f"no warning was logged about the plugin {bad}")
    if any(r.levelno >= logging.WARNING and "plug_alpha" in r.getMessage() for r in keep.records):
        fail("a warning was logged about a plugin that loaded fine")
    reg2 = mod.load_plugins(["plug_alpha"], reg)
    if reg2 is not reg or len(reg) != 2:
        fail("loading into an existing registry changed")


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
