"""Where a Python name occurs and what binds it, for ``app.code.refactor``: the occurrences the syntax
tree places exactly, and the checks a rename's result must pass.

Contract:
* :class:`Sites` lists every occurrence of one name (:class:`Site`: the offset, the 1-based line,
  what it is, whether it binds the name, and its scope id: 0 is the module, ``parent`` and
  ``class_of`` say what holds each other scope). A ``def``/``class`` name, a parameter, a
  ``self.x =``, an import alias, ``except ... as x`` and ``case`` captures bind; a read, ``obj.x``
  and a call's ``x=`` keyword do not.
* :func:`tables` is every scope's ``symtable``; :func:`merged` says where a rename made two names
  one (a capture, a shadowed builtin, a second binding); :func:`undefined` is the global names read
  but bound nowhere; :func:`imports` is what each import statement imports; :func:`class_members`
  and :func:`builtin_base` read a class's attributes and the builtin type it derives from.
"""

from __future__ import annotations

import ast
import builtins
import re
import symtable
from dataclasses import dataclass

__all__ = [
    "Site",
    "Sites",
    "builtin_base",
    "class_members",
    "imports",
    "merged",
    "tables",
    "undefined",
]

_MODULE_NAMES = {"__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__"}
_MODULE_NAMES |= {"__builtins__", "__path__", "__annotations__", "__dict__", "__cached__"}


@dataclass(frozen=True)
class Site:
    """An occurrence of the name in the tree: ``offset`` into the text, 1-based ``line``,
    whether it binds the name, and the id of the scope it lives in (0 = the module)."""

    offset: int
    line: int
    kind: str  # function, class, parameter, variable, attribute, import, use, keyword
    binding: bool
    scope: int


class Sites(ast.NodeVisitor):
    """Every occurrence of ``name`` that the tree places exactly, with its scope: a
    function's decorators, defaults and annotations and a class's bases are in the outer
    scope, its body in its own; a comprehension's first iterable is outside it."""

    def __init__(self, text: str, name: str) -> None:
        self.text, self.name = text, name
        lines = text.split("\n")
        self._starts = [0]
        for ln in lines[:-1]:
            self._starts.append(self._starts[-1] + len(ln) + 1)
        self._bytes = [ln.encode("utf-8") for ln in lines]
        self.sites: list[Site] = []
        self.class_of: dict[int, ast.ClassDef] = {}  # scope id -> its class
        self.parent: dict[int, int] = {}  # scope id -> the scope it is in
        self._stack = [0]
        self._next = 1

    def offset(self, line: int, col_bytes: int) -> int:
        return self._starts[line - 1] + len(self._bytes[line - 1][:col_bytes].decode("utf-8"))

    def _add(self, offset: int, kind: str, binding: bool, scope: int | None = None) -> None:
        line = self.text.count("\n", 0, offset) + 1
        s = self._stack[-1] if scope is None else scope
        self.sites.append(Site(offset, line, kind, binding, s))

    def _search(self, node: ast.AST, pattern: str, kind: str) -> None:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        m = re.compile(pattern % re.escape(self.name)).search(self.text, start)
        if m:
            self._add(m.start(1), kind, True)

    def _end(self, node: ast.AST, kind: str, binding: bool) -> None:
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        self._add(end - len(self.name), kind, binding)

    def _push(self, cls: ast.ClassDef | None = None) -> None:
        self.parent[self._next] = self._stack[-1]
        self._stack.append(self._next)
        if cls is not None:
            self.class_of[self._next] = cls
        self._next += 1

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        a = node.args
        for d in [*a.defaults, *(d for d in a.kw_defaults if d is not None)]:
            self.visit(d)
        for arg in [*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg]:
            if arg is not None and arg.annotation is not None:
                self.visit(arg.annotation)
        if isinstance(node, ast.Lambda):
            self._push()
        else:
            for d in node.decorator_list:
                self.visit(d)
            if node.returns is not None:
                self.visit(node.returns)
            if node.name == self.name:
                self._search(node, r"(?:def)(?:\s|\\\n)+(%s)\b", "function")
            self._push()
        for arg in [*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg]:
            if arg is not None and arg.arg == self.name:
                self._add(self.offset(arg.lineno, arg.col_offset), "parameter", True)
        for stmt in node.body if isinstance(node.body, list) else [node.body]:
            self.visit(stmt)
        self._stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for n in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(n)
        if node.name == self.name:
            self._search(node, r"class(?:\s|\\\n)+(%s)\b", "class")
        self._push(node)
        for stmt in node.body:
            self.visit(stmt)
        self._stack.pop()

    def _comprehension(self, node: ast.AST) -> None:
        gens: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        self.visit(gens[0].iter)
        self._push()
        for i, g in enumerate(gens):
            self.visit(g.target)
            if i:
                self.visit(g.iter)
            for c in g.ifs:
                self.visit(c)
        for attr in ("elt", "key", "value"):
            if hasattr(node, attr):
                self.visit(getattr(node, attr))
        self._stack.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == self.name:
            binding = not isinstance(node.ctx, ast.Load)
            self._add(
                self.offset(node.lineno, node.col_offset), "variable" if binding else "use", binding
            )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.visit(node.value)
        if node.attr == self.name:
            binding = isinstance(node.ctx, ast.Store)
            self._end(node, "attribute" if binding else "use", binding)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg == self.name:
            self._add(self.offset(node.lineno, node.col_offset), "keyword", False)
        self.visit(node.value)

    def visit_alias(self, node: ast.alias) -> None:
        if node.asname == self.name or (node.asname is None and node.name == self.name):
            self._end(node, "import", True)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name == self.name:
            self._search(node, r"\bas(?:\s|\\\n)+(%s)\b", "variable")
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self.generic_visit(node)
        if node.name == self.name:
            self._end(node, "variable", True)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name == self.name:
            self._end(node, "variable", True)


def class_members(cls: ast.ClassDef) -> set[str]:
    """Names a class binds in its body, and ``self.X`` of its methods (their first param)."""
    names: set[str] = set()
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
            args = (
                stmt.args.posonlyargs + stmt.args.args if not isinstance(stmt, ast.ClassDef) else []
            )
            if args:
                me = args[0].arg
                for n in ast.walk(stmt):
                    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                        if n.value.id == me:
                            names.add(n.attr)
        for n in ast.walk(stmt) if isinstance(stmt, ast.Assign | ast.AnnAssign) else ():
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
    return names


def tables(text: str) -> list[symtable.SymbolTable]:
    """Every scope's symbol table, depth first (the order is the same after a rename)."""
    out, stack = [], [symtable.symtable(text, "<rename>", "exec")]
    while stack:
        t = stack.pop()
        out.append(t)
        stack.extend(reversed(t.get_children()))
    return out


def scope_name(t: symtable.SymbolTable) -> str:
    kind = str(getattr(t.get_type(), "value", t.get_type())).lower()
    return "the module" if kind == "module" else f"{kind} {t.get_name()} (line {t.get_lineno()})"


def merged(
    before: list[symtable.SymbolTable], after: list[symtable.SymbolTable], old: str, new: str
) -> str | None:
    """Where the rename made ``old`` and an existing ``new`` one name (a scope with fewer
    names after than before): the one line to refuse with, or None."""
    for a, b in zip(before, after, strict=False):
        if len(b.get_identifiers()) >= len(a.get_identifiers()) or new not in a.get_identifiers():
            continue
        s = a.lookup(new)
        if s.is_parameter():
            what = "a parameter"
        elif s.is_imported():
            what = "imported"
        elif s.is_assigned() or s.is_namespace():
            what = "bound"
        else:
            what = "used (a builtin)" if hasattr(builtins, new) else "used"
        return (
            f"{new} is already {what} in {scope_name(a)}; renaming {old} would make them one name"
        )
    return None


def undefined(tables: list[symtable.SymbolTable], tree: ast.Module) -> set[str]:
    """Global names read but bound nowhere (not the module, not builtins); none is known
    when the module does ``from m import *``."""
    if any(
        isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
        for n in ast.walk(tree)
    ):
        return set()
    bound = {
        s.get_name()
        for t in tables
        for s in t.get_symbols()
        if (t is tables[0] and (s.is_assigned() or s.is_imported() or s.is_namespace()))
        or (s.is_declared_global() and s.is_assigned())
    }
    return {
        s.get_name()
        for t in tables
        for s in t.get_symbols()
        if s.is_referenced()
        and s.is_global()
        and s.get_name() not in bound
        and not hasattr(builtins, s.get_name())
        and s.get_name() not in _MODULE_NAMES
    }


def imports(tree: ast.Module) -> list[tuple[int, str, list[str]]]:
    """What each import statement imports (not the names it binds them to)."""
    return [
        (n.lineno, getattr(n, "module", None) or "", [a.name for a in n.names])
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
    ]


def builtin_base(cls: ast.ClassDef, classes: dict[str, ast.ClassDef], seen: set[str]) -> str:
    """The builtin type (not ``object``) ``cls`` derives from, through the file's classes."""
    for b in cls.bases:
        if not isinstance(b, ast.Name) or b.id in seen:
            continue
        if b.id in classes:
            found = builtin_base(classes[b.id], classes, seen | {b.id})
            if found:
                return found
        elif b.id != "object" and isinstance(getattr(builtins, b.id, None), type):
            return b.id
    return ""
