"""Hunk-by-hunk review state and the rows of the diff view.

Contract: :func:`diff_rows` lays out ``old`` with ``hunks`` (from ``app.code.diff``) as display
rows: unchanged lines, then for each hunk its removed (``-``) and added (``+``) lines,
each row carrying its 1-based old/new line numbers and hunk index. :class:`Review` keeps
one decision per hunk (pending, accepted, rejected), a current hunk, and produces the
text to write with ``app.code.diff.apply_hunks`` (the same function the CLI and the server
use): accepted hunks applied to the original, everything else left byte-identical.
Every decision (one hunk, all accepted, all rejected) can be undone, most recent first.
A *partial* review (a cut or cancelled output: only the hunks completed before the cut)
refuses accept-all: its hunks are kept one by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..code.diff import Hunk, apply_hunks, split_lines


@dataclass(frozen=True)
class Row:
    """One line of the diff view."""

    kind: str
    """' ' unchanged, '-' removed, '+' added."""
    old_no: int | None
    new_no: int | None
    text: str
    """The line without its newline."""
    hunk: int | None = None
    """Index of the hunk this row belongs to."""


def diff_rows(old: str, hunks: Sequence[Hunk]) -> list[Row]:
    """Display rows of ``old`` with ``hunks`` applied (see module docstring)."""
    lines = split_lines(old)
    rows: list[Row] = []
    i = 0  # next old line (0-based)
    new_no = 1
    for idx, h in enumerate(hunks):
        for line in lines[i : h.start_line]:
            rows.append(Row(" ", i + 1, new_no, line.rstrip("\n")))
            i += 1
            new_no += 1
        for k, line in enumerate(split_lines(h.old_text)):
            rows.append(Row("-", h.start_line + k + 1, None, line.rstrip("\n"), idx))
        for line in split_lines(h.new_text):
            rows.append(Row("+", None, new_no, line.rstrip("\n"), idx))
            new_no += 1
        i = h.end_line
    for line in lines[i:]:
        rows.append(Row(" ", i + 1, new_no, line.rstrip("\n")))
        i += 1
        new_no += 1
    return rows


def first_row_of(rows: Sequence[Row], hunk: int) -> int:
    """Row index where hunk ``hunk`` starts (0 if absent)."""
    return next((n for n, r in enumerate(rows) if r.hunk == hunk), 0)


def row_of_new_line(rows: Sequence[Row], new_line: int) -> int:
    """Row index showing new line ``new_line`` (0-based), or the last row."""
    want = new_line + 1
    for n, r in enumerate(rows):
        if r.new_no is not None and r.new_no >= want:
            return n
    return max(len(rows) - 1, 0)


class Review:
    """Decisions on the hunks of one rewrite result."""

    def __init__(self, original: str, hunks: Sequence[Hunk], *, partial: bool = False) -> None:
        self.original = original
        self.hunks = list(hunks)
        self.partial = partial
        """Only the hunks completed before the output stopped: no accept-all."""
        self.decisions: list[bool | None] = [None] * len(self.hunks)
        self.current = 0
        self._undo: list[tuple[list[bool | None], int]] = []

    def __len__(self) -> int:
        return len(self.hunks)

    def next(self) -> None:
        if self.hunks:
            self.current = min(self.current + 1, len(self.hunks) - 1)

    def prev(self) -> None:
        self.current = max(self.current - 1, 0)

    def _remember(self) -> None:
        self._undo.append((list(self.decisions), self.current))

    def undo(self) -> bool:
        """Take back the last decision (and go back to its hunk); False if none is left."""
        if not self._undo:
            return False
        self.decisions, self.current = self._undo.pop()
        return True

    def _decide(self, value: bool) -> None:
        if not self.hunks:
            return
        self._remember()
        self.decisions[self.current] = value
        # move on to the next undecided hunk, like `git add -p`
        after = [i for i in range(self.current + 1, len(self.hunks)) if self.decisions[i] is None]
        if after:
            self.current = after[0]

    def accept(self) -> None:
        self._decide(True)

    def reject(self) -> None:
        self._decide(False)

    def accept_all(self) -> bool:
        """Accept every hunk; False (and nothing changes) for a partial review."""
        if self.partial or not self.hunks:
            return False
        self._remember()
        self.decisions = [True] * len(self.hunks)
        return True

    def reject_all(self) -> None:
        if self.hunks:
            self._remember()
            self.decisions = [False] * len(self.hunks)

    def accepted(self) -> list[Hunk]:
        return [h for h, d in zip(self.hunks, self.decisions, strict=True) if d]

    def counts(self) -> tuple[int, int, int]:
        """(accepted, rejected, pending)."""
        acc = sum(1 for d in self.decisions if d is True)
        rej = sum(1 for d in self.decisions if d is False)
        return acc, rej, len(self.hunks) - acc - rej

    def result_text(self) -> str:
        """The original with the accepted hunks applied."""
        return apply_hunks(self.original, self.accepted())

    def summary(self) -> str:
        acc, rej, pend = self.counts()
        if not self.hunks:
            return "no changes"
        return (
            f"hunk {self.current + 1}/{len(self.hunks)}: {acc} accepted, "
            f"{rej} rejected, {pend} pending"
        )
