"""The house's layout: app/ in rooms by job, and imports that run one way at run time.

app/'s top level holds only ``options.py``, ``__init__.py`` and subpackages (``samples/`` is the
one data folder). The import graph of every module under app/, engine/, models/ and kernels/
is read with ``ast``: module-level imports and the lazy ones inside functions alike, less those
under ``if TYPE_CHECKING:`` (never run); importing ``a.b.c`` imports the packages ``a.b`` too.
That graph has no cycle between modules, and none between app's rooms (its subpackages and
``options``): a room that imports another is never imported back, so a newcomer reads the rooms
bottom up; engine/, models/ and kernels/ import nothing of app/, and the engine none of models/
(the engine's verifier reaches kernels/ lazily, which import ``engine.sampling``: the device
seam, a loop between those two folders but not between modules). Nothing in app/ imports the
benchmarks (they register ``specedit bench`` in the ``specedit.commands`` entry point group).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"app": "specedit.app", "engine": "specedit.engine", "models": "specedit.models"}
FOLDERS["kernels"] = "specedit.kernels"
DATA = {"samples", "data", "__pycache__"}
"""Folders that hold files, not modules (app/samples/, app/check/data/)."""


def _modules() -> dict[str, Path]:
    """Every module's dotted name and file (a package by its ``__init__.py``)."""
    found = {}
    for folder, name in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if DATA & set(parts[:-1]):
                continue
            dotted = [name, *parts]
            if dotted[-1] == "__init__":
                dotted.pop()
            found[".".join(dotted)] = path
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(tree: ast.AST, package: str) -> set[str]:
    """The dotted names ``tree`` imports at run time, resolved against ``package``."""
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]))
            elif isinstance(child, ast.Import):
                out.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    module = ".".join([*base, *([child.module] if child.module else [])])
                else:
                    module = child.module or ""
                out.add(module)
                out.update(f"{module}.{a.name}" for a in child.names)  # a submodule, maybe
            else:
                visit(child)

    visit(tree)
    return out


def _graph() -> dict[str, set[str]]:
    """Module -> the specedit modules it imports at run time (parent packages included)."""
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        edges = set()
        for target in _imported(ast.parse(path.read_text(), str(path)), package):
            while target and target not in mods:  # a name inside a module: the module
                target = target.rpartition(".")[0]
            while target:  # importing a.b.c runs a.b's __init__ first
                if target in mods and target != name and target not in own:
                    edges.add(target)
                target = target.rpartition(".")[0]
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def _room(module: str) -> str:
    """``specedit.app.edit.stages`` -> ``app.edit``; ``specedit.engine.decode`` -> ``engine``."""
    parts = module.split(".")[1:]
    return ".".join(parts[:2]) if parts[0] == "app" and len(parts) > 1 else parts[0]


def test_app_top_level_holds_only_options_and_rooms():
    top = ROOT / "app"
    files = sorted(p.name for p in top.iterdir() if p.is_file())
    assert files == ["__init__.py", "options.py"], files
    for folder in sorted(p for p in top.iterdir() if p.is_dir() and p.name not in DATA):
        assert (folder / "__init__.py").is_file(), f"app/{folder.name}/ is not a subpackage"


def test_the_graph_sees_lazy_imports_and_skips_type_checking():
    graph = _graph()
    loaded = graph["specedit.app.runtime.loaded_model"]
    assert "specedit.app.runtime.remote_engine" in loaded  # imported inside load_model
    assert "specedit.models.torch_backend" in loaded  # ditto, inside _load_target
    runner = graph["specedit.app.runtime.runner"]
    assert "specedit.app.runtime.loaded_model" not in runner  # only under TYPE_CHECKING
    assert "specedit.app.server" in graph["specedit.app.cli.main"]  # the package's __init__


def test_no_import_cycle_between_modules_at_run_time():
    assert _cycles(_graph()) == []


def test_rooms_import_one_way():
    rooms: dict[str, set[str]] = {}
    for module, targets in _graph().items():
        here = _room(module)
        rooms.setdefault(here, set()).update(_room(t) for t in targets if _room(t) != here)
    app = {r: {t for t in out if t.startswith("app")} for r, out in rooms.items() if r[:3] == "app"}
    assert _cycles(app) == [], app
    below = {r: out for r, out in rooms.items() if not r.startswith("app")}
    assert not [(r, t) for r, out in below.items() for t in out if t.startswith("app")]
    assert "models" not in rooms["engine"]  # (engine.verifier reaches kernels lazily: the seam)


def test_answer_and_edit_each_have_their_job():
    """Neither room imports the other: what both guards need of the model (each token's bytes)
    lives below them, in ``app.runtime.copy_guard``."""
    graph = _graph()
    crossing = [
        (m, t)
        for m, targets in graph.items()
        for t in targets
        if {_room(m), _room(t)} == {"app.answer", "app.edit"}
    ]
    assert crossing == []


def test_nothing_in_app_imports_the_benchmarks():
    for path in sorted((ROOT / "app").rglob("*.py")):
        package = "specedit.app." + ".".join(path.relative_to(ROOT / "app").parent.parts)
        names = _imported(ast.parse(path.read_text(), str(path)), package.rstrip("."))
        wrong = [n for n in names if n == "specedit.bench" or n.startswith("specedit.bench.")]
        assert not wrong, f"{path.relative_to(ROOT)} imports {wrong}"
