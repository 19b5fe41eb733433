"""The generations of ``specedit serve --http``: one at a time, in order, cancellable.

Contract: :meth:`Generations.respond` answers one checked completion request on an ASGI
connection (``receive``/``send``), after its turn:

* **One model, one generation at a time**, in arrival order, in one worker thread
  (``openai_run.run_request``): the event loop never waits on the model. At most
  ``core.MAX_QUEUE`` wait (``429`` beyond).
* **A client that leaves** is dropped from the queue or, running, cancelled within one target
  call; :meth:`Generations.close` does the same to every request.
* **The answer**: one JSON body, or server-sent events ending ``data: [DONE]``; a stream cut
  short ends without ``[DONE]``, so clients read it as an answer that did not end.
* Errors are raised as :class:`~specedit.app.server.openai_wire.ApiError` (the HTTP layer
  answers them); a model's :class:`UserError` is a 400, anything else a logged 500.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from ...engine.backend import UserError
from ..runtime.loaded_model import LoadedModel
from .core import MAX_QUEUE
from .openai_run import Outcome, run_request
from .openai_wire import (
    SSE_DONE,
    ApiError,
    ApiRequest,
    chunk_body,
    completion_body,
    new_id,
    now,
    sse_event,
)

log = logging.getLogger(__name__)

__all__ = ["Generations"]

SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


@dataclass(eq=False)
class _Call:
    """One request's stop signals: ``cancel`` for the generation thread, ``stop`` for the
    event loop; both are set when the client leaves or the server stops."""

    cancel: threading.Event = field(default_factory=threading.Event)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    def end(self) -> None:
        self.cancel.set()
        self.stop.set()


async def _watch(receive: Receive, call: _Call) -> None:
    """End ``call`` when its client disconnects (the body has been read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    call.end()


class _Stream:
    """The server-sent events of one streamed answer."""

    def __init__(self, req: ApiRequest, send: Send) -> None:
        self.req, self.send = req, send
        self.rid, self.created = new_id(req.kind), now()
        self.started = False
        """Headers sent: from here on an error can only cut the stream short."""

    async def _event(self, obj: dict[str, Any] | None) -> None:
        body = sse_event(obj) if obj is not None else SSE_DONE
        await self.send({"type": "http.response.body", "body": body, "more_body": True})

    async def text(self, text: str) -> None:
        if not self.started:
            await self.send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        await self._event(
            chunk_body(self.req, self.rid, self.created, text, first=not self.started)
        )
        self.started = True

    async def follow(self, fut: asyncio.Future, pieces: asyncio.Queue[str]) -> None:
        """Send the text as it arrives, until the generation ends."""
        while True:
            get = asyncio.ensure_future(pieces.get())
            done, _ = await asyncio.wait({fut, get}, return_when=asyncio.FIRST_COMPLETED)
            if get not in done:
                get.cancel()  # an item it had not taken stays in the queue
                break
            text = get.result()
            while not pieces.empty():
                text += pieces.get_nowait()
            await self.text(text)
        rest = ""
        while not pieces.empty():
            rest += pieces.get_nowait()
        if rest:
            await self.text(rest)

    async def finish(self, out: Outcome) -> None:
        req, rid, created = self.req, self.rid, self.created
        if not self.started:
            await self.text("")
        await self._event(chunk_body(req, rid, created, "", out.finish, extra=out.extra))
        if req.include_usage:
            await self._event(chunk_body(req, rid, created, None, usage=out.usage))
        await self._event(None)
        await self.end()

    async def end(self) -> None:
        await self.send({"type": "http.response.body", "body": b"", "more_body": False})


class Generations:
    """The queue and the worker thread over one :class:`LoadedModel` (:meth:`respond`)."""

    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded = loaded
        self.served = 0
        """Completion requests that ran (any outcome)."""
        self.cancelled = 0
        """Of those, the ones cancelled: their client left, or the server stopped."""
        self.closing = False
        self._turn = asyncio.Lock()
        self._waiting = 0
        self._calls: set[_Call] = set()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="specedit-http")

    async def close(self) -> None:
        """End every request; return once the running one has (within one target call)."""
        self.closing = True
        for call in list(self._calls):
            call.end()
        async with self._turn:
            pass
        await asyncio.to_thread(self._pool.shutdown, wait=True)

    async def respond(self, req: ApiRequest, scope: Scope, receive: Receive, send: Send) -> None:
        """Wait for the model, generate ``req``'s answer and send it.

        * Requests wait in arrival order (an ``asyncio.Lock`` is first in, first out); at most
          ``core.MAX_QUEUE`` wait, one more gets ``429``. The generation
          (``openai_run.run_request``) runs in one worker thread, so the event loop never waits
          on the model.
        * A client that leaves (ASGI's ``http.disconnect``) is dropped from the queue or,
          running, cancelled within one target call; it is sent nothing. :meth:`close` does the
          same to every request (a request not yet answered gets ``503``) and returns once the
          running one has ended.
        * Without ``stream``: one JSON body. With it: server-sent events
          (``openai_wire.sse_event``) whose headers go out with the first text, so an error
          before any text is still an error response; then the final chunk (``finish_reason``
          and specedit's stats), the usage chunk when asked for, and ``data: [DONE]``. A stream
          cut short (its generation cancelled or failed after text went out) ends without
          ``[DONE]``: clients read that as an answer that did not end.
        """
        if self.closing:
            raise ApiError(503, "the server is stopping", type="server_error")
        if self._waiting >= MAX_QUEUE:
            raise ApiError(
                429, f"{MAX_QUEUE} requests are waiting already; retry later", type="rate_limit"
            )
        call = _Call()
        self._calls.add(call)
        watch = asyncio.ensure_future(_watch(receive, call))
        try:
            if not await self._wait_turn(call):
                if self.closing:
                    raise ApiError(503, "the server is stopping", type="server_error")
                return  # the client left: nobody to answer
            self.served += 1  # counted before any reply goes out, so a client sees it
            try:
                await self._run(req, call, scope, receive, send)
            finally:
                self._turn.release()
        finally:
            watch.cancel()
            self._calls.discard(call)

    async def _wait_turn(self, call: _Call) -> bool:
        """Wait for the model in arrival order; False (not holding it) once ``call`` ended."""
        self._waiting += 1
        acquire = asyncio.ensure_future(self._turn.acquire())
        stop = asyncio.ensure_future(call.stop.wait())
        try:
            await asyncio.wait({acquire, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._waiting -= 1
            stop.cancel()
            if not acquire.done():
                acquire.cancel()
                await asyncio.gather(acquire, return_exceptions=True)
        held = acquire.done() and not acquire.cancelled() and acquire.exception() is None
        if held and call.stop.is_set():
            self._turn.release()
            return False
        return held

    async def _run(
        self, req: ApiRequest, call: _Call, scope: Scope, receive: Receive, send: Send
    ) -> None:
        loop = asyncio.get_running_loop()
        pieces: asyncio.Queue[str] = asyncio.Queue()

        def on_text(text: str) -> None:  # the generation thread's
            loop.call_soon_threadsafe(pieces.put_nowait, text)

        sink = on_text if req.stream else None
        fut = loop.run_in_executor(self._pool, run_request, self.loaded, req, sink, call.cancel)
        stream = _Stream(req, send) if req.stream else None
        if stream is not None:
            await stream.follow(fut, pieces)
        else:
            await asyncio.wait({fut})
        try:
            out = fut.result()
        except Exception as e:
            err = e if isinstance(e, ApiError) else None
            if isinstance(e, UserError):
                err = ApiError(400, str(e))
            elif err is None:
                log.exception("a completion failed")
                err = ApiError(500, f"internal error: {e}", type="server_error")
            if stream is not None and stream.started:
                log.info("HTTP stream cut short: %s", err.message)
                return await stream.end()
            raise err from None
        log.info(
            "%s: %s, %d tokens, %.1f tok/s, %.2f tokens/call",
            req.kind,
            out.finish,
            out.usage["completion_tokens"],
            out.extra["decode_tps"],
            out.extra["tokens_per_call"],
        )
        if out.finish == "cancelled":  # the client left, or the server is stopping
            self.cancelled += 1
            if stream is not None and stream.started:
                return await stream.end()  # without [DONE]: the answer did not end
            if self.closing:
                raise ApiError(503, "the server is stopping", type="server_error")
            return
        if stream is not None:
            return await stream.finish(out)
        rid, created = new_id(req.kind), now()
        body = completion_body(req, rid, created, out.text, out.finish, out.usage, out.extra)
        await JSONResponse(body)(scope, receive, send)
