"""The edit format: search/replace blocks, read from the model's output and placed in the file.

The model writes only what changes, as blocks in one fenced code block::

    <<<<<<< SEARCH
    lines copied from the file
    =======
    the new lines
    >>>>>>> REPLACE

The search side is a copy from the file, which prompt lookup drafts nearly for free; the
replace side is mostly a copy of the search side. Text that is not generated cannot be
corrupted: only the lines that differ between the two sides change in the file.

Contract:
  * ``FORMAT`` is the one text that asks for the format (``app.prompt.edit_prompt`` puts
    it after the file and the instruction); ``PREFILL`` opens the assistant turn (after
    the fence), so the output starts inside the first block's search side.
  * ``parse_blocks(body) -> Parsed``: the complete ``Block``\\ s of a stream body (the
    prefill included), whether the text after the last one is only white space
    (``complete``), and what went wrong, if anything (``problem``).
  * ``place_blocks(text, blocks) -> list[Hunk]``: each block found in ``text``, whitespace
    tolerantly (exact lines, then trailing white space ignored, then indentation shifted
    consistently and blank lines skipped), the first match at or after the previous
    block when the search side occurs more than once. The hunks change only the lines
    that differ between a block's search and replace sides (re-indented by the block's
    shift), in ``text``'s line numbers; lines the model merely mis-copied stay as they
    are. Raises ``EditError`` (one line naming the block and why) when a block cannot be
    placed or two blocks overlap; nothing is ever half-applied.
  * ``apply_blocks(text, blocks) -> str``: the new text, all blocks or none.
  * ``has_markers(text)``: True when a file has marker lines of its own (then the format
    would be ambiguous and the caller rewrites the whole file).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .diff import Hunk, apply_hunks, split_lines

SEARCH, DIVIDER, REPLACE = "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"
PREFILL = SEARCH + "\n"
FORMAT = (
    "Do not write the whole file. Write only the lines that change, as search/replace "
    "blocks in one code block:\n"
    f"{SEARCH}\n"
    "lines copied exactly from the file, just enough to find the place\n"
    f"{DIVIDER}\n"
    "the same lines as they must become\n"
    f"{REPLACE}\n"
    "Use one block per place that changes, in the order of the file, then close the code "
    "block."
)

_MARKER = re.compile(r"^[ \t]*(<{7} SEARCH|={7}|>{7} REPLACE)[ \t]*$", re.MULTILINE)


class EditError(ValueError):
    """A block that cannot be placed in the file; the message is one line."""


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


def has_markers(text: str) -> bool:
    """True when ``text`` holds a line that reads as a block marker."""
    return _MARKER.search(text) is not None


def _is(line: str, marker: str) -> bool:
    return line.strip() == marker


def parse_blocks(body: str) -> Parsed:
    """The blocks of ``body`` (module docstring); ``body`` starts with ``PREFILL``'s marker."""
    blocks: list[Block] = []
    state, search, replace = "between", [], []
    for line in split_lines(body):
        if state == "between":
            if _is(line, SEARCH):
                state, search, replace = "search", [], []
            elif line.strip():
                return Parsed(tuple(blocks), False, f"text outside a block: {line.strip()[:60]!r}")
        elif state == "search":
            if _is(line, DIVIDER):
                state = "replace"
            elif _is(line, SEARCH) or _is(line, REPLACE):
                return Parsed(tuple(blocks), False, "a block without its ======= line")
            else:
                search.append(line)
        elif _is(line, REPLACE):
            blocks.append(Block("".join(search), "".join(replace)))
            state = "between"
        elif _is(line, SEARCH) or _is(line, DIVIDER):
            return Parsed(tuple(blocks), False, "a block without its >>>>>>> REPLACE line")
        else:
            replace.append(line)
    if state != "between":
        return Parsed(tuple(blocks), False, "the last block is incomplete")
    if not blocks:
        return Parsed((), False, "no block")
    return Parsed(tuple(blocks), True)


# ---- placement -------------------------------------------------------------------------


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _body(line: str) -> str:
    return line.rstrip("\r\n")


def _match_at(file: list[str], search: list[str], i: int, level: int) -> list[int] | None:
    """File line of each search line when ``search`` matches ``file`` from line ``i`` at
    ``level`` (0 exact, 1 trailing white space ignored, 2 shifted indentation and blank
    lines skipped: blank search lines map to -1), else None."""
    if level < 2:
        if i + len(search) > len(file):
            return None
        norm = _body if level == 0 else str.rstrip
        for j, s in enumerate(search):
            if norm(file[i + j]) != norm(s):
                return None
        return list(range(i, i + len(search)))
    out, k, shift = [], i, None
    for s in search:
        if not s.strip():
            out.append(-1)
            continue
        while k < len(file) and not file[k].strip():
            k += 1
        if k >= len(file) or file[k].strip() != s.strip():
            return None
        d = _indent(file[k]) - _indent(s)
        if shift is None:
            shift = d
        elif d != shift:
            return None
        out.append(k)
        k += 1
    return out


def _find(
    file: list[str], search: list[str], after: int, within: Sequence[tuple[int, int]] | None
) -> tuple[list[int], int]:
    """The alignment of ``search`` in ``file`` and the indentation shift (module docstring)."""
    if not any(s.strip() for s in search):
        raise EditError("its SEARCH side is empty")
    first = next(j for j, s in enumerate(search) if s.strip())
    for level in (0, 1, 2):
        hits = []
        for i in range(len(file)):
            got = _match_at(file, search, i, level)
            if got is None or (level == 2 and got[first] != i):
                continue
            used = [x for x in got if x >= 0]
            if within is None or any(a <= used[0] and used[-1] < b for a, b in within):
                hits.append(got)
        if not hits:
            continue
        later = [h for h in hits if min(x for x in h if x >= 0) >= after]
        if len(hits) > 1 and not later:
            raise EditError(f"its SEARCH side occurs {len(hits)} times, none after the last")
        got = (later or hits)[0]
        shift = _indent(file[got[first]]) - _indent(search[first])
        return got, shift
    raise EditError("its SEARCH lines are not in the file")


def _reindent(line: str, shift: int) -> str:
    if shift > 0 and line.strip():
        return line[: _indent(line)] + " " * shift + line[_indent(line) :]
    if shift < 0 and line.strip():
        cut = min(-shift, _indent(line))
        return line[cut:]
    return line


def _block_hunks(
    file: list[str], block: Block, after: int, within: Sequence[tuple[int, int]] | None
) -> tuple[list[tuple[int, int, str]], int]:
    """(start, end, new text) replacements in ``file`` for one block (module docstring), and
    the line after the block's match."""
    search, replace = split_lines(block.search), split_lines(block.replace)
    where, shift = _find(file, search, after, within)
    out = []
    ops = difflib.SequenceMatcher(None, search, replace, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        new = "".join(_reindent(x, shift) for x in replace[j1:j2])
        mapped = [where[i] for i in range(i1, i2) if where[i] >= 0]
        if mapped:
            start, end = mapped[0], mapped[-1] + 1
        else:  # an insertion (or blank lines the file lacks): after the line before it
            prev = [where[i] for i in range(i1) if where[i] >= 0]
            start = end = prev[-1] + 1 if prev else min(x for x in where if x >= 0)
        if end == len(file) and not file[-1].endswith("\n"):
            # the file's last line has no newline: neither has the text that replaces it
            new = new[:-1] if start < end and new.endswith("\n") else new
            if start == end and new:
                new = "\n" + new.rstrip("\n")
        out.append((start, end, new))
    return out, max(where) + 1


def place_blocks(
    text: str,
    blocks: Sequence[Block],
    within: Sequence[tuple[int, int]] | None = None,
) -> list[Hunk]:
    """The hunks that apply ``blocks`` to ``text`` (module docstring); with ``within``, a
    block is placed only inside one of those 0-based ``[start, end)`` line ranges."""
    file = split_lines(text)
    found: list[tuple[int, int, str]] = []
    after = 0
    for n, block in enumerate(blocks, start=1):
        try:
            parts, after = _block_hunks(file, block, after, within)
        except EditError as e:
            raise EditError(f"block {n} of {len(blocks)} cannot be placed: {e}") from None
        found += parts
    found.sort(key=lambda p: (p[0], p[1]))
    hunks: list[Hunk] = []
    for s, e, new in found:
        prev = hunks[-1] if hunks else None
        if prev and (s < prev.end_line or s == e == prev.start_line == prev.end_line):
            raise EditError("two blocks change the same lines")
        old = "".join(file[s:e])
        if new != old:
            hunks.append(Hunk(len(hunks), s, e, old, new))
    return hunks


def apply_blocks(text: str, blocks: Sequence[Block]) -> str:
    """``text`` with every block applied (raises ``EditError``; never half-applied)."""
    return apply_hunks(text, place_blocks(text, blocks))
