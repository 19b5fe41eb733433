"""A text read once, and one change between two texts: what the checks and the rounds share.

Contract: ``Source(text, path)`` reads nothing until asked; each reading (``lang``, ``lines``,
``tree``, ``definitions``, ``top_level``, ``code``, ``errors``) is made once and kept, so
tree-sitter parses a ``Source``'s text at most once (``app.code.syntax.parse``).
``Change(old, new)`` is one candidate answer against the file it changes: ``hunks``
(``app.code.diff.compute_hunks``) made once; ``Change.of(old, new, path)`` reads two texts. A
rewrite reads its file into one ``Source`` and each answer into one ``Change``, which every
check (``app.check.checks``) and repair round reads: the pair is diffed, and each text
parsed, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .diff import Hunk, compute_hunks, split_lines
from .syntax import (
    Definition,
    code_leaves,
    count_errors,
    definitions,
    language_for_path,
    parse,
    top_level_lines,
)


@dataclass(frozen=True, eq=False)
class Source:
    """A text and the file it is (``path``: its name says the language), read lazily once."""

    text: str
    path: str | None = None

    @cached_property
    def lang(self) -> str | None:
        """The tree-sitter language (``language_for_path``), None without a grammar."""
        return language_for_path(self.path)

    @cached_property
    def lines(self) -> list[str]:
        """The lines, ends kept (``split_lines``); not to be changed in place."""
        return split_lines(self.text)

    @cached_property
    def tree(self):  # -> tree_sitter.Tree | None
        """The tree-sitter tree, None without a grammar."""
        return parse(self.text, self.lang)

    @cached_property
    def definitions(self) -> tuple[Definition, ...]:
        """The definitions in file order (``app.code.syntax.definitions``)."""
        return tuple(definitions(self.text, self.lang, self.tree))

    @cached_property
    def top_level(self) -> tuple[tuple[int, int, str], ...]:
        """Top-level statements that are not definitions (``top_level_lines``)."""
        return tuple(top_level_lines(self.text, self.lang, self.tree))

    @cached_property
    def code(self) -> tuple[tuple[int, str], ...] | None:
        """The tokens less comments and docstrings (``app.code.syntax.code_leaves``); None
        for a text that is not code."""
        leaves = code_leaves(self.text, self.lang, self.tree)
        return None if leaves is None else tuple(leaves)

    @cached_property
    def errors(self) -> int:
        """Syntax error nodes (``app.code.syntax.count_errors``)."""
        return count_errors(self.text, self.lang, self.tree)


@dataclass(frozen=True, eq=False)
class Change:
    """``old`` becomes ``new`` (the same file): one candidate answer, diffed once."""

    old: Source
    new: Source

    @classmethod
    def of(cls, old: str, new: str, path: str | None = None) -> Change:
        return cls(Source(old, path), Source(new, path))

    @property
    def path(self) -> str | None:
        return self.old.path

    @cached_property
    def hunks(self) -> tuple[Hunk, ...]:
        """The changed regions in order, in ``old``'s line numbers."""
        return tuple(compute_hunks(self.old.text, self.new.text))

    def within(self, h: Hunk, d: Definition) -> bool:
        """True when hunk ``h`` changes ``d``'s lines or adds lines at its end (a method added
        at the end of a class; in Python also after blank lines, when the first added line is
        indented deeper than ``d``'s own first line)."""
        if touches(h, d) or h.start_line == h.end_line == d.end:
            return True
        lines = self.old.lines
        if h.start_line != h.end_line or self.old.lang != "python" or h.start_line < d.end:
            return False
        if any(line.strip() for line in lines[d.end : h.start_line]):
            return False
        added = next((x for x in split_lines(h.new_text) if x.strip()), "")
        head = lines[d.line] if d.line < len(lines) else ""
        return _indent(added) > _indent(head)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def touches(h: Hunk, d: Definition, *, before: bool = False) -> bool:
    """True when hunk ``h`` (old line numbers) changes lines of definition ``d``: an
    insertion counts when it is after the first line and before the end (``before``: right
    before the first line too, where a repair round rewrites the definition whole)."""
    if h.start_line == h.end_line:
        return d.start - before < h.start_line < d.end
    return h.start_line < d.end and d.start < h.end_line
