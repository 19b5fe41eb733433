"""The job queue of ``specedit serve``: one generation at a time, in order, cancellable.

Contract: :class:`Scheduler` runs each :class:`Job` (a rewrite, ``app.edit.rewrite.rewrite``; an
answer, ``app.server.answers.AnswerJob``, is a job of another ``kind`` on the same queue) first
in, first out, one at a time, in a single worker thread: the asyncio loop never blocks on the
model.

* :meth:`Scheduler.submit` returns at once with the job's queue position. Its owner gets
  ``rewrite/progress`` while it waits and runs (read from the job's own ``Metrics``, at most
  every :data:`TICK_S`), ``rewrite/preview`` as lines of output arrive, and exactly one
  ``rewrite/done`` (``ok`` | ``truncated`` | ``cancelled`` | ``error``).
* :meth:`Scheduler.cancel` works on queued and running jobs (a running one stops after its
  current target call); :meth:`Scheduler.close` cancels everything.
* :meth:`Scheduler.warm` prefills a file's prompt prefix while no rewrite waits (one
  ``rewrite/warmed``); finished jobs are kept for ``rewrite/apply``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from ...engine.backend import UserError
from ...engine.metrics import Metrics
from ..edit.live import LivePreview, Preview
from ..edit.result import Status
from ..edit.rewrite import RewriteResult, rewrite, warm
from ..options import RewriteOptions
from ..runtime.loaded_model import LoadedModel
from .rpc import Connection

log = logging.getLogger(__name__)

TICK_S = 0.1
KEEP_FINISHED = 32
T = TypeVar("T")
_ids = itertools.count(1)


@dataclass
class Job:
    """One rewrite request and everything the server knows about it."""

    kind: ClassVar[str] = "rewrite"
    """The notifications' prefix: ``rewrite/progress``, ``rewrite/done``."""
    owner: Connection
    text: str
    opts: RewriteOptions
    path: str | None = None
    base_sha256: str | None = None
    request_id: Any = None
    id: str = field(default_factory=lambda: f"s{next(_ids)}-{secrets.token_hex(4)}")
    state: str = "queued"  # queued | running | done
    cancel: threading.Event = field(default_factory=threading.Event)
    metrics: Metrics = field(default_factory=Metrics)
    pieces: list[str] = field(default_factory=list)
    result: RewriteResult | None = None
    done: dict[str, Any] | None = None
    created: float = field(default_factory=time.perf_counter)
    started: float | None = None
    preview_seq: int = 0
    _preview: Preview | None = None  # the last preview sent (of no output at first)
    _fed: int = 0  # pieces fed to the preview's stream reader

    def elapsed_ms(self) -> int:
        return int((time.perf_counter() - self.created) * 1000)

    def progress_fields(self) -> dict[str, Any]:
        """What ``{kind}/progress`` carries besides its session, state and queue place."""
        return self.metrics.progress()  # the figures' one source and their wire names

    def done_fields(self, extra: dict[str, Any]) -> dict[str, Any]:
        """What ``{kind}/done`` carries besides its session, status, message and stats."""
        return {
            "output": extra.get("output"),
            "hunks": extra.get("hunks", []),
            "validation": extra.get("validation"),
            "suspect": extra.get("suspect"),
            "verdicts": extra.get("verdicts", []),
        }

    def stats(self) -> Metrics:
        return self.result.stats if self.result is not None else self.metrics

    async def run(self, scheduler: Scheduler) -> None:
        """Run on the scheduler's model (its one worker thread); end with ``finish``."""
        await scheduler.run_rewrite(self)


@dataclass
class Warm:
    """One warm-up request: prefill the prompt prefix of ``text`` for later rewrites."""

    owner: Connection
    text: str
    path: str | None
    region: tuple[int, int] | None = None
    id: int = field(default_factory=lambda: next(_ids))
    interrupt: threading.Event = field(default_factory=threading.Event)


def _validation(job: Job, new_text: str | None) -> dict[str, Any] | None:
    """Syntax errors before and after, from tree-sitter (``app.code.syntax``); None if unknown."""
    from ..code import syntax

    lang = syntax.language_for_path(job.path) if job.path else None
    if lang is None or new_text is None:
        return None
    before = syntax.count_errors(job.text, lang)
    after = syntax.count_errors(new_text, lang)
    return {"language": lang, "errorsBefore": before, "errorsAfter": after, "ok": after <= before}


class Scheduler:
    """FIFO queue of jobs over one :class:`LoadedModel`.

    For rewrites; an answer (``app.server.answers.AnswerJob``) is a :class:`Job` of another
    ``kind`` on the same queue: its notifications are ``answer/progress`` and ``answer/done``,
    and it runs its own :meth:`Job.run` through :meth:`run_in_pool`.

    * :meth:`submit` queues a :class:`Job` and returns at once with its 1-based queue position
      (0 when it starts right away). Jobs run strictly first in, first out, one at a time, in a
      single worker thread (``app.edit.rewrite.rewrite``); the asyncio loop never blocks on the
      model.
    * While a job waits, its owner gets ``rewrite/progress`` with ``state: "queued"`` and its
      ``queuePosition`` whenever that changes. While it runs, a ticker sends
      ``rewrite/progress`` (``state: "running"``) at most every :data:`TICK_S` seconds, read
      from the job's own ``Metrics`` (the single source of figures), and ``rewrite/preview``
      whenever a new complete line of output arrived (``app.edit.live.LivePreview``, in
      full-text line numbers).
    * Every job ends with exactly one ``rewrite/done`` (``ok`` | ``truncated`` | ``cancelled``
      | ``error``). :meth:`cancel` works on queued and running jobs (a running one stops after
      its current target call: one prefill chunk, ``engine.prefill.CHUNK`` tokens, or one
      decode step); :meth:`cancel_owner` cancels all jobs (and the warm-up) of a vanished
      client; :meth:`close` cancels everything and returns once the running job has sent its
      ``rewrite/done``.
    * Previews are computed in a worker thread (a diff of a large text is not the event
      loop's).
    * Finished jobs are kept (the newest :data:`KEEP_FINISHED`) for ``rewrite/apply``.
    * :meth:`warm` queues a warm-up of a file (``app.edit.rewrite.warm``): at most one waits,
      the newest; it runs only while no rewrite waits, a submitted rewrite or a newer warm-up
      interrupts it between two chunks, and its owner gets one ``rewrite/warmed`` (``done`` |
      ``cached`` | ``interrupted`` | ``superseded`` | ``error``).
    """

    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded = loaded
        self.queue: deque[Job] = deque()
        self.running: Job | None = None
        self.jobs: OrderedDict[str, Job] = OrderedDict()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="specedit-gen")
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.completed = 0
        self._warm: Warm | None = None  # the pending warm-up
        self.warming: Warm | None = None  # the running one
        self._closing = False

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="scheduler")

    async def close(self) -> None:
        """Cancel every job and warm-up; return once the running one has finished (within
        one target call) and sent its ``rewrite/done``."""
        self._closing = True
        self._warm = None
        for job in list(self.queue):
            self.cancel(job.id)
        if self.running is not None:
            self.cancel(self.running.id)
        if self.warming is not None:
            self.warming.interrupt.set()
        self._wake.set()
        if self._task is not None:
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        await asyncio.to_thread(self._pool.shutdown, wait=True)  # idle by now

    # ------------------------------------------------------------------ public
    def active(self, owner: Connection) -> bool:
        """True while ``owner`` has a job queued or running, or a warm-up pending or running."""
        if any(w is not None and w.owner is owner for w in (self._warm, self.warming)):
            return True
        return any(j.owner is owner for j in (self.running, *self.queue) if j is not None)

    def submit(self, job: Job) -> int:
        self.jobs[job.id] = job
        self.queue.append(job)
        if self.warming is not None:  # a rewrite never waits for more than a chunk of one
            self.warming.interrupt.set()
        self._wake.set()
        position = len(self.queue) if self.running is not None else 0
        if position:  # after the rewrite/start response, which the caller is about to send
            asyncio.get_running_loop().call_soon(self._queued_progress, job)
        return position

    def warm(self, w: Warm) -> None:
        """Queue a warm-up; it replaces a waiting one and interrupts a running one."""
        if self._warm is not None:
            self._warmed(self._warm, {"status": "superseded"})
        self._warm = w
        if self.warming is not None:
            self.warming.interrupt.set()
        self._wake.set()

    def get(self, job_id: str) -> Job | None:
        return self.jobs.get(job_id)

    def cancel(self, job_id: str) -> bool:
        """Cancel a queued or running job; False if unknown or already finished."""
        job = self.jobs.get(job_id)
        if job is None or job.state == "done":
            return False
        job.cancel.set()
        if job.state == "running":  # it stops after the target call in flight
            m = job.metrics
            log.info(
                "session %s: cancelling (%s, %d of %d prompt tokens read, %d generated)",
                job.id,
                m.phase,
                m.read_tokens,
                m.read_total,
                m.generated_tokens,
            )
        if job.state == "queued":
            try:
                self.queue.remove(job)
            except ValueError:  # pragma: no cover - picked up meanwhile
                return True
            self.finish(job, "cancelled", message="cancelled while queued")
            self._queue_changed()
        return True

    def cancel_owner(self, owner: Connection) -> int:
        if self._warm is not None and self._warm.owner is owner:
            self._warm = None
        if self.warming is not None and self.warming.owner is owner:
            self.warming.interrupt.set()
        ids = [j.id for j in self.jobs.values() if j.owner is owner and j.state != "done"]
        return sum(self.cancel(i) for i in ids)

    def queue_position(self, job: Job) -> int:
        try:
            return self.queue.index(job) + 1
        except ValueError:
            return 0

    # ------------------------------------------------------------------ running jobs
    def progress(self, job: Job, position: int = 0) -> None:
        job.owner.notify(
            f"{job.kind}/progress",
            {
                "sessionId": job.id,
                "state": job.state,
                "queuePosition": position,
                **job.progress_fields(),
                "elapsedMs": job.elapsed_ms(),
            },
            droppable=True,
        )

    def _queued_progress(self, job: Job) -> None:
        if job.state == "queued":
            self.progress(job, self.queue_position(job))

    def _queue_changed(self) -> None:
        for i, job in enumerate(self.queue, start=1):
            self.progress(job, i)

    @staticmethod
    def _preview_hunks(job: Job, live: LivePreview) -> list[dict[str, Any]] | None:
        """The preview's hunks when another line arrived (None if none did); a worker
        thread's."""
        pieces = job.pieces[job._fed :]
        job._fed += len(pieces)
        for piece in pieces:
            live.feed(piece)
        before, now = job._preview, live.preview()
        if now is before:
            return None
        job._preview = now
        return [h.to_json() for h in now.hunks]

    async def _preview(self, job: Job, live: LivePreview) -> None:
        hunks = await asyncio.to_thread(self._preview_hunks, job, live)
        if hunks is None or job.state == "done":
            return
        job.preview_seq += 1
        job.owner.notify(
            "rewrite/preview",
            {"sessionId": job.id, "seq": job.preview_seq, "hunks": hunks},
            droppable=True,
        )

    def finish(self, job: Job, status: str, *, message: str = "", **extra: Any) -> None:
        job.state = "done"
        job.done = {
            "sessionId": job.id,
            "status": status,
            "message": message,
            **job.done_fields(extra),
            "stats": job.stats().snapshot(),
        }
        job.done["stats"]["elapsedMs"] = job.elapsed_ms()
        job.owner.notify(f"{job.kind}/done", job.done)
        job.pieces = []  # the raw stream is in job.result now; previews are over
        self.completed += 1
        while len(self.jobs) > KEEP_FINISHED + len(self.queue) + 1:
            oldest = next(iter(self.jobs))
            if self.jobs[oldest].state != "done":
                break
            del self.jobs[oldest]
        m = job.metrics
        log.info(
            "session %s: %s %s (%d of %d prompt tokens read, %d generated)",
            job.id,
            status,
            message,
            m.read_tokens,
            m.read_total,
            m.generated_tokens,
        )

    def _warmed(self, w: Warm, result: dict[str, Any]) -> None:
        if not w.owner.closed:
            w.owner.notify("rewrite/warmed", {"warmId": w.id, "path": w.path, **result})

    async def _run_warm(self, w: Warm) -> None:
        if w.owner.closed:
            return
        self.warming = w
        try:
            fut = asyncio.get_running_loop().run_in_executor(
                self._pool,
                lambda: warm(
                    self.loaded, w.text, path=w.path, region=w.region, interrupt=w.interrupt
                ),
            )
            result = (await fut).to_json()
        except UserError as e:
            result = {"status": "error", "message": str(e)}
        except Exception as e:  # a warm-up only ever saves time: report, carry on
            log.exception("warm-up %d failed", w.id)
            result = {"status": "error", "message": f"internal error: {e}"}
        finally:
            self.warming = None
        self._warmed(w, result)

    async def _loop(self) -> None:
        while not self._closing:
            while not self.queue and self._warm is None and not self._closing:
                self._wake.clear()
                await self._wake.wait()
            if self._closing:
                return
            if not self.queue:
                w, self._warm = self._warm, None
                if w is not None:
                    await self._run_warm(w)
                continue
            job = self.queue.popleft()
            self._queue_changed()
            if job.owner.closed:
                job.cancel.set()
            self.running = job
            try:
                await job.run(self)
            except Exception as e:  # never lose the queue to one bad job
                log.exception("session %s failed", job.id)
                if job.state != "done":
                    self.finish(job, "error", message=f"internal error: {e}")
            finally:
                self.running = None

    def _work(self, job: Job) -> tuple[RewriteResult, dict[str, Any] | None]:
        res = rewrite(
            self.loaded,
            job.text,
            job.opts,
            path=job.path,
            on_text=job.pieces.append,
            cancel=job.cancel,
            metrics=job.metrics,
        )
        validation = _validation(job, res.new_text) if res.status == Status.OK else None
        return res, validation

    def begin(self, job: Job) -> bool:
        """Mark ``job`` running (True), or finish it as cancelled before it started."""
        if job.cancel.is_set():
            self.finish(job, "cancelled", message="cancelled before it started")
            return False
        job.state = "running"
        job.started = time.perf_counter()
        return True

    async def run_in_pool(
        self, job: Job, work: Callable[[], T], tick: Callable[[], Awaitable]
    ) -> T:
        """``work()`` in the model's worker thread; ``tick()`` every :data:`TICK_S` until
        it returns (its exceptions are ``work``'s to raise, ``tick``'s are logged)."""
        fut = asyncio.get_running_loop().run_in_executor(self._pool, work)
        self.progress(job)
        while True:
            done, _ = await asyncio.wait({fut}, timeout=TICK_S)
            if done:
                return fut.result()
            try:
                await tick()
            except Exception:  # a progress line or preview is a nicety; the result counts
                log.exception("session %s: progress failed", job.id)

    async def run_rewrite(self, job: Job) -> None:
        if not self.begin(job):
            return
        log.info(
            "session %s: running (%d chars, region %s)", job.id, len(job.text), job.opts.region
        )
        live = await asyncio.to_thread(LivePreview, job.text, job.opts.region)  # scans the text
        job._preview = live.preview()  # no output yet: nothing to send

        async def tick() -> None:
            self.progress(job)
            await self._preview(job, live)

        try:
            res, validation = await self.run_in_pool(job, lambda: self._work(job), tick)
        except UserError as e:
            self.finish(job, "error", message=str(e))
            return
        job.result = res
        self.progress(job)
        if res.status == Status.CANCELLED:
            self.finish(job, "cancelled", message=res.message)
        elif res.status == Status.TRUNCATED:  # the completed part's hunks, never "delete the rest"
            hunks = [h.to_json() for h in res.hunks]
            self.finish(job, "truncated", message=res.message, hunks=hunks)
        elif res.status != Status.OK:
            self.finish(job, "error", message=res.message)
        else:
            self.finish(
                job,
                "ok",
                message=res.message,
                output=res.new_text,
                hunks=[h.to_json() for h in res.hunks],
                validation=validation,
                suspect=res.suspect.to_json() if res.suspect else None,
                verdicts=[v.to_json() for v in res.verdicts],
            )
