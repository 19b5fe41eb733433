"""The connection bounds of ``specedit serve --http``, on uvicorn's h11 protocol.

Contract: :func:`bounded_protocol` returns the protocol class uvicorn runs each connection
with: uvicorn's own ``H11Protocol`` (h11 parses the requests and frames the responses) with the
bounds the socket server has (``app.server.rpc``):

* **At most ``cap`` connections.** One more is answered ``503`` and closed before it is read.
* **A request whole within ``Limits.frame_s`` of its first byte**, else ``408`` and the
  connection closes; a connection that sends nothing for ``Limits.idle_s`` is closed.
* **Input that is not HTTP** gets uvicorn's ``400``, in OpenAI's error shape.

Every error body is :meth:`ApiError.to_json` (``app.server.openai_wire``); the 503 and the 408
bytes are written here (:func:`raw_response`), everything else is h11's.
"""

from __future__ import annotations

import asyncio
import http
import json
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .openai_wire import ApiError
from .rpc import Limits

log = logging.getLogger(__name__)

__all__ = ["bounded_protocol", "error_bytes", "raw_response"]


def error_bytes(err: ApiError) -> bytes:
    """The JSON body of an error response."""
    return json.dumps(err.to_json(), ensure_ascii=False).encode("utf-8")


def raw_response(err: ApiError) -> bytes:
    """A whole ``Connection: close`` response for a connection with no request to answer."""
    body = error_bytes(err)
    head = (
        f"HTTP/1.1 {err.status} {http.HTTPStatus(err.status).phrase}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body


class BoundedH11(H11Protocol):
    """uvicorn's h11 protocol with the bounds of the module docstring.

    * h11 does keep-alive, chunked bodies, pipelining and ``Expect: 100-continue``.
    * The 503 beyond ``cap`` comes before the connection is read: uvicorn's own
      ``limit_concurrency`` answers per request, in plain text.
    * The request timer runs from a request's first byte until it is whole (headers and body);
      uvicorn times out only between requests, hence the idle timer too.
    * The header block is bounded by h11 while it arrives (``h11_max_incomplete_event_size``)
      and, once whole, by ``http_api``.
    * The 503 and the 408 go to a connection that has no request h11 could answer, so their
      bytes are written by :func:`raw_response`.
    """

    limits: Limits = Limits()
    cap: int = 128
    closing: bool = False
    """Set by the server while it stops: a new connection is refused with 503."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._deadline: asyncio.TimerHandle | None = None
        """A request's: from its first byte until it is whole."""
        self._idle: asyncio.TimerHandle | None = None
        """A new connection's, until its first byte (then uvicorn's keep-alive timer)."""
        self._refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.cap or self.closing:
            what = "stopping" if self.closing else "at its connection limit"
            err = ApiError(503, f"the server is {what}; retry later", type="server_error")
            log.info("HTTP 503: %s", err.message)
            self._refused, self.transport = True, transport
            transport.write(raw_response(err))
            transport.close()
            return
        super().connection_made(transport)
        self._idle = self.loop.call_later(self.limits.idle_s, self._idle_out)

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self._deadline, self._idle):
            if timer is not None:
                timer.cancel()
        if not self._refused:
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        before = self.conn.their_state
        if before is h11.IDLE and self._deadline is None:  # a request's first byte
            self._deadline = self.loop.call_later(self.limits.frame_s, self._too_slow)
        super().data_received(data)
        after = self.conn.their_state
        whole = after in (h11.DONE, h11.MUST_CLOSE, h11.ERROR) or (
            before is not h11.IDLE and after is h11.IDLE  # whole, answered, next cycle begun
        )
        if whole and self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def send_400_response(self, msg: str) -> None:
        log.info("HTTP 400: %s", msg)
        body = error_bytes(ApiError(400, msg))
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", b"%d" % len(body)),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event))
        self.transport.close()

    def _idle_out(self) -> None:
        self._idle = None
        if not self.transport.is_closing():
            log.info("HTTP: a connection silent for %g s closed", self.limits.idle_s)
            self.transport.close()

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle  # the last request's until this one's head is whole
        if cycle is None or cycle.response_complete or not cycle.response_started:
            err = ApiError(408, f"the request was not whole within {self.limits.frame_s:g} s")
            log.info("HTTP 408: %s", err.message)
            self.transport.write(raw_response(err))
        self.transport.close()


def bounded_protocol(limits: Limits, cap: int) -> type[BoundedH11]:
    """A :class:`BoundedH11` subclass with these bounds (uvicorn makes one per connection)."""
    return type("BoundedH11", (BoundedH11,), {"limits": limits, "cap": cap})
