"""Renames without a model: a Python name renamed by rope's analysis (``specedit rename``, the
server's ``refactor/rename``).

Contract: :func:`rename_python(text, old, new, line=None, docs=False)` returns a
:class:`Renamed` (the new text, its hunks, the 1-based lines changed, notes on what rope left
alone) or a :class:`RenameError` (a ``kind`` and one line a user can act on); it never raises
for bad input and never touches a file (rope works on a private copy of the text).
  * It starts from the occurrence on ``line``, else ``old``'s definition; a name that names
    several things asks for ``line``. Strings and comments change only with ``docs=True``.
  * Refused: a text that does not parse, names that are not identifiers, ``old`` absent or
    defined elsewhere, ``new`` merging with or capturing another name (``symtable`` before and
    after, and a class's attributes), a change to an import or a name left undefined.
  * Notes (``Note``): occurrences rope left alone, ``.old`` on instances of builtin subclasses,
    a stale ``__all__``, an f-string ``{old=}``; ``Renamed.doubtful`` when one says the result
    may be incomplete (the CLI writes it only with ``--force``).
"""

from __future__ import annotations

import ast
import keyword
import logging
import re
import symtable
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .diff import Hunk, compute_hunks, split_lines
from .rename_scan import (
    Site,
    Sites,
    builtin_base,
    class_members,
    imports,
    merged,
    tables,
    undefined,
)
from .syntax import language_name

__all__ = ["Note", "RenameError", "Renamed", "is_python", "rename_python"]

log = logging.getLogger(__name__)

ErrorKind = Literal[
    "not_python",
    "syntax",
    "bad_name",
    "not_found",
    "ambiguous",
    "taken",
    "external",
    "incomplete",
    "rope",
]
NoteKind = Literal["unsure", "builtin_base", "all", "fstring"]
DOUBTFUL: frozenset[str] = frozenset({"unsure", "builtin_base"})
"""Note kinds that say the result may be incomplete (a write needs ``--force``)."""

_COPY = "specedit_rename_target.py"
"""The copy's name in the temporary project (never a stdlib name the text may import)."""
_ROPE_LOCK = threading.Lock()  # rope keeps module-level caches: one rename at a time


@dataclass(frozen=True)
class RenameError:
    """Why nothing was renamed: ``message`` is one line for the user."""

    kind: ErrorKind
    message: str


@dataclass(frozen=True)
class Note:
    """Something the user should look at (1-based ``line``); ``kind`` in :data:`NoteKind`."""

    line: int
    kind: NoteKind
    message: str


@dataclass(frozen=True)
class Renamed:
    """A rename done: ``new_text`` (same number of lines), the 1-based ``changed_lines``,
    ``line`` (1-based) of the occurrence it started from and ``occurrences`` renamed."""

    old_text: str
    new_text: str
    line: int
    occurrences: int
    changed_lines: tuple[int, ...]
    hunks: list[Hunk] = field(repr=False)
    notes: tuple[Note, ...] = ()

    @property
    def doubtful(self) -> bool:
        return any(n.kind in DOUBTFUL for n in self.notes)

    def to_json(self) -> dict[str, Any]:
        """The result as ``refactor/rename`` returns it: lines 0-based (docs/protocol.md)."""
        return {
            "newText": self.new_text,
            "hunks": [h.to_json() for h in self.hunks],
            "line": self.line - 1,
            "occurrences": self.occurrences,
            "changedLines": [n - 1 for n in self.changed_lines],
            "notes": [
                {"line": n.line - 1, "kind": n.kind, "message": n.message} for n in self.notes
            ],
            "doubtful": self.doubtful,
        }


def is_python(path: str | None, text: str) -> bool:
    """A Python file by its name (``app.code.syntax.LANGUAGES``), or an extensionless script
    whose first line is a ``python`` shebang."""
    if language_name(path) == "python":
        return True
    first = text.split("\n", 1)[0]
    return bool(path) and not Path(path).suffix and first.startswith("#!") and "python" in first


def _line_text(lines: list[str], line: int) -> str:
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


# ----------------------------------------------------------------------------- the rename


def rename_python(
    text: str, old: str, new: str, *, line: int | None = None, docs: bool = False
) -> Renamed | RenameError:
    """Rename ``old`` to ``new`` in the Python ``text`` with rope (module docstring)."""
    for name in (old, new):
        if not name.isidentifier() or keyword.iskeyword(name):
            return RenameError("bad_name", f"{name!r} is not a Python identifier")
    if old == new:
        return RenameError("bad_name", f"the new name is the old one ({old})")
    try:
        tree = ast.parse(text)
        before = tables(text)
    except (SyntaxError, ValueError) as e:
        where = f"line {e.lineno}: " if getattr(e, "lineno", None) else ""
        msg = getattr(e, "msg", None) or str(e)
        return RenameError("syntax", f"the file does not parse as Python ({where}{msg})")
    finder = Sites(text, old)
    finder.visit(tree)
    if not finder.sites:
        in_text = re.search(rf"(?<!\w){re.escape(old)}(?!\w)", text)
        return RenameError(
            "not_found",
            f"{old} does not occur in the file as a name"
            + (" (only in strings or comments)" if in_text else ""),
        )
    with _ROPE_LOCK, tempfile.TemporaryDirectory(prefix="specedit-rename-") as tmp:
        return _rename(Path(tmp), text, tree, before, finder, old, new, line, docs)


def _rename(
    tmp: Path,
    text: str,
    tree: ast.Module,
    before: list[symtable.SymbolTable],
    finder: Sites,
    old: str,
    new: str,
    line: int | None,
    docs: bool,
) -> Renamed | RenameError:
    from rope.base import evaluate, exceptions, pynames
    from rope.base.project import Project
    from rope.refactor.rename import Rename

    copy = tmp / _COPY
    copy.write_bytes(text.encode("utf-8"))
    with warnings.catch_warnings():  # rope's own deprecations, of its internals
        warnings.simplefilter("ignore", DeprecationWarning)
        project = Project(str(tmp), ropefolder=None)  # ropefolder=None: no .ropeproject
    try:
        resource = project.get_resource(_COPY)
        pymodule = project.get_pymodule(resource)
        groups: dict[int, list[Site]] = {}  # rope's pyname (its id) -> the sites binding it
        alive = []  # the pynames, so that no id is reused while ``groups`` is read
        for s in finder.sites:
            if s.binding:
                alive.append(pyname := evaluate.eval_location2(pymodule, s.offset)[1])
                groups.setdefault(id(pyname) if pyname else -s.offset - 1, []).append(s)
        start = _start(finder.sites, groups, old, line)
        if isinstance(start, RenameError):
            return start
        try:
            rename = Rename(project, resource, start.offset)
        except exceptions.RefactoringError:
            return RenameError(
                "not_found", f"rope cannot tell what {old} on line {start.line} is bound to"
            )
        pyname = rename.old_pyname
        if not isinstance(pyname, pynames.ImportedName | pynames.ImportedModule):
            module = pyname.get_definition_location()[0]
            if module is None or module.get_resource() != resource:
                return RenameError(
                    "external",
                    f"{old} on line {start.line} is defined outside this file (a builtin or "
                    "another module); specedit rename renames what the file defines",
                )
        target = groups.get(id(pyname), [start] if start.binding else [])
        own_scope = {s.scope for s in target if s.kind != "attribute"}
        plain = {s.offset: s.scope for s in finder.sites if s.kind in ("use", "variable")}
        unsure: list[int] = []

        def decide(occurrence) -> bool:  # rope could not tell: certain for a plain name
            if plain.get(occurrence.offset, -1) in own_scope:  # in the definition's scope
                return True
            unsure.append(occurrence.offset)
            return False

        changes = rename.get_changes(new, docs=docs, in_hierarchy=True, unsure=decide)
    except exceptions.RopeError as e:
        log.info("rope refused %s -> %s: %r", old, new, e)
        return RenameError("rope", f"rope cannot rename {old}: {e}")
    except Exception as e:  # a fault of rope's on some code: a line, not a traceback
        log.exception("rope failed renaming %s -> %s", old, new)
        return RenameError("rope", f"rope failed on this file ({type(e).__name__}: {e})")
    finally:
        project.close()
    new_text = text
    for change in getattr(changes, "changes", []):
        if getattr(change, "resource", None) == resource and hasattr(change, "new_contents"):
            new_text = change.new_contents
    return _check(text, new_text, tree, before, finder, target, start, old, new, unsure, docs)


def _start(
    sites: list[Site], groups: dict[int, list[Site]], old: str, line: int | None
) -> Site | RenameError:
    """The occurrence the rename starts from (module docstring)."""
    defined = sorted({g[0].line for g in groups.values()})
    if line is not None:
        on = [s for s in sites if s.line == line]
        if not on:
            where = f" (defined on line {', '.join(map(str, defined))})" if defined else ""
            return RenameError("not_found", f"{old} does not occur on line {line} as a name{where}")
        return next((s for s in on if s.binding), on[0])
    if not groups:
        used = sorted({s.line for s in sites})[:5]
        return RenameError(
            "not_found",
            f"{old} is not defined in this file (used on line {', '.join(map(str, used))}); "
            "rename it where it is defined",
        )
    if len(groups) > 1:
        return RenameError(
            "ambiguous",
            f"{old} names {len(groups)} different things here (defined on lines "
            f"{', '.join(map(str, defined))}): pick one by its line (--line N)",
        )
    return next(iter(groups.values()))[0]


def _check(
    text: str,
    new_text: str,
    tree: ast.Module,
    before: list[symtable.SymbolTable],
    finder: Sites,
    target: list[Site],
    start: Site,
    old: str,
    new: str,
    unsure: list[int],
    docs: bool,
) -> Renamed | RenameError:
    """Refuse a result that breaks the file, else the result with its notes."""
    try:
        new_tree = ast.parse(new_text)
        after = tables(new_text)
    except SyntaxError as e:  # symtable: e.g. two parameters of one name
        return RenameError("taken", f"{new} is already bound there ({e.msg}, line {e.lineno})")
    for (ln, module, names), now in zip(imports(tree), imports(new_tree), strict=False):
        if (module, names) != now[1:]:
            return RenameError(
                "external",
                f"{old} is imported on line {ln}: renaming it here would change the import; "
                f"rename it where it is defined, or import it as {new}",
            )
    if one := merged(before, after, old, new):
        return RenameError("taken", one)
    scopes = {s.scope if s.kind != "attribute" else finder.parent.get(s.scope, -1) for s in target}
    owners = [finder.class_of[s] for s in scopes if s in finder.class_of]
    for cls in owners:
        if new in class_members(cls):
            return RenameError(
                "taken", f"{new} is already an attribute of class {cls.name} (line {cls.lineno})"
            )
    lost = sorted(undefined(after, new_tree) - undefined(before, tree))
    if lost:
        at = next(
            (n.lineno for n in ast.walk(new_tree) if isinstance(n, ast.Name) and n.id == lost[0]), 0
        )
        return RenameError(
            "incomplete",
            f"renaming would leave {lost[0]} undefined on line {at} (rope left that occurrence "
            "alone); rename it by hand, or ask the model with specedit rewrite",
        )
    old_lines, new_lines = split_lines(text), split_lines(new_text)
    changed = tuple(
        i + 1 for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)) if a != b
    )
    word = re.compile(rf"(?<!\w){re.escape(new)}(?!\w)")
    count = len(word.findall(new_text)) - len(word.findall(text))
    notes = _notes(text, new_text, tree, new_tree, owners, changed, old, new, unsure, docs)
    return Renamed(
        old_text=text,
        new_text=new_text,
        line=start.line,
        occurrences=count,
        changed_lines=changed,
        hunks=compute_hunks(text, new_text),
        notes=notes,
    )


def _notes(
    text: str,
    new_text: str,
    tree: ast.Module,
    new_tree: ast.Module,
    owners: list[ast.ClassDef],
    changed: tuple[int, ...],
    old: str,
    new: str,
    unsure: list[int],
    docs: bool,
) -> tuple[Note, ...]:
    lines, new_lines = split_lines(text), split_lines(new_text)
    notes: list[Note] = []
    for ln in sorted({text.count("\n", 0, off) + 1 for off in unsure}):
        notes.append(
            Note(
                ln,
                "unsure",
                f"rope could not tell whether this {old} is the one renamed; "
                f"left alone: {_line_text(lines, ln)}",
            )
        )
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    base = next((b for c in owners if (b := builtin_base(c, classes, {c.name}))), "")
    if base:
        done = {n.line for n in notes}
        for ln in sorted(
            {n.lineno for n in ast.walk(new_tree) if isinstance(n, ast.Attribute) and n.attr == old}
            - done
        ):
            notes.append(
                Note(
                    ln,
                    "builtin_base",
                    f".{old} left alone: rope reads instances of classes "
                    f"derived from {base} as {base}: {_line_text(new_lines, ln)}",
                )
            )
    if not docs:
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign | ast.AugAssign) and any(
                isinstance(t, ast.Name) and t.id == "__all__"
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            ):
                if any(isinstance(c, ast.Constant) and c.value == old for c in ast.walk(n.value)):
                    notes.append(
                        Note(
                            n.lineno,
                            "all",
                            f"__all__ still lists '{old}' (rope renames "
                            "inside strings only with --docs)",
                        )
                    )
    debug = re.compile(rf"\{{\s*{re.escape(new)}\s*=(?!=)")
    for ln in changed:
        if debug.search(new_lines[ln - 1]):
            notes.append(
                Note(ln, "fstring", f"the f-string's {{{new}=}} now prints '{new}=', not '{old}='")
            )
    return tuple(sorted(notes, key=lambda n: n.line))
