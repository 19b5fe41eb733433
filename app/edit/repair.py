"""Fidelity repairs of a model's answer: copies put back where the model mis-copied them.

A repair reads neither the instruction nor any guess about what was asked: it only puts back text
the answer was meant to copy and copied with a fault a change of meaning never makes.

Contract: ``repair(old, new, path) -> (text, labels)`` runs, in order:
  * ``keep_copies`` (``copies``): a changed line equal to an original one but for white space
    takes the original (a Python statement's first line keeps the model's indentation); a line
    that is 2-4 original lines joined takes those lines;
  * ``keep_blank_lines`` (``blank_lines``): blank lines of the original the result dropped where
    it copied or changed the lines around them are put back;
  * ``mend_commas`` (``commas``): a JSON file that parsed and no longer does gets the comma a new
    line lacks before the next member, when that makes it parse.
The white-space repairs stand back when white space is the answer's only change. ``labels`` names
the repairs that changed something; the text is ``new`` when none did.
"""

from __future__ import annotations

import difflib
import io
import json
import re
import tokenize
from enum import StrEnum

from ..code.diff import split_lines
from ..code.syntax import language_for_path


def _squash(line: str) -> str:
    return re.sub(r"\s+", "", line)


def keep_copies(old: str, new: str, path: str | None) -> str:
    """``new`` with mis-copied lines put back (module docstring)."""
    python = language_for_path(path) == "python"
    a, b = split_lines(old), split_lines(new)
    sq = [_squash(x) for x in a]
    starts: set[int] | None = None if python else set()

    def start(i: int) -> bool:  # tokenized once, and only when an indent differs
        nonlocal starts
        if starts is None:
            starts = _statement_starts(old)
        return i in starts

    out = list(b)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag != "replace":
            continue
        sub = difflib.SequenceMatcher(
            None, sq[i1:i2], [_squash(x) for x in out[j1:j2]], autojunk=False
        )
        for t, x1, x2, y1, _y2 in sub.get_opcodes():
            if t != "equal":
                continue
            for k in range(x2 - x1):
                was, got = a[i1 + x1 + k], out[j1 + y1 + k]
                if got == was:
                    continue
                if _lead(got) != _lead(was) and start(i1 + x1 + k):
                    was = _lead(got) + was.lstrip(" \t")  # the model's block, the copy
                out[j1 + y1 + k] = was
        joins = _joins(sq, i1, i2)
        for j in range(j1, j2):
            got = _squash(out[j])
            k = joins.get(got) if got and out[j].count("\n") <= 1 else None
            if k is not None and not (_lead(out[j]) != _lead(a[k[0]]) and start(k[0])):
                out[j] = "".join(a[k[0] : k[1]])
    return "".join(out)


def keep_blank_lines(old: str, new: str, path: str | None) -> str:
    """``new`` with the blank lines it dropped from copied text put back (module docstring)."""
    a, b = split_lines(old), split_lines(new)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        got = b[j1:j2]
        was = a[i1:i2]
        if tag == "delete" and all(not x.strip() for x in was):
            got = was  # only blank lines went: a copy lost them
        elif tag == "replace":
            full = [x for x in was if x.strip()]
            kept = [x for x in got if x.strip()]
            if len(full) == len(kept) and len(got) - len(kept) < len(was) - len(full):
                it = iter(kept)  # the model's lines, in the original's blank-line layout
                got = [x if not x.strip() else next(it) for x in was]
        out += got
    return "".join(out)


def _joins(sq: list[str], i1: int, i2: int) -> dict[str, tuple[int, int]]:
    """The original lines ``a[k:m]`` (2 to 4 of ``a[i1:i2]``) joined on one, white space
    aside (``sq``: the lines squashed), by that text: what a copy the model reflowed reads
    as; the first ``(k, m)`` where two read alike."""
    joins: dict[str, tuple[int, int]] = {}
    for k in range(i1, i2 - 1):
        for m in range(k + 2, min(k + 4, i2) + 1):
            joins.setdefault("".join(sq[k:m]), (k, m))
    return joins


def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _statement_starts(text: str) -> set[int]:
    """0-based numbers of the lines of Python ``text`` that start a statement (their indent
    says which block they are in; a continuation line's does not); every line when the
    text does not tokenize."""
    starts: set[int] = set()
    skip = {tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE}
    at_start = True
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NEWLINE:
                at_start = True
            elif at_start and tok.type not in skip and tok.type != tokenize.ENDMARKER:
                starts.add(tok.start[0] - 1)
                at_start = False
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return set(range(text.count("\n") + 1))
    return starts


def mend_commas(old: str, new: str, path: str | None) -> str:
    """``new`` with the commas its new JSON lines lack (module docstring)."""
    if language_for_path(path) != "json" or not _parses(old) or _parses(new):
        return new
    lines, had = split_lines(new), set(split_lines(old))
    want = []
    for i, line in enumerate(lines):
        body = line.rstrip()
        if line in had or not body or body[-1] in ",{[":
            continue
        after = next((x.strip() for x in lines[i + 1 :] if x.strip()), "")
        if after[:1] in ('"', "{", "["):
            want.append(i)
    for picks in (want, *([i] for i in want)):
        fixed = list(lines)
        for i in picks:
            body = fixed[i].rstrip("\r\n")
            fixed[i] = body + "," + fixed[i][len(body) :]
        if picks and _parses("".join(fixed)):
            return "".join(fixed)
    return new


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class Repair(StrEnum):
    """A fidelity repair's label (``edit_repairs`` on the wire)."""

    COPIES = "copies"
    BLANK_LINES = "blank_lines"
    COMMAS = "commas"


REPAIRS = (
    (Repair.COPIES, keep_copies),
    (Repair.BLANK_LINES, keep_blank_lines),
    (Repair.COMMAS, mend_commas),
)
_WHITE_SPACE = frozenset((Repair.COPIES, Repair.BLANK_LINES))


def repair(old: str, new: str, path: str | None) -> tuple[str, list[Repair]]:
    """``new`` with every fidelity repair that applies made (module docstring), and their
    labels."""
    only_space = _squash(old) == _squash(new)  # white space is the answer's change
    labels: list[Repair] = []
    for label, fix in REPAIRS:
        if only_space and label in _WHITE_SPACE:
            continue
        fixed = fix(old, new, path)
        if fixed != new:
            labels += [] if label in labels else [label]
            new = fixed
    return new, labels
