"""What code binds and reads: names nothing defines, parameters nothing reads.

``app.check.checks`` compares the original with the result, so only what a change introduced
counts: a call that reads a name nothing defines, a new parameter nothing reads.

Contract (a language not named, or code that does not parse, gives None):
  * ``unbound(text, path) -> set[str] | None``: the names the code reads that nothing binds, less
    builtins and the language's own globals. Python by ``symtable``, JavaScript by tree-sitter's
    scopes, shell by its assignments and ``$X`` reads.
  * ``unbound_reads(text, path) -> dict[str, int] | None``: JavaScript and shell, the same
    names with the 0-based line of each one's first unbound read.
  * ``parameters(text, path) -> dict[str, Params] | None``: (Python) for each function, by
    its qualified name, its first line, its parameter names, the names its body reads and
    whether it is a stub; ``kept_functions(old, new, path)`` pairs those of two texts.
  * ``python_tree(text)`` (cached), ``python_functions(tree)``: the one parse and function walk.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
import symtable
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.resources import files

from ..code.syntax import language_for_path, parse

MODULE_NAMES = frozenset(
    {
        "__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__",
        "__builtins__", "__path__", "__annotations__", "__dict__", "__cached__", "__debug__", "__class__",
    }
)  # fmt: skip
_STAR = re.compile(r"^\s*from\s+\S+\s+import\s+\*", re.M)


def _python(text: str, path: str | None) -> bool:
    return language_for_path(path) == "python"


def unbound_reads(text: str, path: str | None, tree=None) -> dict[str, int] | None:
    """JavaScript and shell: each name the code reads that nothing binds, with the 0-based
    line of its first such read (the rules of ``unbound``); None for other languages.
    ``tree``: the text's tree-sitter parse, when the caller has it (``app.code.source``)."""
    lang = language_for_path(path)
    if lang == "javascript":
        return _javascript_unbound(text, tree)
    if lang == "bash":
        return _shell_unbound(text, tree)
    return None


def unbound(text: str, path: str | None, tree=None) -> set[str] | None:
    """The names the code reads that nothing binds; None for a language not named here or code
    that does not parse (``tree`` as in ``unbound_reads``).

    Python (``symtable``): names read as globals from any scope that the module does not bind
    (assignment, import, ``def``, ``class``, ``global`` plus assignment), less builtins and a
    module's own attributes; None with a star import. JavaScript (tree-sitter; scopes as the
    grammar's locals query has them, and the declarations it leaves out): a reference no
    enclosing scope declares (``var`` in its function, ``let``/``const``/classes in their block,
    hoisting ignored), less the globals of ``data/js_globals.json``. Shell: ``$X`` read without
    a default that no assignment, ``for``, ``read``/``getopts`` or declaration binds, less the
    shell's own variables (``SH_ENVIRONMENT``).
    """
    if language_for_path(path) in {"javascript", "bash"}:
        reads = unbound_reads(text, path, tree)
        return None if reads is None else set(reads)
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
    """(Python) For each function, by its qualified name (``Queue.put``; a name defined twice
    keeps its last): its 1-based first line, its parameter names, the names its body reads
    (nested definitions included), and ``stub``: a body that is only a docstring, ``pass``,
    ``...`` or ``raise``. None for other languages or code that does not parse."""
    tree = python_tree(text) if _python(text, path) else None
    if tree is None:
        return None
    out: dict[str, Params] = {}
    for qual, fn in python_functions(tree).items():
        a = fn.args
        every = [*a.posonlyargs, *a.args, *a.kwonlyargs]
        every += [x for x in (a.vararg, a.kwarg) if x is not None]
        reads = frozenset(
            n.id
            for st in fn.body
            for n in ast.walk(st)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        )
        out[qual] = Params(fn.lineno, tuple(x.arg for x in every), reads, _is_stub(fn.body))
    return out


Function = ast.FunctionDef | ast.AsyncFunctionDef


@lru_cache(maxsize=4)
def python_tree(text: str) -> ast.Module | None:
    """``text`` parsed as Python (None when it does not parse). Cached: several checks read the
    same change's two texts; nobody may change the tree."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def python_functions(tree: ast.Module) -> dict[str, Function]:
    """Every function of ``tree`` by qualified name (``Queue.put``; a nested one ``f.g``; a
    name defined twice keeps its last)."""
    out: dict[str, Function] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[prefix + child.name] = child
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return out


@lru_cache(maxsize=4)
def kept_functions(old: str, new: str, path: str | None) -> tuple[tuple[str, Params, Params], ...]:
    """(Python) ``(name, before, after)`` for each function of ``new`` that ``old`` has too, by
    qualified name, and that ``new`` does not make a stub; () when either does not parse.
    Cached: ``param_unused`` and ``param_dropped`` ask it of the same change."""
    before, after = parameters(old, path), parameters(new, path)
    if not before or not after:
        return ()
    return tuple((q, before[q], p) for q, p in after.items() if q in before and not p.stub)


# ---- JavaScript: scopes and declarations by node type ---------------------------------------

# modelled on tree-sitter-javascript's queries/locals.scm (scopes: blocks and functions;
# definitions: ``pattern/identifier`` and ``variable_declarator`` names), with what that
# query leaves out: function and class names, imports, catch parameters, loop heads, and
# ``var`` bound in its function
_JS_FUNCTIONS = frozenset(
    {
        "program",
        "function_expression",
        "arrow_function",
        "function_declaration",
        "generator_function_declaration",
        "generator_function",
        "method_definition",
    }
)
_JS_SCOPES = _JS_FUNCTIONS | {
    "statement_block",
    "for_statement",
    "for_in_statement",
    "catch_clause",
    "class_declaration",
    "class",
}
# a declaration's name is bound in the scope around the declaration, not its own
_JS_NAMED = frozenset(
    {"function_declaration", "generator_function_declaration", "class_declaration"}
)


@cache
def _js_globals() -> frozenset[str]:
    data = json.loads((files(__package__) / "data" / "js_globals.json").read_text())
    return frozenset(data["names"]) | {"undefined", "arguments", "globalThis"}


def _js_is_definition(node) -> bool:
    parent = node.parent
    if parent is None:
        return False
    kind = parent.type
    if kind == "variable_declarator":
        return parent.child_by_field_name("name") == node
    if kind in _JS_NAMED or kind in {"function_expression", "class", "generator_function"}:
        return parent.child_by_field_name("name") == node
    if kind in {"formal_parameters", "catch_clause", "rest_pattern", "assignment_pattern"}:
        return kind != "assignment_pattern" or parent.child_by_field_name("left") == node
    if kind == "arrow_function":
        return parent.child_by_field_name("parameter") == node
    if kind in {"array_pattern", "pair_pattern", "object_pattern"}:
        return kind != "pair_pattern" or parent.child_by_field_name("value") == node
    if kind in {"import_specifier", "import_clause", "namespace_import"}:
        return True
    if kind == "for_in_statement":  # for (const x of xs), for (x in o): both bind or assign
        return parent.child_by_field_name("left") == node
    return False


def _js_scope_of(node):
    """The scope a definition binds in: a function name in the scope around the function,
    ``var`` in the nearest function, anything else in the nearest scope."""
    parent = node.parent
    start = parent.parent if parent is not None and parent.type in _JS_NAMED else parent
    var = False
    p = node.parent
    while p is not None and p.type not in _JS_SCOPES:
        if p.type == "variable_declaration":  # ``var``; let and const are lexical_declaration
            var = True
        p = p.parent
    want = _JS_FUNCTIONS if var else _JS_SCOPES
    s = start
    while s is not None and s.type not in want:
        s = s.parent
    return s


def _javascript_unbound(text: str, tree=None) -> dict[str, int] | None:
    tree = tree if tree is not None else parse(text, "javascript")
    if tree is None or tree.root_node.has_error:
        return None
    bound: dict[int, set[str]] = {}
    refs = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack += node.children
        if node.type == "shorthand_property_identifier":  # ``{ a }`` reads a
            refs.append(node)
        elif node.type in {"identifier", "shorthand_property_identifier_pattern"}:
            if node.type != "identifier" or _js_is_definition(node):
                scope = _js_scope_of(node)
                if scope is not None:
                    bound.setdefault(scope.id, set()).add(node.text.decode())
            elif node.parent is None or node.parent.type not in {
                "export_specifier",
                "labeled_statement",
            }:
                refs.append(node)
    out: dict[str, int] = {}
    for node in refs:
        name = node.text.decode()
        p = node.parent
        while p is not None and name not in bound.get(p.id, ()):
            p = p.parent
        if p is None and name not in _js_globals():
            out[name] = min(out.get(name, node.start_point[0]), node.start_point[0])
    return out


# ---- shell: variables read that nothing assigns ------------------------------------------

# a default, an alternative or an error message makes reading an unset variable safe
_SH_GUARDS = frozenset({":-", "-", ":=", "=", ":+", "+", ":?", "?"})
_SH_BINDERS = frozenset({"read", "getopts", "mapfile", "readarray", "printf"})
_SH_SPECIAL = re.compile(r"^(?:[0-9]+|[@*#?$!_-])$")
# what every shell sets; anything else the script reads from its environment it must name
SH_ENVIRONMENT = frozenset(
    {
        "HOME", "PATH", "PWD", "OLDPWD", "USER", "LOGNAME", "SHELL", "HOSTNAME", "UID", "EUID",
        "PPID", "IFS", "OPTARG", "OPTIND", "RANDOM", "SECONDS", "LINENO", "BASH_SOURCE",
        "BASH_VERSION", "BASHPID", "FUNCNAME", "PIPESTATUS", "TMPDIR", "TERM", "LANG",
        "EPOCHSECONDS", "BASH_REMATCH", "REPLY", "HOSTTYPE", "OSTYPE", "MACHTYPE", "GROUPS",
    }
)  # fmt: skip


def _shell_unbound(text: str, tree=None) -> dict[str, int] | None:
    tree = tree if tree is not None else parse(text, "bash")
    if tree is None or tree.root_node.has_error:
        return None
    bound: set[str] = set()
    read: dict[str, int] = {}
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack += node.children
        kind = node.type
        if kind == "variable_name":
            parent = node.parent
            name = node.text.decode()
            if parent.type in {"variable_assignment", "for_statement", "declaration_command"}:
                bound.add(name)
            elif parent.type in {"simple_expansion", "subscript"} or (
                parent.type == "expansion" and not {c.type for c in parent.children} & _SH_GUARDS
            ):
                row = node.start_point[0]  # the walk is not in text order
                read[name] = min(read.get(name, row), row)
        elif kind == "command":
            head = node.child_by_field_name("name")
            if head is not None and head.text.decode() in _SH_BINDERS:
                words = [c for c in node.children if c.type == "word"]
                bound.update(w.text.decode() for w in words if not w.text.startswith(b"-"))
    return {
        n: row
        for n, row in read.items()
        if n not in bound and n not in SH_ENVIRONMENT and not _SH_SPECIAL.match(n)
    }
