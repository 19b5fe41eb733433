"""A check's verdict: what it saw (``Verdict``, the wire's ``reason``) and one line saying where.

Contract: every check (``app.check.checks``, ``app.check.asked``) returns a ``Suspect`` or
None; ``Suspect.to_json`` is ``rewrite/done.suspect``. ``lines_said(hunks)`` is how a message
says the lines a change starts at ("line 55", "lines 2, 8, 9, 12, 40 …").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Verdict(StrEnum):
    """What a check saw (``Suspect.reason``; the value is the wire's ``reason``)."""

    DROPS_TAIL = "drops_tail"
    DROPS_SHARE = "drops_share"
    DROPS_ON_ADD = "drops_on_add"
    RENAME_LEFT = "rename_left"
    SITE_MISSED = "site_missed"
    VALUE_MISSED = "value_missed"
    OUTSIDE_NAMED = "outside_named"
    PLACE_MISSED = "place_missed"
    NAME_MISSING = "name_missing"
    UNBOUND = "unbound"
    PARAM_UNUSED = "param_unused"
    PARAM_DROPPED = "param_dropped"
    DEFINITION_GONE = "definition_gone"
    UNREAD = "unread"
    REMOVED = "removed"
    SYNTAX = "syntax"
    COMPILE = "compile"
    UNCHANGED = "unchanged"
    ENTRY_GONE = "entry_gone"
    OTHER_SECTION = "other_section"
    REVIEW = "review"
    """The model's own review leans to no (``app.edit.review``)."""


@dataclass(frozen=True)
class Suspect:
    """One check's verdict on a complete result: what it saw, and where."""

    reason: Verdict
    deleted_lines: int
    """Non-blank lines removed on balance (0 for the verdicts on what changed)."""
    message: str

    def to_json(self) -> dict:
        return {"reason": self.reason, "deletedLines": self.deleted_lines, "message": self.message}


def lines_said(hunks: Iterable) -> str:
    """The 1-based first lines of ``hunks`` (``app.code.diff.Hunk``), in words: "line 55", or
    "lines 2, 8" (five at most, then "…")."""
    changed = sorted({h.start_line + 1 for h in hunks})
    lines = ", ".join(map(str, changed[:5])) + (" …" if len(changed) > 5 else "")
    return f"line{'s' if len(changed) > 1 else ''} {lines}"
