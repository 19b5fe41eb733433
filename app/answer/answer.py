"""Answer a question from context files with a loaded model: the one path every front end uses.

Contract: ``answer(loaded, question, context_files, opts, ...)`` returns an ``AnswerResult``
(the text, its ``Metrics``, its citations checked against the files by ``app.answer.quotes``).
The files are the lookup's draft sources (``app.answer.prompts``). In the ``quote`` style with
``opts.verbatim`` a quoted passage can only copy its file (``app.answer.quote_guard``); with
``opts.insert_quotes`` the program writes the passage (``app.answer.quote_insert``). A prompt
that leaves no room for an answer raises ``FileError``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from ...engine.metrics import Metrics
from ..options import RewriteOptions
from ..runtime.generation import run_prompt
from ..runtime.loaded_model import LoadedModel
from ..store.files import FileError
from .prompts import answer_prompt
from .quotes import Citation, all_found, check_citations


@dataclass
class AnswerResult:
    text: str
    metrics: Metrics
    citations: list[Citation]
    """The answer's quotes, each checked against the context files (``app.answer.quotes``)."""

    def to_json(self) -> dict:
        return {
            "output": self.text,
            "citations": [c.to_json() for c in self.citations],
            "quotes_found": all_found(self.citations),
            "stats": self.metrics.snapshot(),
        }


def answer_prompt_style(style: str, opts: RewriteOptions, local: bool = True) -> str:
    """The prompt ``answer`` asks ``style`` with (``app.answer.prompts.answer_messages``): the free
    one when the program writes the passages (the quote style, guarded and inserting, on
    a ``local`` model; ``answer`` reads that it inserts from this), else ``style``'s own."""
    inserting = style == "quote" and opts.verbatim and opts.insert_quotes and local
    return "free" if inserting else style


def answer(
    loaded: LoadedModel,
    question: str,
    context_files: list[tuple[str, str]],
    opts: RewriteOptions,
    *,
    on_text: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    style: str = "quote",
    metrics: Metrics | None = None,
) -> AnswerResult:
    """Answer ``question`` from ``context`` files, which are the lookup's draft sources, and
    check the answer's quotes against them (``style``: ``app.answer.prompts.answer_messages``). In
    the ``quote`` style with ``opts.verbatim`` a quoted passage can only copy its file
    (``app.answer.quote_guard``), and with ``opts.insert_quotes`` the program chooses and writes
    the evidence: the model answers in its own words (the ``free`` prompt, which is right
    more often than the quote prompt's), and the program writes the passage where the answer
    opens one, else after its end (``app.answer.quote_insert``; ``Metrics.inserted_tokens`` counts
    what it wrote). ``metrics``, when given, is filled as the answer runs (a live
    status line)."""
    guarded = style == "quote" and opts.verbatim and loaded.runner.local
    prompt_style = answer_prompt_style(style, opts, local=loaded.runner.local)
    inserting = prompt_style != style  # the model answers, the program quotes
    prompt = answer_prompt(loaded.target, question, context_files, prompt_style)
    room = prompt.room(loaded.target.n_ctx)
    if room < 16:
        raise FileError(
            f"the context files are {len(prompt):,} tokens; the {loaded.target.n_ctx:,}-token "
            "context has no room left for an answer"
        )
    max_tokens = min(opts.max_tokens or 512, room)
    guard = ins = None
    if guarded:
        from .quote_guard import QuoteGuard

        guard = QuoteGuard(loaded.target, context_files, question, own_blocks=inserting)
        if inserting:
            from .quote_insert import QuoteInserter

            ins = QuoteInserter(guard, loaded.target, on_text)
    gen = run_prompt(
        loaded,
        prompt,
        opts,
        max_tokens,
        on_text=on_text if ins is None else ins.on_text,
        cancel=cancel,
        metrics=metrics,
        constraint=guard,
        stop_now=None if ins is None else ins.pinned,
    )
    text = gen.text if ins is None else ins.finish(gen.text, gen.tokens, gen.metrics)
    return AnswerResult(text, gen.metrics, check_citations(text, context_files))
