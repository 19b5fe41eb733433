"""A drafter that also copies from tokens beside the context: a request's predicted output.

Contract: ``BesideDrafter(inner, source).propose(context, k)`` is
``inner.propose(source + context, k)``: the inner drafter (prompt lookup) sees the
``source`` tokens as if they came before the prompt, so it can copy from them as from
the prompt, and the target never evaluates them. The inner drafter must have been built
for that layout: its spans and prompt length shifted by ``len(source)`` (positions
``0 .. len(source)-1`` are the source). Context grows by appending within one
generation, so the combined sequence is extended, never rebuilt; a shorter context
(a new generation) rebuilds it.

This is how an OpenAI ``prediction`` (Predicted Outputs) becomes a lookup source: the
text the client expects back, e.g. the file being edited, drafted from without being
part of the prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from .draft import Draft, Drafter


class BesideDrafter:
    """``inner`` drafting over ``source + context`` (see module docstring)."""

    def __init__(self, inner: Drafter, source: Sequence[int]) -> None:
        self.inner = inner
        self.source = [int(t) for t in source]
        self._buf: list[int] = list(self.source)
        self._seen = 0  # context tokens appended to _buf

    def propose(self, context: Sequence[int], k: int) -> Draft:
        n = len(context)
        if n < self._seen:  # a new generation: start over
            self._buf, self._seen = list(self.source), 0
        if n > self._seen:
            self._buf.extend(int(t) for t in context[self._seen : n])
            self._seen = n
        return self.inner.propose(self._buf, k)
