"""The model's output as text: streaming detokenization and the fenced block it writes.

Contract:
  * ``StreamDecoder(target)`` turns a growing token stream into text without ever emitting a
    broken UTF-8 sequence across token boundaries.
  * ``FencedText(fence)`` is the one reading of a rewrite's stream (the turn is pre-filled with the
    opening fence: the body, then the closing fence line, then anything more). ``feed(piece)``
    returns True once the closing fence has arrived (``closed``); ``partial_body()`` is the body's
    complete lines so far; ``body()`` the final body, or None when nothing usable came. A repeated
    opening fence (with a language tag, on the first line) is not body. Only a line that is exactly
    the fence closes the block (``fence_for`` picks a fence longer than any backtick run).
  * ``closing_fence_at(text, fence)`` finds where the closing fence line starts.
  * ``tokens_through_fence(target, tokens, fence)`` cuts a token list after the token that
    completes the closing fence line (benchmarks compare outputs up to there).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Sequence

from ...engine.backend import TargetModel


class StreamDecoder:
    """Incremental detokenizer: feed token ids, get complete UTF-8 text back."""

    def __init__(self, model: TargetModel) -> None:
        self._model = model
        self._dec = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, tokens: Sequence[int]) -> str:
        if not tokens:
            return ""
        return self._dec.decode(self._model.detokenize(tokens))

    def flush(self) -> str:
        return self._dec.decode(b"", final=True)


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in ``text``."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=0)
    return "`" * max(3, longest + 1)


def closing_fence_at(text: str, fence: str) -> int:
    """Index in ``text`` where a line consisting of the closing fence starts, or -1."""
    if text.startswith(fence) and (len(text) == len(fence) or text[len(fence)] in "\r\n \t"):
        return 0
    m = re.search(r"\n" + re.escape(fence) + r"[ \t]*(?:\r?\n|$)", text)
    return m.start() + 1 if m else -1


class FencedText:
    """The stream of one fenced block whose opening fence was pre-filled (module docstring)."""

    def __init__(self, fence: str) -> None:
        self.fence = fence
        self._parts: list[str] = []
        self._len = 0
        self._closed_at = -1  # where the closing fence line starts in ``text``
        self._repeat = re.compile(r"[ \t]*" + re.escape(fence) + r"[\w.+-]*[ \t]*\n")
        # a closing fence line follows a newline: a fence at the very start of the stream
        # is a repeated opening fence (or an empty body, which is no usable output anyway)
        self._close = re.compile(r"\n" + re.escape(fence) + r"[ \t]*(?:\r?\n|$)")

    @property
    def text(self) -> str:
        """Everything streamed so far."""
        return "".join(self._parts)

    @property
    def closed(self) -> bool:
        return self._closed_at >= 0

    def feed(self, piece: str) -> bool:
        """Append ``piece``; True once the closing fence has arrived."""
        if not piece or self.closed:
            return self.closed
        start = max(0, self._len - len(self.fence) - 2)  # the fence may straddle pieces
        self._parts.append(piece)
        self._len += len(piece)
        m = self._close.search(self.text, start)
        if m is not None:
            self._closed_at = m.start() + 1
        return self.closed

    def through_fence(self) -> str:
        """The text up to the end of the closing fence (all of it when not closed)."""
        text = self.text
        return text[: self._closed_at + len(self.fence)] if self.closed else text

    def _body_text(self) -> str:
        text = self.text
        m = self._repeat.match(text)
        start = m.end() if m else 0
        end = self._closed_at if self.closed else len(text)
        return text[start:end] if end >= start else ""

    def partial_body(self) -> str:
        """The complete lines of the body streamed so far."""
        body = self._body_text()
        return body[: body.rfind("\n") + 1]

    def body(self) -> str | None:
        """The block's body: the text up to the closing fence (or all of it when the stream
        ended without one); None when it holds nothing but white space."""
        body = self._body_text()
        if not self.closed and self.fence != "```":  # an unclosed long fence: ``` may end it
            end = closing_fence_at(body, "```")
            body = body[:end] if end >= 0 else body
        return body if body.strip() else None


def tokens_through_fence(
    target: TargetModel, tokens: Sequence[int], fence: str | None
) -> list[int]:
    """``tokens`` up to and including the one that completes the closing fence line."""
    if fence is None:
        return list(tokens)
    dec, fenced = StreamDecoder(target), FencedText(fence)
    for i, t in enumerate(tokens):
        if fenced.feed(dec.feed([t])) and fenced.text.endswith("\n"):
            return list(tokens[: i + 1])
    return list(tokens)
