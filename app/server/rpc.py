"""JSON-RPC 2.0 over LSP framing on asyncio streams: the wire layer of ``specedit serve``.

Contract:

* A frame is ``Content-Length: N\\r\\n`` (other headers allowed and ignored) ``\\r\\n`` and N
  bytes of UTF-8 JSON, the header block at most :data:`MAX_HEADER_BYTES`, N at most
  :data:`MAX_CONTENT_LENGTH` (:data:`PREAUTH_MAX_CONTENT` before the connection authenticates),
  the time limits those of :class:`Limits`.
* :class:`Connection` reads frames until EOF and answers every request, in order (batches too):
  bad input gets a JSON-RPC error and never raises out of :meth:`Connection.run` nor affects
  other connections; a frame that cannot be read closes the connection after an error reply
  where one can still be sent.
* :meth:`Connection.notify` never blocks: droppable notifications are skipped once
  :data:`SOFT_BUFFER` bytes wait; at :data:`HARD_BUFFER` the connection is closed.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from lsprotocol.types import ErrorCodes, LSPErrorCodes

__all__ = [
    "CONTENT_MODIFIED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_CONTENT_LENGTH",
    "PREAUTH_MAX_CONTENT",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "REQUEST_FAILED",
    "SERVER_NOT_INITIALIZED",
    "Connection",
    "Limits",
    "RpcError",
    "encode_frame",
]

log = logging.getLogger(__name__)

MAX_CONTENT_LENGTH = 16 * 1024 * 1024
MAX_HEADER_BYTES = 8192
PREAUTH_MAX_CONTENT = 4096
"""Largest body a connection may send before it authenticates (an ``initialize`` with a
token is a few hundred bytes)."""
THREAD_DECODE_BYTES = 256 * 1024
"""Bodies at least this long are decoded in a worker thread, not on the event loop."""
SOFT_BUFFER = 1 << 20
HARD_BUFFER = 64 << 20

PARSE_ERROR = int(ErrorCodes.ParseError)  # -32700
INVALID_REQUEST = int(ErrorCodes.InvalidRequest)  # -32600
METHOD_NOT_FOUND = int(ErrorCodes.MethodNotFound)  # -32601
INVALID_PARAMS = int(ErrorCodes.InvalidParams)  # -32602
INTERNAL_ERROR = int(ErrorCodes.InternalError)  # -32603
SERVER_NOT_INITIALIZED = int(ErrorCodes.ServerNotInitialized)  # -32002
REQUEST_CANCELLED = int(LSPErrorCodes.RequestCancelled)  # -32800
CONTENT_MODIFIED = int(LSPErrorCodes.ContentModified)  # -32801
REQUEST_FAILED = int(LSPErrorCodes.RequestFailed)  # -32803
SUSPECT_RESULT = -32804
"""``rewrite/apply`` of a result that deletes lines the instruction did not ask to remove,
without ``force``."""

Handler = Callable[["Connection", Any], Awaitable[Any]]


class RpcError(Exception):
    """An error to send back as a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


class _FrameError(Exception):
    def __init__(self, error: RpcError | None, fatal: bool) -> None:
        super().__init__(error.message if error else "end of stream")
        self.error = error
        self.fatal = fatal


@dataclass(frozen=True)
class Limits:
    """The time limits of one connection, in seconds: a frame must be whole in ``frame_s``, a
    connection with no work in progress (its ``busy()`` is false) is closed after ``idle_s`` of
    silence, one not authenticated within ``preauth_s`` of connecting is closed. Large bodies
    are decoded off the event loop (:data:`THREAD_DECODE_BYTES`)."""

    frame_s: float = 30.0
    """A frame, once its first byte arrived, must be whole within this (the header timeout)."""
    idle_s: float = 3600.0
    """A connection silent this long, with nothing of its own queued or running, is closed
    (clients reconnect when they next need the server)."""
    preauth_s: float = 10.0
    """A connection that must authenticate (TCP) and has not done so by then is closed."""


def encode_frame(obj: Any) -> bytes:
    """One LSP-framed JSON message."""
    body = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _content_length(block: bytes, limit: int = MAX_CONTENT_LENGTH) -> int:
    length: int | None = None
    for raw in block.split(b"\r\n"):
        if not raw:
            continue
        name, sep, value = raw.partition(b":")
        if not sep:
            raise _FrameError(RpcError(PARSE_ERROR, "malformed header line"), fatal=False)
        if name.strip().lower() == b"content-length":
            value = value.strip()
            if not value.isdigit() or len(value) > 12 or length not in (None, int(value)):
                # where the body ends is unknown: the stream cannot be re-synchronised
                raise _FrameError(RpcError(PARSE_ERROR, "bad Content-Length header"), fatal=True)
            length = int(value)
    if length is None:
        raise _FrameError(RpcError(PARSE_ERROR, "missing Content-Length header"), fatal=False)
    if length > limit:
        msg = f"Content-Length {length} is over the {limit}-byte limit"
        raise _FrameError(RpcError(INVALID_REQUEST, msg), fatal=True)
    return length


async def _read_frame(
    reader: asyncio.StreamReader, first: bytes, limit: int, timeout: float
) -> bytes:
    """The body of the frame that begins with ``first`` (its first byte, already read),
    all of it within ``timeout`` seconds."""
    block = first
    try:
        async with asyncio.timeout(max(timeout, 0.0)):
            try:
                while not block.endswith(b"\r\n\r\n"):  # line by line: lines end with \r\n
                    block += await reader.readuntil(b"\n")
                    if len(block) > MAX_HEADER_BYTES:
                        msg = f"header block over {MAX_HEADER_BYTES} bytes"
                        raise _FrameError(RpcError(PARSE_ERROR, msg), fatal=True)
            except asyncio.IncompleteReadError as e:
                if not (block + e.partial).strip():
                    raise _FrameError(None, fatal=True) from None
                msg = "stream ended inside a header"
                raise _FrameError(RpcError(PARSE_ERROR, msg), True) from None
            except asyncio.LimitOverrunError:
                msg = f"header block over {MAX_HEADER_BYTES} bytes"
                raise _FrameError(RpcError(PARSE_ERROR, msg), fatal=True) from None
            n = _content_length(block[:-4], limit)
            try:
                return await reader.readexactly(n)
            except asyncio.IncompleteReadError:
                raise _FrameError(None, fatal=True) from None
    except TimeoutError:
        msg = f"a frame was not whole within {timeout:g} s"
        raise _FrameError(RpcError(PARSE_ERROR, msg), fatal=True) from None


class Connection:
    """One client: reads frames, dispatches to ``handlers``, writes replies and notifications.

    Bad input never raises out of :meth:`run` and never affects other connections:

    - a header block without a valid ``Content-Length`` -> error -32700 (id null); the block is
      discarded and reading goes on with the next frame;
    - invalid UTF-8 or JSON -> -32700; JSON that is not a request, notification or batch ->
      -32600; an unknown method -> -32601; handlers raise :class:`RpcError` (e.g. -32602); any
      other exception in a handler -> -32603, logged with its traceback;
    - a ``Content-Length`` over the limit, malformed or given twice with different values, a
      header block over its limit, a frame not whole in time, or a stream that ends mid-frame ->
      an error reply where one can still be sent, then the connection is closed.

    Requests are handled in order (handlers are quick: long work is queued elsewhere and
    reported with notifications). Batches (JSON arrays) are supported.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        handlers: dict[str, Handler],
        name: str,
        *,
        authorized: bool = True,
        limits: Limits | None = None,
        busy: Callable[[], bool] = lambda: False,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.handlers = handlers
        self.name = name
        self.closed = False
        self.authorized = authorized
        """False until a handler authenticates the client (TCP); tight limits apply until then."""
        self.limits = limits or Limits()
        self.busy = busy
        """True while the client has work in progress: its silence is then not idleness."""
        self.state: dict[str, Any] = {}
        self.dropped = 0
        """Notifications skipped because the client was not reading."""
        self._auth_deadline = asyncio.get_running_loop().time() + self.limits.preauth_s
        self._eof_sent = False

    # ------------------------------------------------------------------ writing
    def _write(self, obj: Any, droppable: bool = False) -> None:
        if self.closed or self.writer.is_closing() or self._eof_sent:
            return
        waiting = self.writer.transport.get_write_buffer_size()
        if waiting > HARD_BUFFER:
            log.warning("%s: %d bytes unread by the client; closing", self.name, waiting)
            self.close()
            return
        if droppable and waiting > SOFT_BUFFER:
            self.dropped += 1
            return
        try:
            self.writer.write(encode_frame(obj))
        except (OSError, RuntimeError) as e:
            log.info("%s: write failed: %s", self.name, e)
            self.close()

    def notify(self, method: str, params: Any, *, droppable: bool = False) -> None:
        """Send a notification; never blocks. When the client stops reading, a ``droppable`` one
        (progress, previews) is skipped once :data:`SOFT_BUFFER` bytes wait, and the connection
        is closed once :data:`HARD_BUFFER` bytes wait."""
        self._write({"jsonrpc": "2.0", "method": method, "params": params}, droppable)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.writer.close()
            except (OSError, RuntimeError):  # pragma: no cover - already gone
                pass

    async def flush_and_close(self, timeout: float = 2.0) -> None:
        """Close once what was written has gone out (or ``timeout`` seconds have passed)."""
        try:
            await asyncio.wait_for(self._drain(), timeout)
        except (TimeoutError, ConnectionError, OSError):
            pass
        self.close()

    async def refuse(self, err: RpcError, linger_s: float = 0.2) -> None:
        """Send ``err`` (id null) and close, without reading a request."""
        self._write(_error_reply(None, err))
        try:
            await asyncio.wait_for(self._drain(), 1.0)
        except (TimeoutError, ConnectionError, OSError):
            pass
        if linger_s > 0:
            await self._linger(linger_s, cap=1 << 16)
        self.close()

    # ------------------------------------------------------------------ reading
    async def run(self) -> None:
        """Serve until the client closes the stream or sends something unrecoverable."""
        try:
            while not self.closed:
                try:
                    body = await self._next_frame()
                except _FrameError as e:
                    if e.error is not None:
                        log.info("%s: %s", self.name, e.error.message)
                        self._write(_error_reply(None, e.error))
                    if e.fatal:
                        break
                    continue
                reply = await self._handle_body(body)
                if reply is not None:
                    self._write(reply)
                    await self._drain()
                if self.state.get("close_after_reply"):
                    break
        except (ConnectionError, OSError) as e:
            log.info("%s: connection lost: %s", self.name, e)
        finally:
            if not self.closed:
                try:
                    await asyncio.wait_for(self._drain(), 1.0)
                except (TimeoutError, ConnectionError, OSError):
                    pass
                await self._linger()
            self.close()

    def _left(self, seconds: float) -> float:
        """``seconds``, or less: what is left of the time to authenticate."""
        if self.authorized:
            return seconds
        return min(seconds, self._auth_deadline - asyncio.get_running_loop().time())

    async def _next_frame(self) -> bytes:
        """The next frame's body, within the connection's limits: header names are
        case-insensitive, headers other than ``Content-Length`` (``Content-Type``) are ignored, a
        repeated ``Content-Length`` must repeat the same value."""
        while True:
            wait = self._left(self.limits.idle_s)
            try:
                if wait <= 0:
                    raise TimeoutError
                async with asyncio.timeout(wait):
                    first = await self.reader.readexactly(1)
                break
            except asyncio.IncompleteReadError:
                raise _FrameError(None, fatal=True) from None
            except TimeoutError:
                if not self.authorized:
                    s = self.limits.preauth_s
                    msg = f"no initialize with the token within {s:g} s"
                    raise _FrameError(RpcError(SERVER_NOT_INITIALIZED, msg), fatal=True) from None
                if not self.busy():
                    log.info("%s: idle for %g s; closing", self.name, self.limits.idle_s)
                    raise _FrameError(None, fatal=True) from None
        limit = MAX_CONTENT_LENGTH if self.authorized else PREAUTH_MAX_CONTENT
        return await _read_frame(self.reader, first, limit, self._left(self.limits.frame_s))

    async def _linger(self, seconds: float = 0.5, cap: int = 1 << 20) -> None:
        """Half-close, then discard what the client still sends, briefly.

        Closing a socket with unread input makes the kernel reset the connection,
        and a client still sending (after a fatal frame) would lose the error reply.
        """
        loop = asyncio.get_running_loop()
        end, seen = loop.time() + seconds, 0
        try:
            if self.writer.can_write_eof():
                self._eof_sent = True  # nothing more can be sent (a late notification)
                self.writer.write_eof()
            while seen < cap and (left := end - loop.time()) > 0:
                chunk = await asyncio.wait_for(self.reader.read(65536), left)
                if not chunk:
                    break
                seen += len(chunk)
        except (TimeoutError, ConnectionError, OSError, RuntimeError):
            pass

    async def _drain(self) -> None:
        if self.closed:
            return
        try:
            await self.writer.drain()
        except (ConnectionError, OSError):
            self.close()

    async def _handle_body(self, body: bytes) -> Any:
        try:
            if len(body) >= THREAD_DECODE_BYTES:  # megabytes of JSON: not on the event loop
                msg = await asyncio.to_thread(_decode, body)
            else:
                msg = _decode(body)
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            return _error_reply(None, RpcError(PARSE_ERROR, f"invalid JSON: {e}"))
        if isinstance(msg, list):
            if not msg:
                return _error_reply(None, RpcError(INVALID_REQUEST, "empty batch"))
            replies = [r for r in [await self._handle_one(m) for m in msg] if r is not None]
            return replies or None
        return await self._handle_one(msg)

    async def _handle_one(self, msg: Any) -> dict[str, Any] | None:
        if not isinstance(msg, dict):
            return _error_reply(None, RpcError(INVALID_REQUEST, "a message must be an object"))
        mid = msg.get("id")
        has_id = "id" in msg
        if has_id and (isinstance(mid, bool) or not isinstance(mid, int | str | None)):
            return _error_reply(None, RpcError(INVALID_REQUEST, "id must be a number or string"))
        if msg.get("jsonrpc") != "2.0":
            return _error_reply(mid, RpcError(INVALID_REQUEST, 'jsonrpc must be "2.0"'))
        method = msg.get("method")
        if method is None and ("result" in msg or "error" in msg):
            return None  # a response: this server sends no requests, so nothing waits for it
        if not isinstance(method, str):
            return _error_reply(mid, RpcError(INVALID_REQUEST, "method must be a string"))
        params = msg.get("params")
        if "params" in msg and not isinstance(params, dict | list):
            return _error_reply(mid, RpcError(INVALID_REQUEST, "params must be object or array"))
        handler = self.handlers.get(method)
        try:
            if handler is None:
                if not has_id:  # unknown notifications ($/setTrace, ...) are ignored
                    return None
                raise RpcError(METHOD_NOT_FOUND, f"unknown method {method!r}")
            # the id of the request being handled; None for a notification, so a handler
            # never takes an earlier request's id for its own
            self.state["request_id"] = mid if has_id else None
            result = await handler(self, params)
        except RpcError as e:
            if has_id:
                return _error_reply(mid, e)
            log.info("%s: notification %s failed: %s", self.name, method, e.message)
            return None
        except Exception as e:  # a bug: report it, keep serving
            log.exception("%s: %s failed", self.name, method)
            if has_id:
                return _error_reply(mid, RpcError(INTERNAL_ERROR, f"internal error: {e}"))
            return None
        if not has_id:
            return None
        return {"jsonrpc": "2.0", "id": mid, "result": result}


def _decode(body: bytes) -> Any:
    return json.loads(body.decode("utf-8"))


def _error_reply(mid: Any, err: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "error": err.to_json()}
