"""Run one prompt on a loaded model. The one door every front end and benchmark goes through.

Contract: ``run_prompt(loaded, prompt, opts, max_tokens, ...)`` generates from a ``Prompt``
(``app.runtime.prompt``) on ``loaded`` (``app.runtime.loaded_model.LoadedModel``) with its
``Runner`` (``app.runtime.runner``: the engine in this process, ``local_runner``, or a server,
``remote_engine``) and returns a ``RunResult`` (text, tokens, ``Metrics``, whether the block
closed). It stops at the prompt's closing fence (``app.runtime.stream.FencedText``), when
``stop_when(text so far)`` says so (checked as each line ends) or ``stop_now(text so far)``
does (after every piece), and honours ``cancel`` between target calls; ``on_text`` gets the
decoded text as it streams. ``rewrite``, ``answer`` and every benchmark run through here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ...engine.constraint import Constraint
from ...engine.metrics import Metrics
from .runner import RunResult, TextSink

if TYPE_CHECKING:
    from ..options import RewriteOptions
    from .loaded_model import LoadedModel
    from .prompt import Prompt


def run_prompt(
    loaded: LoadedModel,
    prompt: Prompt,
    opts: RewriteOptions,
    max_tokens: int,
    *,
    on_text: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    metrics: Metrics | None = None,
    cold: bool = False,
    stop_when: Callable[[str], bool] | None = None,
    prediction: Sequence[int] = (),
    constraint: Constraint | None = None,
    stop_now: Callable[[str], bool] | None = None,
) -> RunResult:
    """Generate from ``prompt`` (see the module docstring); ``prediction`` is one more
    lookup source (``local_runner.proposers``); ``constraint`` restricts the tokens in the
    loop (``engine.constraint``; an answer's quotes: ``app.answer.quote_guard``). A model on a
    remote engine runs it there (``app.runtime.remote_engine``), unconstrained."""
    sink = TextSink(prompt.fence, on_text, stop_when, stop_now)
    return loaded.runner.run(
        loaded,
        prompt,
        opts,
        max_tokens,
        sink,
        cancel=cancel,
        metrics=metrics,
        cold=cold,
        prediction=prediction,
        constraint=constraint,
    )
