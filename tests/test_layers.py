"""The layers the brief sets: the product imports no benchmark, the engine nothing of the
app or the models, and every module imports on its own in a fresh interpreter (a cycle
that only some import orders survive fails here)."""

import json
import pkgutil
import subprocess
import sys

import specedit

PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(m for m in sys.modules if m.startswith("specedit."))))
"""


def _modules(package: str) -> list[str]:
    """Every module of ``package`` but the ``__main__`` ones (importing one runs a command)."""
    pkg = __import__(package, fromlist=["__path__"])
    found = pkgutil.walk_packages(pkg.__path__, package + ".")
    return sorted(m.name for m in found if not m.name.endswith(".__main__"))


def _loaded(module: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"{module} does not import alone: {done.stderr[-800:]}"
    return json.loads(done.stdout.splitlines()[-1])


def test_every_app_module_imports_alone_and_no_benchmark():
    # the front ends that need an extra (the terminal app: textual) import it at the top
    for module in _modules("specedit.app"):
        loaded = _loaded(module)
        assert not [m for m in loaded if m.startswith("specedit.bench")], module


def test_the_engine_knows_nothing_of_the_app_or_the_models():
    for module in _modules("specedit.engine"):
        loaded = _loaded(module)
        assert not [m for m in loaded if m.startswith(("specedit.app", "specedit.models"))]


def test_bench_is_a_registered_command():
    from specedit.app.cli.main import plugin_command
    from specedit.bench.cli import main

    assert plugin_command("bench") is main
    assert specedit.__name__ == "specedit"
