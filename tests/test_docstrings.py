"""Docstrings state contracts: a module's at most ``MAX_LINES`` lines, none with run history.

Every module of ``app/``, ``engine/``, ``models/`` and ``kernels/`` has a docstring that says what
the module promises. Measurements and their history (dated runs, session numbers, task names,
figures) go to ``docs/notes.md``, one section per module, or ``bench/README.md``; no docstring of
these modules (module, class, function, attribute) carries a session number, a dated run or the
name of a benchmark task. Read with ``ast``: nothing is imported, no model is loaded.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "engine", "models", "kernels")
MAX_LINES = 15

HISTORY = re.compile(r"\bsessions? \d+\b|\b20\d\d-\d\d-\d\d\b", re.I)
"""What run history looks like in a docstring: a session number, a dated run."""
BENCH = ROOT / "bench"


def _modules() -> list[str]:
    return sorted(
        p.relative_to(ROOT).as_posix() for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")
    )


def _docstring(rel: str) -> str | None:
    return ast.get_docstring(ast.parse((ROOT / rel).read_text(encoding="utf-8")))


def test_finds_the_modules():
    mods = _modules()
    assert "engine/decode.py" in mods and "app/tui/app.py" in mods
    assert len(mods) > 50


@pytest.mark.parametrize("rel", _modules())
def test_module_docstring_states_a_contract(rel: str):
    doc = _docstring(rel)
    assert doc, f"{rel} has no module docstring"
    lines = doc.splitlines()
    assert len(lines) <= MAX_LINES, (
        f"{rel}: module docstring of {len(lines)} lines (at most {MAX_LINES}); keep the contract, "
        "move measurements and history to docs/notes.md"
    )


def _task_names() -> set[str]:
    """The names of the benchmark suites' tasks: the edit tasks (``_t(name, ...)`` in
    ``bench/edit_tasks*.py``) and the behaviour tasks (their folders under ``bench/data/behave``)."""
    names = set()
    for f in BENCH.glob("edit_tasks*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "_t"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                names.add(node.args[0].value)
    names |= {d.name for d in (BENCH / "data" / "behave").glob("*/*") if d.is_dir()}
    return names


_TASKS = _task_names()
TASK = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(map(re.escape, sorted(_TASKS, key=len, reverse=True)))
    + r")(?![\w-])"
)
"""A benchmark task's name as a whole word."""


def test_finds_the_task_names():
    names = _TASKS
    assert {"hmac-blocksize", "string-delimiter", "cfg-json-exclude-tests"} <= names
    assert len(names) > 100


@pytest.mark.parametrize("rel", _modules())
def test_no_docstring_carries_run_history(rel: str):
    """Every string statement of the module (its docstrings, an attribute's too) is free of run
    history: those figures go to ``docs/notes.md`` or ``bench/README.md``."""
    for node in ast.walk(ast.parse((ROOT / rel).read_text(encoding="utf-8"))):
        if not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            continue
        for found in (HISTORY.search(node.value.value), TASK.search(node.value.value)):
            assert not found, (
                f"{rel}:{node.lineno}: run history in a docstring ({found.group(0)!r})"
            )
