"""What Python code binds and reads: names nothing defines, parameters nothing reads.

A small model that is asked to "add a parameter encoding and open the file with
encoding=encoding" often does one half: the new parameter is never read, or the call
reads a name that nothing defines. Both show in the code alone, without the model and
without an answer key; ``app.checks`` compares the original with the result, so only
what the change introduced counts.

Contract (Python only: any other language, or code that does not compile, gives None):
  * ``unbound(text, path) -> set[str] | None``: the names the code reads as globals (from
    any scope: module, function, class, comprehension) that the module does not bind
    (assignment, import, ``def``, ``class``, ``global`` plus assignment in a function),
    that are not builtins and not a module's own attributes (``__file__`` …); None also
    when the module has a star import (anything could be bound then);
  * ``parameters(text, path) -> dict[str, Params] | None``: for each function, by its
    qualified name (``Queue.put``; a name defined twice keeps its last), its 1-based
    first line, its parameter names (positional, keyword-only, then ``*args`` and
    ``**kwargs``), and the names its body reads (nested definitions and lambdas
    included); ``stub`` is True for a body that is only a docstring, ``pass``, ``...``
    or ``raise`` (an abstract method reads nothing).
"""

from __future__ import annotations

import ast
import builtins
import re
import symtable
from dataclasses import dataclass

from .syntax import language_for_path

MODULE_NAMES = frozenset(
    {
        "__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__",
        "__builtins__", "__path__", "__annotations__", "__dict__", "__cached__", "__debug__", "__class__",
    }
)  # fmt: skip
_STAR = re.compile(r"^\s*from\s+\S+\s+import\s+\*", re.M)


def _python(text: str, path: str | None) -> bool:
    return language_for_path(path) == "python"


def unbound(text: str, path: str | None) -> set[str] | None:
    """The names the code reads that nothing binds (module docstring)."""
    if not _python(text, path) or _STAR.search(text):
        return None
    try:
        top = symtable.symtable(text, path or "<text>", "exec")
    except (SyntaxError, ValueError):
        return None
    bound = set(dir(builtins)) | MODULE_NAMES
    read: set[str] = set()
    tables = [top]
    while tables:
        t = tables.pop()
        tables += t.get_children()
        module = t is top
        for s in t.get_symbols():
            name = s.get_name()
            if module and (s.is_assigned() or s.is_imported() or s.is_namespace()):
                bound.add(name)
            elif s.is_declared_global() and (s.is_assigned() or s.is_imported()):
                bound.add(name)
            if s.is_referenced() and (module or s.is_global()):
                read.add(name)
    return read - bound


@dataclass(frozen=True)
class Params:
    """One function's parameters and the names its body reads."""

    line: int
    names: tuple[str, ...]
    reads: frozenset[str]
    stub: bool


def _is_stub(body: list[ast.stmt]) -> bool:
    # a docstring and ``...`` are both constant expressions
    return all(
        (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))
        or isinstance(st, (ast.Pass, ast.Raise))
        for st in body
    )


def parameters(text: str, path: str | None) -> dict[str, Params] | None:
    """Each function's parameters and reads, by qualified name (module docstring)."""
    if not _python(text, path):
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: dict[str, Params] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = child.args
                every = [*a.posonlyargs, *a.args, *a.kwonlyargs]
                every += [x for x in (a.vararg, a.kwarg) if x is not None]
                reads = frozenset(
                    n.id
                    for st in child.body
                    for n in ast.walk(st)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                )
                out[prefix + child.name] = Params(
                    child.lineno, tuple(x.arg for x in every), reads, _is_stub(child.body)
                )
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return out
