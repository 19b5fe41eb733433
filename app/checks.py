"""Checks on a finished rewrite before it may be written: lines the model dropped.

A small model sometimes closes its block early: asked to rename a function it returns
the file without its last function, and the diff says "delete those lines". Nothing in
the output tells that apart from a wanted deletion except the instruction, so:

Contract:
  * ``suspect_deletion(old, new, instruction) -> Suspect | None`` flags a complete
    result that, when ``instruction`` does not ask for anything to be removed
    (``asks_removal``), either
      - deletes a trailing block: its last hunk runs to the end of ``old`` and removes
        more non-blank lines than it adds: at least ``TAIL_LINES``, or at least
        ``TAIL_SHARE`` of ``old``'s non-blank lines (a two-line function at the end of a
        six-line file) (``drops_tail``), or
      - deletes a large share: on balance at least ``SHARE`` of ``old``'s non-blank
        lines, and at least ``MIN_SHARE_LINES`` of them, are gone (``drops_share``).
  * ``Suspect.message`` is one line for any front end; ``to_json`` is the wire form
    (``rewrite/done.suspect``). Front ends show it and refuse to write or apply the
    result unless the user forces it.
A cut result (no closing fence) is never written at all: that is the rewrite's
``truncated`` status, not a check here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .diff import compute_hunks, split_lines

TAIL_LINES = 3
TAIL_SHARE = 0.2
SHARE = 0.3
MIN_SHARE_LINES = 5

_REMOVAL = re.compile(
    r"\b(remov\w*|delet\w*|drop\w*|strip\w*|cut|trim\w*|eras\w*|eliminat\w*|get rid|"
    r"shorten\w*|condens\w*|dedup\w*|minif\w*|prun\w*|keep only|only keep|without|"
    r"clean(?:s|ed|ing)?[ -]?up)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Suspect:
    """Why a complete result looks like lost lines rather than the edit asked for."""

    reason: str
    """``drops_tail`` or ``drops_share``."""
    deleted_lines: int
    """Non-blank lines removed on balance."""
    message: str

    def to_json(self) -> dict:
        return {"reason": self.reason, "deletedLines": self.deleted_lines, "message": self.message}


def asks_removal(instruction: str) -> bool:
    """True when the instruction asks for something to be removed or shortened."""
    return _REMOVAL.search(instruction) is not None


def _nonblank(text: str) -> int:
    return sum(1 for line in split_lines(text) if line.strip())


def suspect_deletion(old: str, new: str, instruction: str) -> Suspect | None:
    """The ``Suspect`` for a result that drops lines the instruction did not ask to remove."""
    if asks_removal(instruction):
        return None
    hunks = compute_hunks(old, new)
    if not hunks:
        return None
    n_old, total = len(split_lines(old)), _nonblank(old)
    last = hunks[-1]
    tail = _nonblank(last.old_text) - _nonblank(last.new_text)
    if last.end_line == n_old and tail > 0 and (tail >= TAIL_LINES or tail >= TAIL_SHARE * total):
        return Suspect(
            "drops_tail",
            tail,
            f"the result deletes the last {tail} non-blank lines, which the instruction did "
            "not ask to remove (the model may have stopped early)",
        )
    lost = sum(_nonblank(h.old_text) - _nonblank(h.new_text) for h in hunks)
    if lost >= MIN_SHARE_LINES and total and lost >= SHARE * total:
        return Suspect(
            "drops_share",
            lost,
            f"the result deletes {lost} of {total} non-blank lines ({lost / total:.0%}), "
            "which the instruction did not ask to remove",
        )
    return None
