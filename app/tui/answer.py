"""An answer about the files, laid out for the terminal: its quotes marked, each with its verdict.

Contract: ``answer_rows(text, citations)`` is pure (no Textual): every line of ``text`` once, in
order, as a :class:`Row` of kind ``prose``, ``cite`` (a line that is only a citation tag) or
``quote`` (a quoted passage, its fences included; ``app.answer.quotes`` says what a passage is), with a
``verdict`` row after each quote for the citation that checked it (``citations`` from
``app.answer.quotes.check_citations`` on the same text). A citation whose quote is a string on a prose
line gets its verdict after that line, the string marked (``Row.mark``); one that quotes nothing,
after its tag; one placed nowhere, at the end. A quote row's ``ok`` is its citation's verdict.
A verdict is ``Citation.verdict()``, worded as every interface words it.
``summary(citations)`` is one line: ``3 quotes, all
found``, ``1 of 3 not found``, or that nothing is checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..answer.quotes import CITE_RE, NO_QUOTES, Citation, fenced_passages


@dataclass(frozen=True)
class Row:
    """One line of the answer view."""

    kind: str
    """``prose``, ``cite``, ``quote`` or ``verdict``."""
    text: str
    ok: bool | None = None
    """The verdict of a ``quote`` or ``verdict`` row (None elsewhere)."""
    mark: tuple[int, int] | None = None
    """A quoted string inside a prose line: [start, end) columns."""


def summary(citations: Sequence[Citation]) -> str:
    """``3 quotes, all found`` / ``1 of 3 not found`` / nothing checked."""
    n = len(citations)
    if not n:
        return NO_QUOTES
    missing = sum(not c.found for c in citations)
    if missing:
        return f"{missing} of {n} not found"
    return "1 quote, found" if n == 1 else f"{n} quotes, all found"


def answer_rows(text: str, citations: Sequence[Citation]) -> list[Row]:
    """The answer's lines with each citation's verdict placed (see the module docstring)."""
    lines = text.splitlines()
    passages = fenced_passages(lines)
    inside = {n for p in passages for n in range(p.first, p.last + 1)}
    after: dict[int, list[Citation]] = {}  # answer line -> the verdicts shown after it
    ok_of: dict[int, bool] = {}  # a passage's first line -> its verdict
    marks: dict[int, tuple[int, int]] = {}
    unplaced: list[Citation] = []
    used: set[int] = set()
    cursor = 0  # citations come in the answer's order: search on from the last one placed
    for c in citations:
        at = _place(c, lines, passages, inside, used, marks, cursor)
        if at is None:
            unplaced.append(c)
            continue
        line, first = at
        if first is not None:
            used.add(first)
            ok_of[first] = c.found
        after.setdefault(line, []).append(c)
        cursor = first if first is not None else line
    rows: list[Row] = []
    passage_of = {n: p.first for p in passages for n in range(p.first, p.last + 1)}
    for n, line in enumerate(lines):
        if n in inside:
            rows.append(Row("quote", line, ok_of.get(passage_of[n])))
        elif CITE_RE.fullmatch(line.strip().rstrip(":")):
            rows.append(Row("cite", line))
        else:
            rows.append(Row("prose", line, mark=marks.get(n)))
        rows += [Row("verdict", c.verdict(), c.found) for c in after.get(n, ())]
    rows += [Row("verdict", c.verdict(), c.found) for c in unplaced]
    return rows


def _place(c, lines, passages, inside, used, marks, cursor) -> tuple[int, int | None] | None:
    """(the line after which ``c``'s verdict goes, its passage's first line or None)."""
    if c.quote:
        for p in passages:
            if p.first not in used and p.text == c.quote and p.last >= cursor:
                return p.last, p.first
        for n in range(cursor, len(lines)):
            col = lines[n].find(c.quote) if n not in inside else -1
            if col >= 0 and n not in marks:
                marks[n] = (col, col + len(c.quote))
                return n, None
    tag = f"[{c.file}" if c.file else None
    for n in range(cursor, len(lines)):
        if tag and n not in inside and tag in lines[n]:
            return n, None
    return None
