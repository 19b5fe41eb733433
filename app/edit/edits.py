"""The edit format: search/replace blocks, read from the model's output and placed in the file.

The model writes only what changes, as blocks in one fenced code block: ``<<<<<<< SEARCH``,
lines copied from the file, ``=======``, the new lines, ``>>>>>>> REPLACE``. Contract:
  * ``FORMAT`` is the one text that asks for the format (``app.runtime.prompt`` puts it after the
    instruction); ``PREFILL`` opens the assistant turn, so the output starts in a search side.
  * ``parse_blocks(body, file=None) -> Parsed``: the complete ``blocks`` of a stream body,
    ``complete`` (only white space, or lines still copying ``file``, follows), ``problem``.
  * ``place_blocks(text, blocks, within=, prefer=) -> list[Hunk]``: each block found in ``text``
    (inside the ranges ``within``; a repeated match goes to the one after the previous block or
    inside ``prefer``) at the first level that matches: exact, trailing white space ignored,
    indentation shifted, similar lines (``FUZZY_LINE``, ``FUZZY_MEAN``). Hunks change only the
    lines that differ between a block's sides. ``EditError`` (one line) when a block cannot be
    placed or two overlap. ``apply_blocks(text, blocks) -> str``: all or none.
  * ``broken(stream)``: a problem no more text can mend; ``has_markers(text)``: marker lines.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from ..code.diff import Hunk, apply_hunks, split_lines
from .edit_readings import indent as _indent
from .edit_readings import inline, made_already, patch, reflowed, unjoin

SEARCH, DIVIDER, REPLACE = "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"
PREFILL = SEARCH + "\n"
FORMAT = (
    "Do not write the whole file. Write only the lines that change, as search/replace "
    f"blocks in one code block. A block is: a line {SEARCH}; the lines to change, copied "
    "exactly as they are in the file now, with their indentation; a line "
    f"{DIVIDER}; the same lines as they must become; a line {REPLACE}. Write one block "
    "for each place that changes, in the order of the file, then close the code block."
)

_MARKER = re.compile(r"^[ \t]*(<{7} SEARCH|={7}|>{7} REPLACE)[ \t]*$", re.MULTILINE)


class Miss(Enum):
    """Why a block cannot be placed (``EditError.miss``): what a retry's hint is chosen by."""

    EMPTY = "empty"
    """Its SEARCH side has no text."""
    AMBIGUOUS = "ambiguous"
    """Its SEARCH side is found, or about as like, in several places."""
    NOT_FOUND = "not_found"
    """Its SEARCH lines are not in the file."""
    DIFFERS = "differs"
    """A line of its SEARCH side differs from the file's line it stands for."""
    OVERLAP = "overlap"
    """Two blocks change the same lines."""


class EditError(ValueError):
    """A block that cannot be placed in the file; the message is one line, ``miss`` says
    which kind of failure it is."""

    def __init__(self, message: str, miss: Miss) -> None:
        super().__init__(message)
        self.miss = miss


@dataclass(frozen=True)
class Block:
    """One search/replace block: ``search`` lines of the file become ``replace``."""

    search: str
    replace: str


@dataclass(frozen=True)
class Parsed:
    blocks: tuple[Block, ...]
    complete: bool
    """True when the stream ended between blocks (nothing but white space after the last)."""
    problem: str = ""
    """Why the stream is not a sequence of complete blocks ("" when it is)."""
    broken: bool = False
    """The problem is one no more text can mend (a marker out of place): ``broken`` stops a
    stream that has one."""


def broken(stream: str) -> str:
    """The problem of a blocks answer being written (``PREFILL`` excluded), read up to its
    last complete line, when no more text can mend it ("" otherwise): a model that
    writes ``=======`` over and over (the 0.5B does) is stopped at once."""
    done = stream[: stream.rfind("\n") + 1]
    parsed = parse_blocks(PREFILL + done)
    return parsed.problem if parsed.broken else ""


def has_markers(text: str) -> bool:
    """True when ``text`` holds a line that reads as a block marker."""
    return _MARKER.search(text) is not None


def _is(line: str, marker: str) -> bool:
    return line.strip() == marker


def _copies(rest: list[str], file: str) -> bool:
    """True when the non-blank lines of ``rest`` are consecutive non-blank lines of ``file``,
    white space aside: a model that went on copying the file after its last block."""
    want = [x.strip() for x in rest if x.strip()]
    have = [x.strip() for x in split_lines(file) if x.strip()]
    n = len(want)
    return n > 0 and any(have[i : i + n] == want for i in range(len(have) - n + 1))


def parse_blocks(body: str, file: str | None = None) -> Parsed:
    """The blocks of ``body`` (module docstring); ``body`` starts with ``PREFILL``'s marker.
    Given the ``file``, lines after the last complete block that go on copying it (the 1.5B
    writes a method's next lines after its ``>>>>>>> REPLACE``) end the answer there."""
    blocks: list[Block] = []
    state, search, replace = "between", [], []
    lines = split_lines(body)
    for at, line in enumerate(lines):
        if state == "between":
            if _is(line, SEARCH):
                state, search, replace = "search", [], []
            elif line.strip():
                if blocks and file is not None and _copies(lines[at:], file):
                    return Parsed(tuple(blocks), True)
                return Parsed(tuple(blocks), False, f"text outside a block: {line.strip()[:60]!r}")
        elif state == "search":
            if _is(line, DIVIDER):
                state = "replace"
            elif line.startswith(DIVIDER) and not line.startswith(DIVIDER + "="):
                # the first new line written on the divider's line: indented like the
                # first line of the search side
                state = "replace"
                first = next((x for x in search if x.strip()), "")
                replace.append(first[: _indent(first)] + line[len(DIVIDER) :].lstrip(" \t"))
            elif _is(line, SEARCH) or _is(line, REPLACE):
                return Parsed(tuple(blocks), False, "a block without its ======= line", True)
            else:
                search.append(line)
        elif _is(line, REPLACE):
            if replace and not replace[0].strip() and search and search[0].strip():
                replace = replace[1:]  # a blank line after ======= (both models write one)
            blocks.append(Block("".join(search), "".join(replace)))
            state = "between"
        elif _is(line, SEARCH) or _is(line, DIVIDER):
            return Parsed(tuple(blocks), False, "a block without its >>>>>>> REPLACE line", True)
        else:
            replace.append(line)
    if state != "between":
        return Parsed(tuple(blocks), False, "the last block is incomplete")
    if not blocks:
        return Parsed((), False, "no block")
    return Parsed(tuple(blocks), True)


# ---- placement -------------------------------------------------------------------------


def _body(line: str) -> str:
    return line.rstrip("\r\n")


FUZZY_LINE = 0.6
"""At the fuzzy level, every non-blank search line is at least this similar to its file
line (``difflib`` ratio of the stripped lines) ..."""
FUZZY_MEAN = 0.8
"""... and on average this similar."""


def _similar(a: str, b: str) -> float:
    a, b = a.strip(), b.strip()
    if a == b:
        return 1.0
    m = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return m.ratio() if m.real_quick_ratio() >= FUZZY_LINE else 0.0


def _match_at(
    file: list[str], search: list[str], i: int, level: int
) -> tuple[list[int], float] | None:
    """File line of each search line when ``search`` matches ``file`` from line ``i`` at
    ``level`` (0 exact, 1 trailing white space ignored, 2 shifted indentation and blank
    lines skipped: blank search lines map to -1, 3 as 2 with similar lines), and the mean
    similarity, else None."""
    if level < 2:
        if i + len(search) > len(file):
            return None
        norm = _body if level == 0 else str.rstrip
        for j, s in enumerate(search):
            if norm(file[i + j]) != norm(s):
                return None
        return list(range(i, i + len(search))), 1.0
    out, k, shift, score, n = [], i, None, 0.0, 0
    for s in search:
        if not s.strip():
            out.append(-1)
            continue
        while k < len(file) and not file[k].strip():
            k += 1
        if k >= len(file):
            return None
        if level == 2:
            if file[k].strip() != s.strip():
                return None
            d = _indent(file[k]) - _indent(s)
            if shift is None:
                shift = d
            elif d != shift:
                return None
            sim = 1.0
        else:
            sim = _similar(file[k], s)
            if sim < FUZZY_LINE:
                return None
        out.append(k)
        score, n = score + sim, n + 1
        k += 1
    return out, score / max(n, 1)


Ranges = Sequence[tuple[int, int]] | None


def _inside(got: tuple[list[int], float], ranges: Ranges) -> bool:
    used = [x for x in got[0] if x >= 0]
    return ranges is None or any(a <= used[0] and used[-1] < b for a, b in ranges)


def _find(
    file: list[str], search: list[str], after: int, within: Ranges, prefer: Ranges = None
) -> tuple[list[int], bool]:
    """The alignment of ``search`` in ``file`` (module docstring), and whether it is only
    similar (the fuzzy level); of several places, those inside ``prefer`` win."""
    if not any(s.strip() for s in search):
        raise EditError("its SEARCH side is empty", Miss.EMPTY)
    first = next(j for j, s in enumerate(search) if s.strip())
    for level in (0, 1, 2, 3):
        hits: list[tuple[list[int], float]] = []
        for i in range(len(file)):
            got = _match_at(file, search, i, level)
            if got is None or (level >= 2 and got[0][first] != i):
                continue
            if _inside(got, within):
                hits.append(got)
        if level == 3:  # only a best match counts, and only when no other comes close
            best = max((sc for _, sc in hits), default=0.0)
            hits = [h for h in hits if h[1] >= best - 0.02]
        if prefer is not None and len(hits) > 1:
            hits = [h for h in hits if _inside(h, prefer)] or hits
        if level == 3:
            if best < FUZZY_MEAN:
                hits = []
            elif len(hits) > 1:
                raise EditError(
                    f"its SEARCH lines are about as like {len(hits)} places", Miss.AMBIGUOUS
                )
        if not hits:
            continue
        later = [h for h in hits if min(x for x in h[0] if x >= 0) >= after]
        if len(hits) > 1 and not later:
            raise EditError(
                f"its SEARCH side occurs {len(hits)} times, none after the last", Miss.AMBIGUOUS
            )
        return (later or hits)[0][0], level == 3
    raise EditError("its SEARCH lines are not in the file", Miss.NOT_FOUND)


def _reindent(line: str, shift: int) -> str:
    if shift > 0 and line.strip():
        return line[: _indent(line)] + " " * shift + line[_indent(line) :]
    if shift < 0 and line.strip():
        cut = min(-shift, _indent(line))
        return line[cut:]
    return line


def _line_pair(f: str, s: str, r: str) -> str | None:
    """What file line ``f`` becomes when search line ``s`` (matched to it) becomes ``r``."""
    if f.strip() == s.strip():  # the same line, maybe shifted: shift the new one alike
        new = _reindent(r, _indent(f) - _indent(s))
    else:
        new = patch(f, s, r)
    if new is not None and not f.endswith("\n"):  # the file's last line, without newline
        new = new.rstrip("\n")
    return new


def _block_hunks(
    file: list[str], block: Block, after: int, within: Ranges, prefer: Ranges = None
) -> tuple[list[tuple[int, int, str]], int]:
    """(start, end, new text) replacements in ``file`` for one block (module docstring), and
    the line after the block's match."""
    search, replace = split_lines(block.search), split_lines(block.replace)
    try:
        where, fuzzy = _find(file, search, after, within, prefer)
    except EditError:
        piece = inline(file, search, replace, within) or reflowed(file, search, replace, within)
        if piece is not None:
            return [piece], piece[1]
        unjoined = unjoin(file, search, replace)
        if unjoined is None:
            raise
        search, replace = unjoined
        where, fuzzy = _find(file, search, after, within, prefer)
    if fuzzy and search == replace:
        return made_already(file, search, where), max(where) + 1
    first = next(i for i in where if i >= 0)
    shift = _indent(file[first]) - _indent(search[where.index(first)])
    out = []
    ops = difflib.SequenceMatcher(None, search, replace, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        mapped = [where[i] for i in range(i1, i2) if where[i] >= 0]
        if tag == "replace" and i2 - i1 == j2 - j1 and len(mapped) == i2 - i1:
            # line for line: each file line takes its own line's change
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                new = _line_pair(file[where[i]], search[i], replace[j])
                if new is None:
                    raise EditError(
                        f"its line {search[i].strip()[:50]!r} differs from the file's",
                        Miss.DIFFERS,
                    )
                out.append((where[i], where[i] + 1, new))
            continue
        if fuzzy and any(
            file[where[i]].strip() != search[i].strip() for i in range(i1, i2) if where[i] >= 0
        ):
            raise EditError(
                "its SEARCH lines are only like the file's where lines change", Miss.DIFFERS
            )
        new = "".join(_reindent(x, shift) for x in replace[j1:j2])
        if mapped:
            start, end = mapped[0], mapped[-1] + 1
        else:  # an insertion (or blank lines the file lacks): after the line before it
            prev = [where[i] for i in range(i1) if where[i] >= 0]
            start = end = prev[-1] + 1 if prev else first
        if end == len(file) and not file[-1].endswith("\n"):
            # the file's last line has no newline: neither has the text that replaces it
            new = new[:-1] if start < end and new.endswith("\n") else new
            if start == end and new:
                new = "\n" + new.rstrip("\n")
        out.append((start, end, new))
    return out, max(where) + 1


def place_blocks(
    text: str, blocks: Sequence[Block], within: Ranges = None, prefer: Ranges = None
) -> list[Hunk]:
    """The hunks that apply ``blocks`` to ``text`` (module docstring); with ``within``, a
    block is placed only inside one of those 0-based ``[start, end)`` line ranges; with
    ``prefer``, a block whose SEARCH side is found in several places goes to those inside
    these ranges (the definitions the instruction names)."""
    file = split_lines(text)
    found: list[tuple[int, int, str]] = []
    after = 0
    for n, block in enumerate(blocks, start=1):
        try:
            parts, after = _block_hunks(file, block, after, within, prefer)
        except EditError as e:
            raise EditError(f"block {n} of {len(blocks)} cannot be placed: {e}", e.miss) from None
        found += parts
    found.sort(key=lambda p: (p[0], p[1]))
    hunks: list[Hunk] = []
    for s, e, new in found:
        prev = hunks[-1] if hunks else None
        if prev and (s < prev.end_line or s == e == prev.start_line == prev.end_line):
            raise EditError("two blocks change the same lines", Miss.OVERLAP)
        old = "".join(file[s:e])
        if new != old:
            hunks.append(Hunk(len(hunks), s, e, old, new))
    return hunks


def apply_blocks(text: str, blocks: Sequence[Block]) -> str:
    """``text`` with every block applied (raises ``EditError``; never half-applied)."""
    return apply_hunks(text, place_blocks(text, blocks))
