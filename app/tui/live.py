"""One running rewrite as the UI sees it: a text buffer, a cancel flag and the Metrics.

Contract: the rewrite worker thread calls :meth:`LiveRun.append` from ``rewrite``'s
``on_text`` callback (a list append: it never blocks on the UI); the UI thread calls
:meth:`LiveRun.preview` at its own pace (a timer, a few times a second). ``preview``
re-diffs only when another line is complete, and uses ``app.diff.preview_hunks``, so the
not-yet-generated tail of the original is not shown as deleted. In region mode the
streamed text is the region only; the preview splices it into the whole file so line
numbers stay the file's.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from ...engine.metrics import Metrics
from ..diff import Hunk, complete_lines, preview_hunks, split_lines

# the model sometimes repeats the opening fence (with a language tag) before the text
_FENCE_LINE = re.compile(r"[ \t]*`{3,}[\w.+-]*[ \t]*\n")


@dataclass
class Preview:
    """The live diff at one moment: hunks against the original and the generation front."""

    hunks: list[Hunk]
    frontier: int
    """Number of lines of the new text generated so far (0-based line index of the front)."""
    chars: int
    """Characters received so far."""


@dataclass
class LiveRun:
    """Shared between the rewrite worker (writer) and the UI thread (reader)."""

    original: str
    region: tuple[int, int] | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    metrics: Metrics = field(default_factory=Metrics)
    _parts: list[str] = field(default_factory=list)
    _seen: int = -1
    _lines: int = -1
    _last: Preview | None = None

    def append(self, piece: str) -> None:
        """``on_text`` callback of ``rewrite`` (worker thread)."""
        self._parts.append(piece)

    def text(self) -> str:
        """Everything streamed so far."""
        return "".join(self._parts)

    def preview(self) -> Preview:
        """The current live diff (UI thread); the same object until another line completes."""
        n = len(self._parts)
        if self._last is not None and n == self._seen:
            return self._last
        self._seen = n
        text = "".join(self._parts[:n])
        lines = text.count("\n")
        if self._last is not None and lines == self._lines:
            return self._last  # only a partial line arrived: the diff is unchanged
        self._lines = lines
        self._last = live_preview(self.original, text, self.region)
        return self._last


def live_preview(original: str, streamed: str, region: tuple[int, int] | None) -> Preview:
    """Hunks of the complete streamed lines against ``original`` (see module docstring)."""
    m = _FENCE_LINE.match(streamed)
    if m and not original.lstrip().startswith("`"):
        streamed = streamed[m.end() :]
    body = complete_lines(streamed)
    lines = split_lines(original)
    if region is None:
        hunks = preview_hunks(original, body)
        frontier = len(split_lines(body))
    else:
        a, b = region
        region_old = "".join(lines[a:b])
        # diff the region alone, then shift its hunks to file line numbers
        hunks = [
            Hunk(h.id, h.start_line + a, h.end_line + a, h.old_text, h.new_text)
            for h in preview_hunks(region_old, body)
        ]
        frontier = a + len(split_lines(body))
    return Preview(hunks=hunks, frontier=frontier, chars=len(streamed))
