"""Questions about files, answered with checked quotes: ``answer/start`` of ``specedit serve``.

Contract (the wire form is in ``docs/protocol.md``):

* :func:`answer_job` turns ``answer/start``'s params into an :class:`AnswerJob`, reading the
  context files sent without a text from disk (``app.store.files.read_source``; -32803 naming
  one that cannot be read, -32602 beyond 4,000,000 bytes together). It blocks: the server
  calls it in a worker thread.
* An :class:`AnswerJob` is a ``jobs.Job`` of kind ``answer``: queued with the rewrites and
  cancelled the same ways, it runs ``app.answer.answer`` in the model's worker thread.
* Its owner gets ``answer/progress`` (the whole answer so far, so a dropped notification loses
  nothing, and the live figures) and exactly one ``answer/done``: ``done`` with citations
  checked against the context files (``app.answer.quotes``), ``cancelled`` or ``error``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ...engine.backend import UserError
from ..answer.answer import AnswerResult, answer
from ..answer.quotes import all_found
from ..store.files import MAX_SOURCE_BYTES, FileError, read_source
from .jobs import Job
from .params import AnswerParams, parse_answer
from .rpc import INVALID_PARAMS, REQUEST_FAILED, Connection, RpcError

if TYPE_CHECKING:
    from .jobs import Scheduler

log = logging.getLogger(__name__)

__all__ = ["AnswerJob", "answer_job"]


@dataclass
class AnswerJob(Job):
    """One question (``text``) over ``files``, and what the server knows about it.

    A ``jobs.Job`` of kind ``answer``: it waits in the same queue as rewrites (first in, first
    out, one generation at a time) and is cancelled the same ways (``rewrite/cancel`` or its
    alias ``answer/cancel``, ``$/cancelRequest``, its client leaving, the server stopping). It
    runs ``app.answer.answer`` in the model's worker thread.

    Its owner gets ``answer/progress`` ``{sessionId, state, queuePosition, elapsedMs}``: when it
    is queued and its place changes, and while it runs, with ``seq`` and ``text`` (the whole
    answer so far, so a dropped notification loses nothing) and the live figures
    ``rewrite/progress`` has (``Metrics.progress``), at most every ``jobs.TICK_S`` and only when
    the text grew. It ends with exactly one ``answer/done`` ``{sessionId, status, message,
    output, citations, quotesFound, stats}``: ``status`` ``done`` (``citations`` are
    ``Citation.to_json()``, checked against the context files by ``app.answer.quotes``;
    ``quotesFound`` is ``app.answer.quotes.all_found``), ``cancelled`` or ``error`` (``output``
    null, ``citations`` empty, ``message`` says why).
    """

    kind: ClassVar[str] = "answer"
    files: list[tuple[str, str]] = field(default_factory=list)
    """``(path, text)`` of the context files, as the prompt names them and quotes are checked."""
    style: str = "quote"
    """``quote`` (citations, with the guard when ``opts.verbatim``) or ``free``."""
    reply: AnswerResult | None = None
    """The finished answer (None until it is done, and for a cancelled one)."""
    seq: int = 0
    _sent: int = -1  # pieces in the last progress sent

    def progress_fields(self) -> dict[str, Any]:
        if self.state != "running":
            return {}
        return {**super().progress_fields(), "seq": self.seq, "text": "".join(list(self.pieces))}

    def done_fields(self, extra: dict[str, Any]) -> dict[str, Any]:
        res = extra.get("answer")
        cites = res.citations if res is not None else []
        return {
            "output": res.text if res is not None else None,
            "citations": [c.to_json() for c in cites],
            "quotesFound": res is not None and all_found(cites),
        }

    def _work(self, scheduler: Scheduler) -> AnswerResult:
        return answer(
            scheduler.loaded,
            self.text,
            self.files,
            self.opts,
            on_text=self.pieces.append,
            cancel=self.cancel,
            style=self.style,
            metrics=self.metrics,
        )

    async def _tick(self, scheduler: Scheduler) -> None:
        n = len(self.pieces)
        if n != self._sent:
            self._sent, self.seq = n, self.seq + 1
            scheduler.progress(self)

    async def run(self, scheduler: Scheduler) -> None:
        if not scheduler.begin(self):
            return
        chars = sum(len(t) for _, t in self.files)
        log.info(
            "session %s: answering (%d files, %d chars, %s)",
            self.id,
            len(self.files),
            chars,
            self.style,
        )
        self._sent = 0
        try:
            res = await scheduler.run_in_pool(
                self, lambda: self._work(scheduler), lambda: self._tick(scheduler)
            )
        except UserError as e:
            scheduler.finish(self, "error", message=str(e))
            return
        self.metrics = res.metrics  # the stats and the log line are the run's
        if self.cancel.is_set():
            scheduler.finish(self, "cancelled", message="cancelled while it was written")
            return
        await self._tick(scheduler)  # the last piece, before the done
        self.reply = res
        found = sum(c.found for c in res.citations)
        note = f"{found} of {len(res.citations)} quotes found"
        scheduler.finish(self, "done", message=note, answer=res)


def _read(i: int, path: str) -> str:
    try:
        return read_source(path).text
    except FileError as e:
        raise RpcError(REQUEST_FAILED, f"contextFiles[{i}]: {e}") from None


def answer_job(owner: Connection, params: Any, request_id: Any = None) -> AnswerJob:
    """The job of ``answer/start``'s ``params`` (``params.parse_answer``); blocks on the files.

    Context files sent without a text are read from disk (an absolute path, the rules of
    ``app.store.files.read_source``: UTF-8 text of at most 4,000,000 bytes; one that cannot be
    read is a -32803 error naming it). The texts are at most 4,000,000 bytes together (-32602
    beyond)."""
    p: AnswerParams = parse_answer(params)
    files = [
        (path, _read(i, path) if text is None else text) for i, (path, text) in enumerate(p.files)
    ]
    total = sum(len(t) if t.isascii() else len(t.encode("utf-8", "replace")) for _, t in files)
    if total > MAX_SOURCE_BYTES:
        raise RpcError(
            INVALID_PARAMS, f"the context files are over {MAX_SOURCE_BYTES:,} bytes together"
        )
    return AnswerJob(
        owner=owner,
        text=p.question,
        opts=p.opts,
        request_id=request_id,
        files=files,
        style=p.style,
    )
