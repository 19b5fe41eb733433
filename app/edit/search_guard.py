"""Search sides that cannot miss: inside a block's SEARCH side, the decoder may only copy the file.

Contract: ``SearchGuard(target, text, within=None)`` is an ``engine.constraint.Constraint`` for a
blocks answer (``app.edit.edits``; the output starts inside the first SEARCH side). While a SEARCH side
is written, ``allowed(out)`` admits only tokens whose bytes continue it as a copy of whole lines of
``text`` (from a line's start, or from its first character past the indent with the next lines
moved as far left), starting on a line inside ``within`` (0-based ``[start, end)`` ranges) if
given; and, at a line start after at least one line, the ``=======`` line that ends the side
(only that after ``MAX_LINES`` lines). The REPLACE side and everything between blocks are free.
So every SEARCH side is lines of the file; which lines, and how many, stay the model's choice.
``app.edit.rounds.retry_blocks`` guards the second answer only (why: ``docs/notes.md``). Tokens are
matched by their bytes (``app.runtime.copy_guard.pieces``); ``allowed`` is a pure function of ``out``
(memoized), so greedy guarded speculative output equals greedy guarded plain decoding.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..runtime.copy_guard import MAX_PIECE, pieces, remembered
from .edits import DIVIDER, REPLACE, SEARCH

MAX_LINES = 40
"""The most lines a SEARCH side may copy; then only the divider (a side copied on and on
would run the answer to its token limit)."""

_DIVIDER_LINE = (DIVIDER + "\n").encode()
_EQUALS = re.compile(rb"\n?=+\n?")


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" \t"))


class SearchGuard:
    """The ``Constraint`` of SEARCH sides (module docstring)."""

    def __init__(self, target, text: str, within: Sequence[tuple[int, int]] | None = None) -> None:
        self.table, self.index = pieces(target)
        data = text.encode()
        self.lines = data.split(b"\n")  # the last is b"" when the file ends with a newline
        self._ends_nl = data.endswith(b"\n")
        rows = range(len(self.lines) - self._ends_nl)
        if within is not None:  # a big file's windows: a side starts on one of their lines
            rows = [k for k in rows if any(a <= k < b for a, b in within)]
        # where a side may start: (line, shift), the line whole or past its indent
        self._starts = [(k, 0) for k in rows]
        self._starts += [
            (k, _indent(self.lines[k]))
            for k in rows
            if 0 < _indent(self.lines[k]) < len(self.lines[k])
        ]
        self._by_first: dict[bytes, list[tuple[int, int]]] = {}
        for k, d in self._starts:
            self._by_first.setdefault(self.lines[k][d:], []).append((k, d))
        self._first: np.ndarray | None = None
        self._memo: dict[tuple[int, ...], np.ndarray | None] = {}
        # tokens that may write (part of) the divider line: "=" runs, maybe with its newline,
        # maybe after the newline that ends the side's last line
        self._divider = [
            (b, i) for b, ids in self.index.items() if _EQUALS.fullmatch(b) for i in ids
        ]

    def allowed(self, out: Sequence[int]) -> np.ndarray | None:
        key = tuple(out)
        return remembered(
            self._memo, key, lambda: self._allowed(b"".join(self.table[t] for t in key))
        )

    def _allowed(self, text: bytes) -> np.ndarray | None:
        side = search_sides(text)[1]
        if side is None:
            return None
        if not side:
            return self._first_ids()
        *done, cur = side.split(b"\n")
        ids: set[int] = set()
        whole = False  # some copy's line ends where ``cur`` does
        if len(done) < MAX_LINES:
            if done:
                starts = self._by_first.get(done[0], ())
            else:
                starts = [(k, d) for k, d in self._starts if self.lines[k][d:].startswith(cur)]
            for k, d in starts:
                rest = self._rest(k, d, done)
                if rest is None or not rest.startswith(cur):
                    continue
                tail = rest[len(cur) :]
                whole = whole or (bool(cur) and tail[:1] == b"\n")
                for n in range(1, min(MAX_PIECE, len(tail)) + 1):
                    ids.update(self.index.get(tail[:n], ()))
        if done and _at_divider(cur):
            ids.update(i for b, i in self._divider if b[:1] != b"\n" and _at_divider(cur + b))
        if whole:  # the side's last line ends and the divider starts, in one token
            ids.update(i for b, i in self._divider if b[:1] == b"\n" and _at_divider(b[1:]))
        return np.array(sorted(ids), np.int64) if ids else None

    def _shifted(self, k: int, d: int) -> bytes | None:
        """File line ``k`` moved ``d`` columns left (None where its indent is shorter; a
        blank line is blank)."""
        if k >= len(self.lines) - self._ends_nl:
            return None
        line = self.lines[k]
        if not line[:d].strip(b" \t"):
            return line[d:]
        return b"" if not line.strip() else None

    def _rest(self, k: int, d: int, done: list[bytes]) -> bytes | None:
        """The text a side that started at (``k``, ``d``) and copied the lines ``done`` goes
        on with (at least ``MAX_PIECE`` bytes where the file has them), or None when
        ``done`` is not that copy."""
        for j, line in enumerate(done):
            if self._shifted(k + j, d) != line:
                return None
        out, j = b"", k + len(done)
        while len(out) <= MAX_PIECE and (line := self._shifted(j, d)) is not None:
            last = j == len(self.lines) - 1  # the file's last line, without its newline
            out += line + (b"" if last else b"\n")
            j += 1
        return out

    def _first_ids(self) -> np.ndarray:
        """The tokens a side may start with (computed once: every start of the file)."""
        if self._first is None:
            ids: set[int] = set()
            for k, d in self._starts:
                rest = self._rest(k, d, []) or b""
                for n in range(1, min(MAX_PIECE, len(rest)) + 1):
                    ids.update(self.index.get(rest[:n], ()))
            self._first = np.array(sorted(ids), np.int64)
        return self._first


def _at_divider(line: bytes) -> bool:
    return _DIVIDER_LINE.startswith(line)


def search_sides(text: bytes) -> tuple[list[bytes], bytes | None]:
    """The SEARCH sides of a blocks answer read as the guard reads them (``text`` starts after
    the prefill, which opened the first side): the sides closed by a divider line, and the side
    being written at the end of ``text`` (None when it ends elsewhere)."""
    state, start, offset, closed = "search", 0, 0, []
    search, divider, replace = (m.encode() for m in (SEARCH, DIVIDER, REPLACE))
    while (nl := text.find(b"\n", offset)) >= 0:
        line = text[offset:nl].strip()
        if state == "search" and line == divider:
            state = "replace"
            closed.append(text[start:offset])
        elif state == "replace" and line == replace:
            state = "between"
        elif state == "between" and line == search:
            state, start = "search", nl + 1
        offset = nl + 1
    return closed, (text[start:] if state == "search" else None)
