"""What a result lost that the instruction did not ask about: a definition, a parameter's use.

Contract (each a check of ``app.check.checks.CHECKS``: a ``Suspect`` or None):
  * ``definition_gone(change, intent)``: a function, class or method of the original whose
    name names no definition of the result, when the instruction asks for no removal and
    does not name it (nor renames it). One that moved (its name still defines something) is
    not gone; of a class that went, only the class is said.
  * ``param_dropped(change, intent)``: (Python) a parameter the original function read and the
    result's same function still takes but no longer reads, when the instruction asks for no
    removal and does not name the parameter; a function the result made a stub is let be.
Both say what they saw, with the original's line, not a guess about what was meant.
"""

from __future__ import annotations

from ..code.source import Change
from .bindings import kept_functions
from .intent import Intent
from .verdict import Suspect, Verdict

_SHOWN = 3


def _said(name: str, intent: Intent) -> bool:
    renamed = intent.rename[0] if intent.rename else None
    return name == renamed or intent.says(name)


def definition_gone(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when a definition of the original is gone from the result unasked."""
    if intent.removal or c.old.lang is None:
        return None
    old = c.old.definitions
    if not old:
        return None
    left = {d.name.rsplit(".", 1)[-1] for d in c.new.definitions}
    gone = []
    for d in old:
        parts = d.name.split(".")
        if "?" in parts or parts[-1] in left or _said(parts[-1], intent):
            continue
        if any(d.name.startswith(g.name + ".") for g in gone):
            continue  # its class or function went too: that one is said
        gone.append(d)
    if not gone:
        return None
    said = ", ".join(f"{d.name} (line {d.line + 1})" for d in gone[:_SHOWN])
    more = f" and {len(gone) - _SHOWN} more" if len(gone) > _SHOWN else ""
    are, it = ("is", "it") if len(gone) == 1 else ("are", "them")
    return Suspect(
        Verdict.DEFINITION_GONE,
        0,
        f"{said}{more} of the original {are} gone from the result; the instruction does not "
        f"name {it} or ask for a removal",
    )


def param_dropped(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when a function of the result no longer reads a parameter it read."""
    if intent.removal:
        return None
    for qual, was, p in kept_functions(c.old.text, c.new.text, c.path):
        for name in p.names:
            if name in ("self", "cls") or name in p.reads or _said(name, intent):
                continue
            if name in was.names and name in was.reads:
                return Suspect(
                    Verdict.PARAM_DROPPED,
                    0,
                    f"{qual} (line {p.line}) still takes the parameter {name} but no longer "
                    "reads it, as the original did; the instruction does not name it",
                )
    return None
