"""Where one prompt runs: the ``Runner`` protocol, and what every runner reads and returns.

Contract: a ``Runner`` generates one ``Prompt`` for a ``LoadedModel`` and returns a
``RunResult``; the text goes through the run's ``TextSink`` (sent to ``on_text``, read for the
closing fence, checked by ``stop_when``/``stop_now``), which says when the output must stop.
``local`` is True where the engine runs in this process (constraints, warm-up, the KV cache and
the prompt cache apply); ``where`` names the engine (``local``, or a server's URL). Two
implement it: ``app.runtime.local_runner.LocalRunner`` (the engine here) and
``app.runtime.remote_engine.RemoteEngine`` (an OpenAI-compatible server, unconstrained).
``app.runtime.generation.run_prompt`` is the one door that calls them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ...engine.constraint import Constraint
from ...engine.metrics import Metrics
from .stream import FencedText

if TYPE_CHECKING:
    from ..options import RewriteOptions
    from .loaded_model import LoadedModel
    from .prompt import Prompt


@dataclass
class RunResult:
    text: str
    """The decoded output, cut after the closing fence line when there is one."""
    tokens: list[int]
    """The generated token ids (EOS excluded; a block accepted past the fence included)."""
    metrics: Metrics
    fenced: FencedText | None
    """The fenced block read from the output (None for a prompt without a fence)."""

    @property
    def closed(self) -> bool:
        """True when the output reached its closing fence."""
        return self.fenced is not None and self.fenced.closed


class TextSink:
    """The text of one run as it streams in: sent to ``on_text``, read for the closing
    fence (``fence``: the prompt's, or None), checked with ``stop_when`` as lines end and
    with ``stop_now`` after every piece. Every runner feeds it."""

    def __init__(
        self,
        fence: str | None,
        on_text: Callable[[str], None] | None = None,
        stop_when: Callable[[str], bool] | None = None,
        stop_now: Callable[[str], bool] | None = None,
    ) -> None:
        self.parts: list[str] = []
        self.fenced = FencedText(fence) if fence else None
        self.on_text = on_text
        self.stop_when = stop_when
        self.stop_now = stop_now

    def feed(self, piece: str) -> bool:
        """Take ``piece``; False when the output must stop (fence closed, or stop_when)."""
        if not piece:
            return True
        self.parts.append(piece)
        if self.on_text is not None:
            self.on_text(piece)
        if self.fenced is not None and self.fenced.feed(piece):
            return False  # the block is closed
        if self.stop_now is not None and self.stop_now("".join(self.parts)):
            return False
        stop = self.stop_when
        return stop is None or "\n" not in piece or not stop("".join(self.parts))

    def finish(self, tail: str = "") -> str:
        """The output's text, cut after the closing fence when there is one."""
        self.parts.append(tail)
        if self.fenced is not None:
            self.fenced.feed(tail)
        # tokens past the closing fence arrive in the same accepted batch: not part of the text
        return self.fenced.through_fence() if self.fenced is not None else "".join(self.parts)


class Runner(Protocol):
    """Runs one prompt for a loaded model (module docstring)."""

    local: bool
    """True when the engine runs in this process."""
    where: str
    """``local``, or the URL of the server the prompt goes to."""

    def run(
        self,
        loaded: LoadedModel,
        prompt: Prompt,
        opts: RewriteOptions,
        max_tokens: int,
        sink: TextSink,
        *,
        cancel: threading.Event | None = None,
        metrics: Metrics | None = None,
        cold: bool = False,
        prediction: Sequence[int] = (),
        constraint: Constraint | None = None,
    ) -> RunResult:
        """Generate ``prompt`` into ``sink``; ``cold`` starts from an empty cache,
        ``prediction`` is one more lookup source and ``constraint`` restricts the tokens
        (where the runner has a decode loop of its own: ``local``)."""
        ...
