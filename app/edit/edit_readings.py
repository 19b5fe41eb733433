"""Readings of a search/replace block that is not a line-for-line copy of the file.

``app.edit.edits.place_blocks`` places a block by its lines; these read the blocks small models
write otherwise, each from the file's text alone. Contract:
  * ``patch(f, s, r)``: file line ``f`` with the character edits that turn the model's line
    ``s`` into ``r``, made where ``s``'s text sits in ``f`` (None when an edit falls where they
    differ);
  * ``unjoin(file, search, replace)``: a search line that is several file lines joined (an
    outline's signature) stands for them;
  * ``inline(file, search, replace, within)``: a one-line search side that is a piece of one
    file line; ``reflowed(...)``: one that is a sentence the file wraps over 2 to ``JOIN_LINES``;
  * ``made_already(file, lines, where)``: a block with the change on both sides, only like the
    file where it matched: the file's lines take its text.
Each but ``made_already`` returns None when its reading does not apply (the caller then reports
the block as not placed). ``indent(line)``: the width of a line's indent, for both modules.
"""

from __future__ import annotations

import difflib
import re

from ..code.diff import split_lines

JOIN_LINES = 8
"""The most file lines one line of a search side may stand for: a signature an outline shows
on one line (``unjoin``), a sentence the file wraps (``reflowed``)."""


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def patch(f: str, s: str, r: str) -> str | None:
    """File line ``f`` with the character edits that turn search line ``s`` into ``r``,
    made where ``s``'s text sits in ``f``; None when an edit falls where ``s`` and ``f``
    differ (it cannot be placed)."""
    nl = "\n" if f.endswith("\n") else ""
    f0, s0, r0 = f.rstrip("\r\n"), s.rstrip("\r\n"), r.rstrip("\r\n")
    # runs of at least 3 characters the search line and the file line share
    runs = [
        (a, b, n)
        for a, b, n in difflib.SequenceMatcher(None, s0, f0, autojunk=False).get_matching_blocks()
        if n >= 3
    ]
    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, s0, r0, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        # the text an edit replaces (or the point it inserts at) lies in one shared run
        run = next(((a, b) for a, b, n in runs if a <= i1 and i2 <= a + n), None)
        if run is None:
            return None
        a, b = run
        edits.append((b + i1 - a, b + i2 - a, r0[j1:j2]))
    for p1, p2, new in reversed(edits):
        f0 = f0[:p1] + new + f0[p2:]
    return f0 + nl


def _collapse(text: str) -> str:
    return re.sub(r"\s+", "", text)


def unjoin(file: list[str], search: list[str], replace: list[str]):
    """``search`` and ``replace`` with each search line that is several file lines joined
    on one (an outline shows a long signature so, and models copy it) replaced by those
    lines, and its replace line by them with its character edits; None when there is no
    such line, or one cannot be placed."""
    if len(search) != len(replace):
        return None
    have = {_collapse(f) for f in file}
    new_s, new_r, changed = [], [], False
    for s, r in zip(search, replace, strict=True):
        key = _collapse(s)
        hits = []
        if key and key not in have:
            for k in range(len(file)):
                joined = _collapse(file[k])
                if not joined:  # a group starts at a line with text
                    continue
                for n in range(2, JOIN_LINES + 1):
                    if k + n > len(file) or len(joined) >= len(key):
                        break
                    joined += _collapse(file[k + n - 1])
                    if joined == key:
                        hits.append((k, n))
                        break
        if len(hits) != 1:
            new_s.append(s)
            new_r.append(r)
            continue
        k, n = hits[0]
        patched = patch("".join(file[k : k + n]), s, r)
        if patched is None:
            return None
        new_s += file[k : k + n]
        new_r += split_lines(patched)
        changed = True
    return (new_s, new_r) if changed else None


def inline(
    file: list[str], search: list[str], replace: list[str], within
) -> tuple[int, int, str] | None:
    """A block whose two sides are one line each, the search side a piece of one file line
    (``quiet=False`` for the line ``def f(x, quiet=False):``; models write that): the
    replacement of that line, made where the piece is, when the piece is on exactly one
    line of the file (inside ``within``), once; else None."""
    if len(search) != 1 or len(replace) != 1:
        return None
    piece, new = search[0].strip(), replace[0].strip()
    if len(piece) < 3 or piece == new:
        return None
    hits = [
        k
        for k, f in enumerate(file)
        if piece in f and (within is None or any(a <= k < b for a, b in within))
    ]
    if len(hits) != 1 or file[hits[0]].count(piece) != 1:
        return None
    k = hits[0]
    return k, k + 1, file[k].replace(piece, new, 1)


def reflowed(
    file: list[str], search: list[str], replace: list[str], within
) -> tuple[int, int, str] | None:
    """A block whose two sides are one line each, the search side a piece of text the file
    wraps over several lines (a sentence of a Markdown paragraph; the 1.5B writes it on one
    line): those lines with the block's character edits, made where the piece is, when the
    piece (white space aside) is in exactly one smallest run of 2-8 lines (inside
    ``within``); else None."""
    if len(search) != 1 or len(replace) != 1:
        return None
    key = _collapse(search[0])
    if len(key) < 12 or key == _collapse(replace[0]):
        return None
    flat = [_collapse(f) for f in file]
    hits = []
    for k in range(len(file)):
        if not flat[k]:
            continue
        joined = flat[k]
        for n in range(2, JOIN_LINES + 1):
            if k + n > len(file) or (
                within is not None and not any(a <= k and k + n <= b for a, b in within)
            ):
                break
            joined += flat[k + n - 1]
            if key in joined:
                # the smallest run: it needs its first line and its last
                if (
                    key not in joined[len(flat[k]) :]
                    and key not in joined[: -len(flat[k + n - 1]) or None]
                ):
                    hits.append((k, n))
                break
    if len(hits) != 1:
        return None
    k, n = hits[0]
    patched = patch("".join(file[k : k + n]), search[0], replace[0])
    if patched is None:
        return None
    return k, k + n, patched


def made_already(file: list[str], lines: list[str], where: list[int]):
    """A block whose two sides are the same lines, only like the file's where they match:
    the model wrote the lines with the change made on both sides (small models do: the
    0.5B's "MAXLINESIZE = 72" for "= 76", twice). The file's lines take the block's text,
    at their own indentation, where they differ."""
    out = []
    for i, k in enumerate(where):
        if k < 0 or file[k].strip() == lines[i].strip():
            continue
        f = file[k]
        nl = f[len(f.rstrip("\r\n")) :]
        out.append((k, k + 1, f[: indent(f)] + lines[i].strip() + nl))
    return out
