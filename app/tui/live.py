"""One running rewrite (or answer) as the UI sees it: a text buffer, a cancel flag and the Metrics.

Contract: the rewrite worker thread calls :meth:`LiveRun.append` from ``rewrite``'s
``on_text`` callback (a list append: it never blocks on the UI); the UI thread calls
:meth:`LiveRun.preview` at its own pace (a timer, a few times a second). ``preview``
reads each piece once and re-diffs only when another line is complete
(``app.edit.live.LivePreview``, the one live diff the server uses too). In region mode the
streamed text is the region only; the preview splices it into the whole file so line
numbers stay the file's. An answer uses only the buffer, the flag and the Metrics.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ...engine.metrics import Metrics
from ..edit.live import LivePreview, Preview


@dataclass
class LiveRun:
    """Shared between the rewrite worker (writer) and the UI thread (reader)."""

    original: str
    region: tuple[int, int] | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    metrics: Metrics = field(default_factory=Metrics)
    _parts: list[str] = field(default_factory=list)
    _fed: int = 0
    _live: LivePreview | None = None

    def append(self, piece: str) -> None:
        """``on_text`` callback of ``rewrite`` (worker thread)."""
        self._parts.append(piece)

    def text(self) -> str:
        """Everything streamed so far."""
        return "".join(self._parts)

    def _read(self) -> LivePreview:
        """The stream so far, read on (UI thread): each piece is read once."""
        if self._live is None:
            self._live = LivePreview(self.original, self.region)
        n = len(self._parts)
        for piece in self._parts[self._fed : n]:
            self._live.feed(piece)
        self._fed = n
        return self._live

    def body(self) -> str:
        """The text inside the output's block: all of it once the block closed, else its
        complete lines (what a re-run with feedback shows the model as its last output)."""
        return self._read().body()

    def preview(self) -> Preview:
        """The current live diff (UI thread); the same object until another line completes."""
        return self._read().preview()


def live_preview(original: str, streamed: str, region: tuple[int, int] | None) -> Preview:
    """The live diff of ``streamed`` so far (``app.edit.live.LivePreview``)."""
    live = LivePreview(original, region)
    live.feed(streamed)
    return live.preview()
