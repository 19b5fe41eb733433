"""Citations in an answer: find them, and check each quote against the context files.

Contract: ``check_citations(answer, files)`` (``files``: ``(label, text)`` pairs as the prompt names
them) returns one ``Citation`` per quoted passage, in order: ``found`` (the quote is in the cited
file, within the cited lines if any), ``located`` (1-based first and last line where it is),
``problem`` (why not found); ``to_json()`` is ``{file, lines, quote, found, located, source,
problem}``. ``prose(answer)`` is the answer without its passages and citations.
The format (``app.answer.prompts.SYSTEM_QUOTE``): prose, then ``[FILE]``, ``[FILE:L12]`` or
``[FILE:L12-L14]`` (``L`` optional) and a fenced passage. A citation right after a quoted string on
its line (``"…"``, ``“…”``, `` `…` ``) cites it; else the passage (fenced, or ``> `` lines) that
starts on the next line, or ends on the line before. A citation with no quote has ``found`` False;
an uncited passage is checked against every file (``file`` None); ``[x]`` naming no file, path or
lines is not a citation. Quotes match whitespace-insensitively and case-sensitively; ``...`` or
``…`` separates parts that must appear in that order.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

CITE_RE = re.compile(
    r"\[(?P<file>[^\[\]\n:]+?)(?::\s*L?(?P<a>\d+)(?:\s*[-\u2013]\s*L?(?P<b>\d+))?)?\](?!\()"
)
_FENCE_RE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})[^`]*$")
_INLINE_RE = re.compile(r"(?:\"([^\"\n]+)\"|\u201c([^\u201d\n]+)\u201d|`([^`\n]+)`)\W*$")
_ELLIPSIS_RE = re.compile(r"\.\.\.|\u2026")


@dataclass(frozen=True)
class Citation:
    """One quoted passage of an answer, checked against the context files."""

    file: str | None
    """The file as the answer names it; None for a passage no citation names."""
    lines: tuple[int, int] | None
    """The 1-based first and last line the citation gives; None if it gives none."""
    quote: str
    """The quoted text ("" for a citation that quotes nothing)."""
    found: bool
    """The quote is in the cited file (any file when uncited), within the cited lines."""
    located: tuple[int, int] | None = None
    """Where the quote is: 1-based first and last line (None when not found)."""
    source: str | None = None
    """The context file's label the citation resolved to (the file it was found in)."""
    problem: str = ""
    """Why ``found`` is False (empty when it is True)."""

    @property
    def shown_lines(self) -> tuple[int, int] | None:
        """The lines to show: the cited ones, else where the quote was found."""
        return self.lines or self.located

    def label(self) -> str:
        """``file:L12-L14`` (lines as shown), or the file alone."""
        name = self.file or self.source or "?"
        ln = self.shown_lines
        if ln is None:
            return name
        return f"{name}:L{ln[0]}" if ln[0] == ln[1] else f"{name}:L{ln[0]}-L{ln[1]}"

    def verdict(self) -> str:
        """The check in one line, as every interface words it: ``✓ README.md:L12-L14``,
        or ``✗ README.md:L12: not in README.md``."""
        where = self.label() + ("" if self.file else " (uncited)")
        return f"✓ {where}" if self.found else f"✗ {where}: {self.problem}"

    def to_json(self) -> dict:
        return {
            "file": self.file,
            "lines": list(self.lines) if self.lines else None,
            "quote": self.quote,
            "found": self.found,
            "located": list(self.located) if self.located else None,
            "source": self.source,
            "problem": self.problem,
        }


@dataclass(frozen=True)
class Passage:
    """A quoted passage of an answer: its text and its lines (the fences' or the ``>``
    lines', 0-based indexes into the answer's lines)."""

    text: str
    first: int
    last: int


@dataclass(frozen=True)
class _Cite:
    file: str
    lines: tuple[int, int] | None
    line: int  # the answer line it is on
    inline: str | None  # a quoted string just before it on its line


def fenced_passages(lines: list[str]) -> list[Passage]:
    """An answer's quoted passages: fenced blocks and runs of ``>`` lines; an unclosed
    block runs to the end."""
    out: list[Passage] = []
    i = 0
    while i < len(lines):
        m = _FENCE_RE.match(lines[i])
        if m:
            fence = m["fence"]
            j = i + 1
            while j < len(lines) and not (
                lines[j].strip().startswith(fence[0] * len(fence))
                and not lines[j].strip().strip(fence[0])
            ):
                j += 1
            out.append(Passage("\n".join(lines[i + 1 : j]), i, min(j, len(lines) - 1)))
            i = j + 1
            continue
        if lines[i].lstrip().startswith(">"):
            j = i
            body = []
            while j < len(lines) and lines[j].lstrip().startswith(">"):
                body.append(re.sub(r"^\s*> ?", "", lines[j]))
                j += 1
            out.append(Passage("\n".join(body), i, j - 1))
            i = j
            continue
        i += 1
    return out


def _cites(lines: list[str], inside: set[int]) -> list[_Cite]:
    out = []
    for n, line in enumerate(lines):
        if n in inside:
            continue
        for m in CITE_RE.finditer(line):
            a = int(m["a"]) if m["a"] else None
            b = int(m["b"]) if m["b"] else a
            span = None if a is None else (min(a, b), max(a, b))
            q = _INLINE_RE.search(line[: m.start()])
            inline = next(g for g in q.groups() if g) if q else None
            out.append(_Cite(m["file"].strip(), span, n, inline))
    return out


def _resolve(name: str, labels: Sequence[str]) -> str | None:
    """The context file ``name`` means: the same label, else one path ending in the
    other, else the only one with that base name."""
    if name in labels:
        return name
    tail = [lab for lab in labels if lab.endswith("/" + name) or name.endswith("/" + lab)]
    if len(tail) == 1:
        return tail[0]
    base = name.rsplit("/", 1)[-1]
    same = [lab for lab in labels if lab.rsplit("/", 1)[-1] == base]
    return same[0] if len(same) == 1 else None


class _Source:
    """A file's text with whitespace runs collapsed, mapped back to line numbers."""

    def __init__(self, text: str) -> None:
        chars: list[str] = []
        self.line_of: list[int] = []
        line = 1
        for ch in text:
            if ch.isspace():
                if chars and chars[-1] != " ":
                    chars.append(" ")
                    self.line_of.append(line)
            else:
                chars.append(ch)
                self.line_of.append(line)
            if ch == "\n":
                line += 1
        self.text = "".join(chars)
        self.n_lines = line if text and not text.endswith("\n") else line - 1

    def find(self, quote: str, within: tuple[int, int] | None = None) -> tuple[int, int] | None:
        """The first and last line of the first occurrence of ``quote`` (its
        ``...``-separated parts in order), inside ``within`` lines when given."""
        parts = [_norm(p) for p in _ELLIPSIS_RE.split(quote)]
        parts = [p for p in parts if p]
        if not parts:
            return None
        lo = 0
        if within is not None:
            lo = bisect.bisect_left(self.line_of, within[0])
        start = self.text.find(parts[0], lo)
        while start >= 0:
            end, ok = start + len(parts[0]), True
            for p in parts[1:]:
                at = self.text.find(p, end)
                if at < 0:
                    ok = False
                    break
                end = at + len(p)
            if not ok:
                return None
            span = (self.line_of[start], self.line_of[end - 1])
            if within is None or span[1] <= within[1]:
                return span
            if self.line_of[start] > within[1]:
                return None
            start = self.text.find(parts[0], start + 1)
        return None


def _norm(text: str) -> str:
    return " ".join(text.split())


def _check(
    quote: str, name: str | None, lines, labels: list[str], sources: dict[str, _Source]
) -> Citation:
    if not _norm(quote):
        return Citation(name, lines, quote, False, problem="quotes nothing")
    if name is None:  # an uncited passage: any context file
        for lab in labels:
            at = sources[lab].find(quote)
            if at is not None:
                return Citation(None, None, quote, True, at, lab)
        return Citation(None, None, quote, False, problem="not in any context file")
    lab = _resolve(name, labels)
    if lab is None:
        return Citation(name, lines, quote, False, problem=f"{name} is not a context file")
    src = sources[lab]
    at = src.find(quote)
    if at is None:
        return Citation(name, lines, quote, False, source=lab, problem=f"not in {lab}")
    if lines is None:
        return Citation(name, None, quote, True, at, lab)
    inside = src.find(quote, lines)
    if inside is not None:
        return Citation(name, lines, quote, True, inside, lab)
    where = f"L{at[0]}" if at[0] == at[1] else f"L{at[0]}-L{at[1]}"
    return Citation(
        name, lines, quote, False, at, lab, f"in {lab} at {where}, not at the cited lines"
    )


def check_citations(answer: str, files: Sequence[tuple[str, str]]) -> list[Citation]:
    """Every quoted passage of ``answer``, checked against ``files`` (see the module
    docstring)."""
    lines = answer.splitlines()
    passages = fenced_passages(lines)
    inside = {n for p in passages for n in range(p.first, p.last + 1)}
    labels = [lab for lab, _ in files]
    cites = [c for c in _cites(lines, inside) if _is_citation(c.lines, c.file, labels)]
    sources = {lab: _Source(text) for lab, text in files}
    starts = {p.first: p for p in passages}
    ends = {p.last: p for p in passages}
    cited_at = {c.line for c in cites}
    # the answer's own convention: citations before their passages (the format), or after
    first = next((p for p in passages if {p.first - 1, p.last + 1} & cited_at), None)
    after = first is not None and first.first - 1 not in cited_at
    used: set[int] = set()  # passages' first lines that a citation took
    found: list[tuple[int, Citation]] = []
    for c in cites:
        near = [ends.get(c.line - 1), starts.get(c.line + 1)]
        near = [p for p in (near if after else near[::-1]) if p is not None and p.first not in used]
        if c.inline is not None:
            quote, at = c.inline, c.line
        elif near:
            quote, at = near[0].text, near[0].first
            used.add(at)
        else:
            quote, at = "", c.line
        found.append((at, _check(quote, c.file, c.lines, labels, sources)))
    for p in passages:
        if p.first not in used:
            found.append((p.first, _check(p.text, None, None, labels, sources)))
    found.sort(key=lambda t: t[0])
    return [c for _, c in found]


NO_QUOTES = "✗ no quotes: nothing in this answer is checked against the files"
"""The verdict of an answer that quotes nothing."""


def _is_citation(lines, name: str, labels: Sequence[str]) -> bool:
    """Whether a tag ``[name]`` (``lines``: its line numbers, if any) is a citation: it
    gives lines, or names a context file or a path. ``[x]`` is a checkbox and ``[-1, 3]``
    a list, not citations."""
    return bool(lines) or _resolve(name, labels) is not None or bool(re.search(r"\w[./]\w", name))


def _untag(line: str, labels: Sequence[str]) -> str:
    def cut(m: re.Match) -> str:
        a = m.group("a")
        return "" if _is_citation(a, m.group("file").strip(), labels) else m.group(0)

    return CITE_RE.sub(cut, line)


def prose(answer: str, labels: Sequence[str] = ()) -> str:
    """``answer`` without its quoted passages and citation tags (``labels``: the context
    files' names; a tag that gives lines or names a path is a citation without them): what
    it says in its own words (a quote holds the source's words, right or not, so an answer
    is judged on this). A bracketed list or checkbox is the answer's words, and stays."""
    lines = answer.splitlines()
    inside = {n for p in fenced_passages(lines) for n in range(p.first, p.last + 1)}
    kept = [_untag(line, labels) for n, line in enumerate(lines) if n not in inside]
    return "\n".join(line for line in kept if line.strip())


def all_found(citations: Sequence[Citation]) -> bool:
    """True when the answer quotes something and every quote is where it says."""
    return bool(citations) and all(c.found for c in citations)
