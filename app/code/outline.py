"""A file too long to show whole: its outline, where a change goes, and windows of lines.

A prompt holds the whole file when it fits the context; otherwise its outline (the imports, the
top-level assignments and every definition's signature, with line numbers) and windows of lines.
Contract:
  * ``outline(source) -> Outline``: the entries (``Entry``: 0-based ``[start, end)`` lines and
    the one line shown, a multi-line signature joined) in file order, from ``app.code.syntax``;
    ``Outline.text`` renders one entry a line as ``START-END: text`` (1-based, inclusive). Files
    without a grammar get every ``OUTLINE_STRIDE``-th non-blank line.
  * ``read_located(answer, outline) -> list[tuple[int, int]]``: the line ranges an answer names,
    as outline lines (their text decides, then their numbers; ``LOCATE_LIKE``) or bare
    ``START-END`` ranges; a nested function stands for the outermost one; a range holding another
    named one is dropped; sorted and merged; unknown lines skipped.
  * ``widen(region, lines, count, budget)``: the region grown by whole lines on both sides while
    the window's tokens (``count(text)``) stay within ``budget``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .source import Source

OUTLINE_STRIDE = 20
"""Without a grammar, every this many non-blank lines one is shown."""
SHOWN_CHARS = 160
"""An outline line is cut to this many characters."""
LOCATE_LIKE = 0.85
"""A located line that is no outline line names the one it is this like (``difflib``)."""

_NUMBERED = re.compile(r"^\s*(?:L|lines?\s*)?(\d+)\s*(?:-\s*(\d+))?\s*[:|]?\s?(.*)$", re.I)


@dataclass(frozen=True)
class Entry:
    start: int
    end: int
    shown: str
    kind: str = ""
    """The definition's node type (``function_definition``, ...); "" for other lines."""

    def render(self) -> str:
        return f"{self.start + 1}-{self.end}: {self.shown}"


@dataclass(frozen=True)
class Outline:
    entries: tuple[Entry, ...]
    n_lines: int

    @property
    def text(self) -> str:
        return "".join(e.render() + "\n" for e in self.entries)


def _joined(lines: Sequence[str], a: int, b: int) -> str:
    """Lines ``[a, b)`` on one line: the first as it is, the rest stripped."""
    head = lines[a].rstrip()
    rest = " ".join(x.strip() for x in lines[a + 1 : b] if x.strip())
    shown = f"{head} {rest}".rstrip() if rest else head
    return shown if len(shown) <= SHOWN_CHARS else shown[: SHOWN_CHARS - 3] + "..."


def outline(source: Source) -> Outline:
    """The outline of ``source``'s text (module docstring)."""
    lines = source.text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    entries: list[Entry] = []
    defs = source.definitions
    for a, b, kind in source.top_level:
        first = lines[a].strip()
        if kind == "expression_statement" and (not first or first[0] in "\"'rbuRBU#"):
            continue  # a docstring or a bare string
        entries.append(Entry(a, b, _joined(lines, a, a + 1)))
    for d in defs:
        header = d.line + 1  # the signature: up to the line that ends it, or the body
        while header < min(d.header_end, d.end) and not lines[header - 1].rstrip().endswith(
            (":", "{")
        ):
            header += 1
        entries.append(Entry(d.start, d.end, _joined(lines, d.line, header), d.kind))
    if not entries:
        nonblank = [i for i, x in enumerate(lines) if x.strip()]
        for i in nonblank[::OUTLINE_STRIDE]:
            entries.append(Entry(i, i + 1, _joined(lines, i, i + 1)))
    entries.sort(key=lambda e: (e.start, -e.end))
    return Outline(tuple(entries), len(lines))


def _most_like(said: str, entries: Sequence[Entry]) -> Entry | None:
    """The entry whose text ``said`` is at least ``LOCATE_LIKE`` like, when no other is
    nearly as like it (a model copies the line with the change it has in mind made)."""
    scored = []
    for e in entries:
        m = difflib.SequenceMatcher(None, said, e.shown.strip(), autojunk=False)
        if m.real_quick_ratio() >= LOCATE_LIKE and m.quick_ratio() >= LOCATE_LIKE:
            scored.append((m.ratio(), e))
    scored.sort(key=lambda x: -x[0])
    if not scored or scored[0][0] < LOCATE_LIKE:
        return None
    if len(scored) > 1 and scored[1][0] >= scored[0][0] - 0.02:
        return None
    return scored[0][1]


def _is_function(e: Entry) -> bool:
    return "function" in e.kind or "method" in e.kind


def _outermost_function(entry: Entry, entries: Sequence[Entry]) -> Entry:
    """A function defined inside another function stands for the outermost one: it is part
    of that function's body, which is what changes."""
    if not _is_function(entry):
        return entry
    around = [
        e
        for e in entries
        if _is_function(e) and e.start <= entry.start and entry.end <= e.end and e != entry
    ]
    return min(around, key=lambda e: e.start, default=entry)


def read_located(answer: str, out: Outline) -> list[tuple[int, int]]:
    """The line ranges ``answer`` names (module docstring)."""
    by_start = {e.start: e for e in out.entries}
    by_text = {e.shown.strip(): e for e in out.entries}
    found: list[tuple[int, int]] = []
    for line in answer.splitlines():
        if not line.strip():
            continue
        m = _NUMBERED.match(line)
        said = (m.group(3) if m else line).strip()
        # the text names an entry more surely than the numbers a model writes beside it
        entry = by_text.get(said)
        if entry is None and len(said) >= 8:  # a line cut short: its unique completion
            like = [e for e in out.entries if e.shown.strip().startswith(said)]
            entry = like[0] if len(like) == 1 else None
        if entry is None and len(said) >= 8:  # copied with the change made already
            entry = _most_like(said, out.entries)
        if entry is None and m:
            start = int(m.group(1)) - 1
            entry = by_start.get(start)
            if entry is None and m.group(2) and not said:  # a bare range
                end = int(m.group(2))
                if 0 <= start < end <= out.n_lines:
                    found.append((start, end))
                continue
        if entry is not None:
            entry = _outermost_function(entry, out.entries)
            found.append((entry.start, entry.end))
    # a range that holds another named one (a class and its method): keep the inner one
    inner = [r for r in found if not any(o != r and r[0] <= o[0] and o[1] <= r[1] for o in found)]
    merged: list[tuple[int, int]] = []
    for a, b in sorted(set(inner)):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def widen(
    region: tuple[int, int], lines: Sequence[str], count: Callable[[str], int], budget: int
) -> tuple[int, int]:
    """``region`` grown a line at a time on each side while the window fits ``budget``."""
    a, b = region
    used = count("".join(lines[a:b]))
    grew = True
    while grew:
        grew = False
        for side in (0, 1):
            i = a - 1 if side == 0 else b
            if not 0 <= i < len(lines):
                continue
            cost = count(lines[i])
            if used + cost > budget:
                continue
            used += cost
            a, b = (i, b) if side == 0 else (a, i + 1)
            grew = True
    return a, b
