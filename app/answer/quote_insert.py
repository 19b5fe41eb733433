"""Inserted quotes: the program chooses and writes an answer's passage.

Contract: ``QuoteInserter(guard, target, on_text)`` serves one ``quote`` answer under a
``QuoteGuard`` (``app.answer.answer`` with ``RewriteOptions.insert_quotes``: the model answers in
its own words, the program quotes):
  * ``pinned(text)`` is the run's ``stop_now``: True once ``guard.completed`` can complete the
    answer (its first passage opened and was chosen or pinned, or it closed);
  * ``on_text`` streams the answer up to its first passage's body; ``finish`` sends the rest, so
    the stream is the final text;
  * ``finish(text, tokens, metrics)`` returns the final text: what ``guard.completed`` gives; an
    answer that ended with no passage, followed by ``guard.evidence``; else ``text`` (cut,
    cancelled, nothing to choose). The metrics then count as generated only the model tokens the
    text keeps (the rest ``dropped_tokens``), the program's text as ``inserted_tokens``, and
    ``stop_reason`` is ``quote_inserted`` when the program wrote any of it.
Text that is not generated cannot be misquoted and costs no decode time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...engine.metrics import Metrics, StopReason
from .quote_guard import QuoteGuard


class QuoteInserter:
    """One answer's inserted passage (module docstring)."""

    def __init__(
        self, guard: QuoteGuard, target, on_text: Callable[[str], None] | None = None
    ) -> None:
        self.guard = guard
        self.target = target
        self.sink = on_text
        self.parts: list[str] = []
        self.sent = 0  # characters of the answer sent to ``sink``

    def pinned(self, text: str) -> bool:
        return self.guard.completed(text.encode()) is not None

    def on_text(self, piece: str) -> None:
        self.parts.append(piece)
        if self.sink is None:
            return
        text = "".join(self.parts)
        raw = text.encode()
        body = self.guard.passage_start(raw)
        upto = len(text) if body is None else len(raw[:body].decode("utf-8", "replace"))
        if upto > self.sent:
            self.sink(text[self.sent : upto])
            self.sent = upto

    def finish(self, text: str, tokens: Sequence[int], metrics: Metrics) -> str:
        raw = b"".join(self.guard.table[t] for t in tokens)  # the bytes the guard read
        done = None if metrics.stop_reason == StopReason.CANCELLED else self.guard.completed(raw)
        if done is not None:
            head = _shared(raw, done)
            while 0 < head < len(done) and done[head] & 0xC0 == 0x80:
                head -= 1  # not inside a character
            kept, end = 0, 0
            for t in tokens:
                end += len(self.guard.table[t])
                if end > head:
                    break
                kept += 1
            text = done.decode("utf-8", "replace")
            metrics.dropped_tokens += len(tokens) - kept  # decoded, then replaced
            metrics.generated_tokens = kept
            if done[head:]:
                metrics.inserted_tokens += len(self.target.tokenize(done[head:].decode()))
                metrics.stop_reason = StopReason.QUOTE_INSERTED
            else:  # the model closed its passage; the answer ends
                metrics.stop_reason = StopReason.EOS
        elif metrics.stop_reason == StopReason.EOS and (ev := self.guard.evidence(raw)) is not None:
            blank = min(2, len(text) - len(text.rstrip("\n")))  # what the stream already has
            added = ev[blank:].decode("utf-8", "replace")
            text += added  # the answer, then its evidence
            metrics.inserted_tokens += len(self.target.tokenize(added))
            metrics.stop_reason = StopReason.QUOTE_INSERTED
        if self.sink is not None and len(text) > self.sent:
            self.sink(text[self.sent :])
        return text


def _shared(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
