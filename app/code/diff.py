"""Line-based hunks between an old and a new text, shared by the CLI, the TUI and the server.

Contract: texts use ``"\\n"`` line endings; lines split on ``"\\n"`` only, each keeping its
``"\\n"`` (the last may lack one); :func:`nonblank` counts the lines that are not blank.
  * :func:`compute_hunks` returns the changed regions in order, without context. A :class:`Hunk`
    replaces old lines ``[start_line, end_line)`` (0-based; equal bounds: an insertion before
    ``start_line``), whose text is ``old_text``, with ``new_text``.
  * :func:`apply_hunks` applies any subset of ``compute_hunks(old, new)`` to ``old``: all give
    ``new`` exactly, none gives ``old``; stale or overlapping hunks raise :class:`ValueError`.
  * :func:`unified_diff` is a standard unified diff (``a/``/``b/`` headers,
    ``\\ No newline at end of file`` markers); equal texts give ``""``.
  * :func:`preview_hunks` diffs a partial (streaming) rewrite against ``old`` without reporting
    the not-yet-generated tail as deleted; :func:`preview_in_file` does it for a rewrite of
    lines ``region`` of a file, in the file's line numbers (live previews, a cut result's hunks).
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "Hunk",
    "apply_hunks",
    "complete_lines",
    "compute_hunks",
    "nonblank",
    "preview_hunks",
    "preview_in_file",
    "split_lines",
    "unified_diff",
]

logger = logging.getLogger(__name__)

NO_NEWLINE = "\\ No newline at end of file\n"


@dataclass(frozen=True)
class Hunk:
    """Replace old lines ``[start_line, end_line)`` (text ``old_text``) with ``new_text``."""

    id: int
    start_line: int
    end_line: int
    old_text: str
    new_text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "oldText": self.old_text,
            "newText": self.new_text,
        }


def split_lines(text: str) -> list[str]:
    """Split on ``"\\n"`` only, keeping the newlines; ``""`` gives ``[]``."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def nonblank(text: str) -> int:
    """How many lines of ``text`` hold more than white space."""
    return sum(1 for line in split_lines(text) if line.strip())


def _hunks_from_lines(a: list[str], b: list[str]) -> list[Hunk]:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    regions: list[list[int]] = []  # [i1, i2, j1, j2]
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if regions and regions[-1][1] == i1 and regions[-1][3] == j1:
            regions[-1][1], regions[-1][3] = i2, j2
        else:
            regions.append([i1, i2, j1, j2])
    return [
        Hunk(
            id=k,
            start_line=i1,
            end_line=i2,
            old_text="".join(a[i1:i2]),
            new_text="".join(b[j1:j2]),
        )
        for k, (i1, i2, j1, j2) in enumerate(regions)
    ]


def compute_hunks(old: str, new: str) -> list[Hunk]:
    """The changed regions between ``old`` and ``new``, in order, ids 0, 1, …"""
    return _hunks_from_lines(split_lines(old), split_lines(new))


def apply_hunks(old: str, hunks: Iterable[Hunk]) -> str:
    """Apply the given hunks (any subset of ``compute_hunks(old, new)``) to ``old``.

    Raises ValueError if a hunk does not match ``old`` or two hunks overlap."""
    lines = split_lines(old)
    chosen = sorted(set(hunks), key=lambda h: (h.start_line, h.end_line))
    for prev, cur in zip(chosen, chosen[1:], strict=False):
        same_insert = prev.start_line == prev.end_line == cur.start_line == cur.end_line
        if prev.end_line > cur.start_line or same_insert:
            raise ValueError(f"hunks {prev.id} and {cur.id} overlap")
    for hunk in reversed(chosen):
        if not 0 <= hunk.start_line <= hunk.end_line <= len(lines):
            raise ValueError(f"hunk {hunk.id} is out of range for a {len(lines)}-line text")
        if "".join(lines[hunk.start_line : hunk.end_line]) != hunk.old_text:
            raise ValueError(f"hunk {hunk.id} does not match the text (stale hunk?)")
        lines[hunk.start_line : hunk.end_line] = split_lines(hunk.new_text)
    return "".join(lines)


def unified_diff(old: str, new: str, path: str = "file", context: int = 3) -> str:
    """A standard unified diff from ``a/<path>`` to ``b/<path>``; ``""`` if equal."""
    out: list[str] = []
    for line in difflib.unified_diff(
        split_lines(old),
        split_lines(new),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        n=context,
    ):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n")
            out.append(NO_NEWLINE)
    return "".join(out)


def complete_lines(text: str) -> str:
    """The prefix of ``text`` up to and including its last ``"\\n"`` (``""`` if none)."""
    return text[: text.rfind("\n") + 1]


def preview_hunks(old: str, partial_new: str) -> list[Hunk]:
    """Hunks between ``old`` and the complete lines of a partial rewrite.

    The generation has not reached the end of ``old`` yet, so a final hunk that runs to the
    end of ``old`` is cut: a pure deletion is dropped, and a replacement keeps only as many
    old lines as it has new lines (the rest is simply not generated yet). Applying the
    result to ``old`` gives the generated prefix followed by the rest of ``old``."""
    a = split_lines(old)
    hunks = _hunks_from_lines(a, split_lines(complete_lines(partial_new)))
    if not hunks or hunks[-1].end_line != len(a):
        return hunks
    last = hunks.pop()
    kept = min(last.end_line - last.start_line, len(split_lines(last.new_text)))
    cut = replace(
        last,
        end_line=last.start_line + kept,
        old_text="".join(a[last.start_line : last.start_line + kept]),
    )
    if cut.new_text and cut.new_text != cut.old_text:
        hunks.append(cut)
    return hunks


def preview_in_file(
    original: str, partial_body: str, region: tuple[int, int] | None = None
) -> list[Hunk]:
    """:func:`preview_hunks` of a rewrite of ``original``'s lines ``region`` (the whole text
    when None), with the hunks in ``original``'s line numbers."""
    if region is None:
        return preview_hunks(original, partial_body)
    a, b = region
    old = "".join(split_lines(original)[a:b])
    return [
        replace(h, start_line=h.start_line + a, end_line=h.end_line + a)
        for h in preview_hunks(old, partial_body)
    ]
