"""The file's own top-level uses: a script's ``main "$@"``, a module's ``__main__`` guard.

Contract: ``entry_gone(change, intent)`` returns a ``Suspect`` or None. It reads the file's
structure only (``Source.tree``, ``Source.definitions``): a statement at the top of the
original, outside every definition, that names a function the file defines (a call, an
export) is gone when the result still defines that function and no statement outside its
definitions names it any more. A removal the instruction asks for (``Intent.removal``) and a renamed or removed
function (the result no longer defines it) are not this verdict.
"""

from __future__ import annotations

import re

from ..code.source import Change, Source
from .intent import Intent
from .verdict import Suspect, Verdict

_LANGS = frozenset(("bash", "javascript", "python", "typescript"))
_WORD = re.compile(r"[A-Za-z_$][\w$]*")


def _functions(src: Source) -> set[str]:
    """The names of the file's definitions, the last part of each (``Emitter.once``: once)."""
    return {d.name.rsplit(".", 1)[-1] for d in src.definitions}


def _outside(src: Source) -> list[tuple[int, str]]:
    """``(line, text)`` of the top-level statements that lie in no definition, comments left
    out (0-based first line)."""
    tree = src.tree
    if tree is None:
        return []
    spans = [(d.start, d.end) for d in src.definitions]
    out = []
    for node in tree.root_node.named_children:
        if node.type == "comment":
            continue
        first, last = node.start_point.row, node.end_point.row
        if any(a <= first and last < b for a, b in spans):
            continue
        if any(first <= a and b - 1 <= last for a, b in spans):
            continue  # holds a definition (an export of a function, a class body)
        out.append((first, src.text[node.start_byte : node.end_byte]))
    return out


def entry_gone(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when a top-level use of the file's own function is gone (module docstring)."""
    if intent.removal or c.old.lang not in _LANGS or not c.hunks:
        return None
    defined, still = _functions(c.old), _functions(c.new)
    left = set()
    for _, text in _outside(c.new):
        left |= set(_WORD.findall(text))
    for line, text in _outside(c.old):
        called = [w for w in _WORD.findall(text) if w in defined and w in still]
        gone = [w for w in called if w not in left]
        if gone:
            shown = text.strip().splitlines()[0]
            return Suspect(
                Verdict.ENTRY_GONE,
                0,
                f"line {line + 1}, `{shown}`, names {gone[0]} from outside every definition; "
                f"the result still defines {gone[0]} and names it nowhere outside it",
            )
    return None
