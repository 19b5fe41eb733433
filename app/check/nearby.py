"""Hunks outside the named definitions that still go with the change (``outside_named``).

Contract: ``comments_only(hunk, lang)`` is True when a hunk changes or adds only comments
(``#``, ``//``, ``/* */``, a JSDoc `` * `` line but in Python and shell) and white space, and
keeps at least as many non-blank lines: a usage note or a doc comment brought up to date (a
module's doc comment dropped is a loss, not this). ``called(source, named)`` lists the file's
definitions whose name (its last part) a named definition's code says outside strings and
comments and no other definition's code says (top-level statements and export lists do not
count): what only the named ones use, where their change may go (the unit table only
``parse_duration`` reads); a helper others call too is not in it, a change there reaches them.
A rough reading of any language (``LITERAL``), also the one home of ``code_names``, the names
``app.check.checks`` reads in a hunk; it never reads the instruction.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Sequence

from ..code.diff import Hunk, nonblank, split_lines
from ..code.source import Source
from ..code.syntax import Definition

LITERAL = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
    r"|`(?:\\.|[^`\\])*`|(?<![:\w$])//[^\n]*|/\*[\s\S]*?\*/|(?<!\S)#(?![\[!])[^\n]*"
)
"""A string, or a comment: ``//`` (not in ``http://``), ``/* */``, or ``#`` at a word's start
(not Rust's ``#[``, nor the ``#`` of a shell ``${0##*/}``)."""
NAME = re.compile(r"[A-Za-z_]\w{2,}")
_KEYWORDS = frozenset(
    keyword.kwlist
    + "self this function const let var new typeof null undefined true false then done else "
    "elif echo local export readonly fn pub impl mut struct enum use mod match crate where "
    "string int str float bool list dict none".split()
)
"""Words of code that name nothing of the file (keywords and common types)."""
_STAR_LINE = re.compile(r"\s*\*(?:[ \t]|/|$)", re.MULTILINE)
"""A line inside a block comment (`` * @param``, `` */``), in a language that has them."""
_NO_BLOCK_COMMENTS = frozenset(("python", "bash"))
_WORD = re.compile(r"[A-Za-z_$][\w$]*")


def code_names(text: str, strings: bool = False) -> set[str]:
    """The names of three letters or more in ``text`` outside its strings and comments
    (inside them too with ``strings``; a rough reading for any language, of the hunks'
    own lines)."""
    names = set(NAME.findall(text if strings else LITERAL.sub(" ", text)))
    return names - _KEYWORDS


def _uncommented(m: re.Match) -> str:
    return m.group(0) if m.group(0)[0] in "\"'`" else " "


def _bare(text: str, lang: str | None) -> str:
    """``text`` less its comments, its white space collapsed."""
    lines = split_lines(text)
    if lang not in _NO_BLOCK_COMMENTS:
        lines = [ln for ln in lines if not _STAR_LINE.match(ln)]
    return " ".join(LITERAL.sub(_uncommented, "".join(lines)).split())


def comments_only(h: Hunk, lang: str | None = None) -> bool:
    """True when ``h`` changes only comments and white space and deletes no line (module
    docstring)."""
    if nonblank(h.new_text) < nonblank(h.old_text):
        return False
    return _bare(h.old_text, lang) == _bare(h.new_text, lang)


def _names(src: Source, d: Definition) -> set[str]:
    """The words of ``d``'s code outside its strings and comments."""
    text = "".join(src.lines[d.line : d.end])
    return set(_WORD.findall(LITERAL.sub(" ", text)))


def _nested(a: Definition, b: Definition) -> bool:
    """True when one of the two holds the other (or they are the same)."""
    return (a.start <= b.start and b.end <= a.end) or (b.start <= a.start and a.end <= b.end)


def called(src: Source, named: Sequence[Definition]) -> list[Definition]:
    """The definitions only the named ones name in their code (module docstring)."""
    words: set[str] = set()
    for d in named:
        words |= _names(src, d)
    near = [
        d
        for d in src.definitions
        if d.name.rsplit(".", 1)[-1] in words and not any(_nested(d, n) for n in named)
    ]
    if not near:
        return []
    others = [e for e in src.definitions if not any(_nested(e, n) for n in named)]
    said = [_names(src, e) for e in others]
    return [
        d
        for d in near
        if not any(
            d.name.rsplit(".", 1)[-1] in w
            for e, w in zip(others, said, strict=True)
            if not _nested(e, d)
        )
    ]
