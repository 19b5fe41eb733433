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

import threading
from dataclasses import dataclass, field

from ...engine.metrics import Metrics
from ..diff import Hunk, preview_in_file, split_lines
from ..prompt import rewrite_fence
from ..stream import FencedText


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

    def body(self) -> str:
        """The text inside the output's block: all of it once the block closed, else its
        complete lines (what a re-run with feedback shows the model as its last output)."""
        fenced = FencedText(rewrite_fence(self.original))
        fenced.feed(self.text())
        return (fenced.body() if fenced.closed else fenced.partial_body()) or ""

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
    fenced = FencedText(rewrite_fence(original))
    fenced.feed(streamed)
    body = fenced.partial_body()
    frontier = (region[0] if region else 0) + len(split_lines(body))
    return Preview(preview_in_file(original, body, region), frontier, len(streamed))
