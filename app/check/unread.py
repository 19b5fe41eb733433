"""A value the change writes that nothing reads: the rest of the change is missing.

Contract: ``set_unread(change, intent)`` is a check of ``app.check.checks.CHECKS`` (a
``Suspect`` or None), Python only. It says the first of:
  * a private attribute (``self._count``: one underscore, not a dunder) the result assigns,
    which the original never names and which nothing in the result reads (no ``._count``
    load, augmented assignment or ``getattr`` string);
  * a local variable a function of the result assigns with ``=`` and never reads, where the
    original's function of that name did not leave that variable unread.
Not for a name the instruction says, a name that starts with ``_`` (a local kept unread on
purpose), unpacking targets, loop, ``with`` and ``except`` names, or ``global``/``nonlocal``
ones. A public attribute is let be: callers outside the file may read it.
"""

from __future__ import annotations

import ast

from ..code.names import whole_word
from ..code.source import Change
from .bindings import Function, python_functions, python_tree
from .intent import Intent
from .verdict import Suspect, Verdict


def _unread_locals(fn: Function) -> dict[str, int]:
    """The plain ``name = ...`` targets of ``fn``'s own body that nothing in it reads (nested
    functions included), with the 1-based line of the first."""
    declared: set[str] = set()
    stored: dict[str, int] = {}
    read: set[str] = set()
    for st in fn.body:
        for n in ast.walk(st):
            if isinstance(n, (ast.Global, ast.Nonlocal)):
                declared.update(n.names)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                read.add(n.id)
            elif isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    if isinstance(t, ast.Name) and not t.id.startswith("_"):
                        stored.setdefault(t.id, n.lineno)
    return {k: v for k, v in stored.items() if k not in read and k not in declared}


def _private_attributes(tree: ast.Module) -> tuple[dict[str, int], set[str]]:
    """Private attributes assigned anywhere (with the first line), and those read anywhere."""
    stored: dict[str, int] = {}
    read: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute):
            if isinstance(n.ctx, ast.Store):
                stored.setdefault(n.attr, n.lineno)
            else:
                read.add(n.attr)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Attribute):
            read.add(n.target.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            read.add(n.value)
    private = {k: v for k, v in stored.items() if k.startswith("_") and not k.startswith("__")}
    return private, read


def set_unread(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when the change writes a private attribute or a local nothing reads."""
    if c.old.lang != "python" or c.new.lang != "python":
        return None
    old, new = python_tree(c.old.text), python_tree(c.new.text)
    if old is None or new is None:
        return None
    private, read = _private_attributes(new)
    for name, line in private.items():
        if name not in read and not whole_word(name).search(c.old.text) and not intent.says(name):
            return Suspect(
                Verdict.UNREAD,
                0,
                f"the result sets the attribute {name} (line {line}) and nothing in the file "
                "reads it",
            )
    before = python_functions(old)
    for qual, fn in python_functions(new).items():
        was = _unread_locals(before[qual]) if qual in before else {}
        for name, line in _unread_locals(fn).items():
            if name not in was and not intent.says(name):
                return Suspect(
                    Verdict.UNREAD,
                    0,
                    f"{qual} sets {name} (line {line}) and never reads it",
                )
    return None
