"""The live diff of a rewrite being written: one reading of its stream, for every front end.

Contract: ``LivePreview(original, region=None)`` is fed a whole (or region) rewrite's
stream in order, from one thread at a time (``feed(piece)``). It reads the stream once,
with one ``app.runtime.stream.FencedText`` over ``app.edit.prompts.rewrite_fence(original)``, the fence
the rewrite's prompt asks for. ``preview()`` is the ``Preview`` of the complete lines so
far: hunks against ``original`` in its line numbers (``app.code.diff.preview_in_file``, so the
tail not yet written is never shown as deleted; a region's lines are spliced into the
file), the generation front, and how many characters arrived. It diffs again only when
another line completed, and returns the same object until then. ``body()`` is the text
inside the block: all of it once the block closed, else its complete lines.
The terminal app (``app.tui.live.LiveRun``) and the socket server (``rewrite/preview``,
``app.server.jobs``) both read their previews here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..code.diff import Hunk, preview_in_file, split_lines
from ..runtime.stream import FencedText
from .prompts import rewrite_fence


@dataclass
class Preview:
    """The live diff at one moment: hunks against the original and the generation front."""

    hunks: list[Hunk]
    frontier: int
    """Number of lines of the new text generated so far (0-based line index of the front)."""
    chars: int
    """Characters received so far."""


class LivePreview:
    """The live diff of one streaming rewrite of ``original`` (module docstring)."""

    def __init__(self, original: str, region: tuple[int, int] | None = None) -> None:
        self.original, self.region = original, region
        self._fenced = FencedText(rewrite_fence(original))
        self._chars = 0
        self._last: Preview | None = None
        self._body_len = -1

    def feed(self, piece: str) -> None:
        """Read the next piece of the stream."""
        self._fenced.feed(piece)
        self._chars += len(piece)

    def body(self) -> str:
        """The block's body: all of it once closed, else its complete lines."""
        f = self._fenced
        return (f.body() if f.closed else f.partial_body()) or ""

    def preview(self) -> Preview:
        """The current live diff; the same object until another line completes."""
        body = self._fenced.partial_body()
        if self._last is None or len(body) != self._body_len:
            self._body_len = len(body)
            front = (self.region[0] if self.region else 0) + len(split_lines(body))
            hunks = preview_in_file(self.original, body, self.region)
            self._last = Preview(hunks, front, self._chars)
        return self._last
