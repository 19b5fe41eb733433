"""``specedit serve --http [HOST:]PORT``: an OpenAI-compatible HTTP API over one loaded model.

Contract (the wire format is ``app.server.openai_wire``'s, the generation
``app.server.openai_run``'s; README "An OpenAI-compatible API"):

* Routes: ``GET /v1/models`` (the one model, ``owned_by: "specedit"``),
  ``GET /v1/models/{id}``, ``POST /v1/chat/completions``, ``POST /v1/completions``
  (``stream: true`` answers with server-sent events ending ``data: [DONE]``, sent with
  chunked transfer encoding), ``GET /health``. Anything else is a 404 (405 for a known
  path with the wrong method), every error in OpenAI's shape
  ``{"error": {"message", "type", "param", "code"}}``.
* HTTP/1.1 with keep-alive, parsed here (the standard library's asyncio streams; no web
  framework). The bounds are the socket server's (``app.server.rpc``): a header block
  of at most :data:`~specedit.app.server.rpc.MAX_HEADER_BYTES`, a body of at most
  :data:`~specedit.app.server.rpc.MAX_CONTENT_LENGTH` with a ``Content-Length`` (413 / 411
  otherwise, then the connection closes), a request whole within ``Limits.frame_s`` of its
  first byte (408), an idle connection closed after ``Limits.idle_s``, at most
  ``connection_cap()`` connections (503 beyond), at most ``core.MAX_QUEUE`` requests
  waiting (429 beyond). ``Expect: 100-continue`` is answered.
* One model, one generation at a time: requests wait their turn in arrival order and run
  in one worker thread, so the event loop never waits on the model. A client that goes
  away (its connection reaches EOF or a write fails) has its request dropped from the
  queue or, running, cancelled within one target call.
* Authorization: on a loopback address (127.0.0.0/8, ::1, localhost) none. On any other
  address every request needs ``Authorization: Bearer <token>`` (401 otherwise, then the
  connection closes); ``http_serve.http_main`` keeps the token in a 0600 file in the state
  dir (``run/http-token``), created with a random token the first time and printed then,
  once.
* :class:`HttpApi` is the server (``start``/``close``/``stopped``). Running one (the CLI
  entry, a background thread, the token file) is ``app.server.http_serve``'s business.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ...engine.backend import UserError
from ..files import FileError
from ..loaded_model import LoadedModel
from .core import MAX_CONNECTIONS, MAX_QUEUE, connection_cap
from .openai_run import run_request
from .openai_wire import (
    ApiError,
    ApiRequest,
    chunk_body,
    completion_body,
    new_id,
    now,
    parse_request,
)
from .rpc import MAX_CONTENT_LENGTH, MAX_HEADER_BYTES, THREAD_DECODE_BYTES, Limits

log = logging.getLogger(__name__)

__all__ = ["HttpApi", "is_loopback", "parse_address"]

TICK_S = 0.05
"""How often a waiting or running request checks that its client is still there."""
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    411: "Length Required",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}
_ROUTES = {"/v1/chat/completions": "chat", "/v1/completions": "completion"}


def parse_address(value: str) -> tuple[str, int]:
    """``PORT``, ``HOST:PORT`` or ``[V6]:PORT`` -> (host, port); the host defaults to
    127.0.0.1. Raises ``ValueError`` with a message for people."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", value
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http takes [HOST:]PORT, not {value!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Closed(Exception):
    """The connection is over (EOF, a fatal error already answered)."""


class HttpApi:
    """The HTTP server over one :class:`LoadedModel` (see module docstring)."""

    def __init__(
        self,
        loaded: LoadedModel,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        limits: Limits | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        if token is None and not is_loopback(host):
            raise FileError(f"{host} is not a loopback address: a bearer token is required")
        self.loaded = loaded
        self.host, self.port = host, port
        self.token = token
        self.limits = limits or Limits()
        self.max_connections = max_connections
        self.models = [loaded.model_name]
        self.stopped = asyncio.Event()
        self.served = 0
        """Completion requests that ran (any outcome)."""
        self.cancelled = 0
        """Of those, the ones cancelled: their client left, or the server stopped."""
        self._server: asyncio.base_events.Server | None = None
        self._conns: set[asyncio.StreamWriter] = set()
        self._turn = asyncio.Lock()  # FIFO: one generation at a time
        self._waiting = 0
        self._cancels: set[threading.Event] = set()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="specedit-http")
        self._closing = False

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._on_conn, host=self.host, port=self.port, limit=MAX_HEADER_BYTES
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self.max_connections = connection_cap(self.max_connections)
        log.info("HTTP API on %s:%d (token: %s)", self.host, self.port, bool(self.token))

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    async def close(self) -> None:
        """Stop: no new connections, every request cancelled (the running one within a
        target call), then the connections closed."""
        if self._closing:
            await self.stopped.wait()
            return
        self._closing = True
        if self._server is not None:
            self._server.close()
        for ev in list(self._cancels):
            ev.set()
        async with self._turn:  # the running request has ended
            pass
        for w in list(self._conns):
            w.close()
        await asyncio.to_thread(self._pool.shutdown, wait=True)
        self.stopped.set()
        log.info("HTTP API stopped")

    # ------------------------------------------------------------------ connections
    async def _on_conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._conns) >= self.max_connections or self._closing:
            what = "stopping" if self._closing else "at its connection limit"
            err = ApiError(503, f"the server is {what}; retry later", type="server_error")
            with contextlib.suppress(Exception):
                await self._send_error(writer, err, close=True)
            writer.close()
            return
        self._conns.add(writer)
        try:
            while not self._closing:
                if not await self._one(reader, writer):
                    break
        except (_Closed, ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception:  # never lose the server to one connection
            log.exception("HTTP connection failed")
        finally:
            self._conns.discard(writer)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read and answer one request; False when the connection is to close."""
        try:
            async with asyncio.timeout(self.limits.idle_s):
                first = await reader.read(1)
        except TimeoutError:
            return False
        if not first:
            return False
        try:
            async with asyncio.timeout(self.limits.frame_s):
                method, path, headers = await self._head(reader, first)
                if self.token is not None and not self._authorized(headers):
                    err = ApiError(401, "a bearer token is required", code="invalid_api_key")
                    await self._send_error(writer, err, close=True)
                    return False
                body = await self._body(reader, writer, method, headers)
        except TimeoutError:
            err = ApiError(408, f"the request was not whole within {self.limits.frame_s:g} s")
            await self._send_error(writer, err, close=True)
            return False
        except ApiError as e:  # the stream cannot be read on: answer, then close
            await self._send_error(writer, e, close=True)
            return False
        keep = headers.get("connection", "").lower() != "close"
        try:
            await self._route(reader, writer, method, path, body)
        except ApiError as e:
            await self._send_error(writer, e, close=not keep)
        return keep

    async def _head(
        self, reader: asyncio.StreamReader, first: bytes
    ) -> tuple[str, str, dict[str, str]]:
        try:
            block = first + await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            raise ApiError(400, f"the header block is over {MAX_HEADER_BYTES} bytes") from None
        except asyncio.IncompleteReadError:
            raise _Closed from None
        if len(block) > MAX_HEADER_BYTES:
            raise ApiError(400, f"the header block is over {MAX_HEADER_BYTES} bytes")
        lines = block.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise ApiError(400, "malformed request line")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep:
                raise ApiError(400, "malformed header line")
            name = name.strip().lower()
            if name in headers and name == "content-length" and headers[name] != value.strip():
                raise ApiError(400, "Content-Length given twice with different values")
            headers[name] = value.strip()
        return parts[0], parts[1].split("?", 1)[0], headers

    def _authorized(self, headers: dict[str, str]) -> bool:
        scheme, _, given = headers.get("authorization", "").partition(" ")
        expected = (self.token or "").encode()
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), expected)

    async def _body(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        method: str,
        headers: dict[str, str],
    ) -> bytes:
        if "transfer-encoding" in headers:
            raise ApiError(411, "send the body with a Content-Length (no chunked encoding)")
        raw = headers.get("content-length")
        if raw is None:
            if method == "POST":
                raise ApiError(411, "a POST needs a Content-Length")
            return b""
        if not raw.isdigit() or len(raw) > 12:
            raise ApiError(400, "bad Content-Length header")
        n = int(raw)
        if n > MAX_CONTENT_LENGTH:
            raise ApiError(
                413, f"the body is {n:,} bytes, over the {MAX_CONTENT_LENGTH:,}-byte limit"
            )
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await writer.drain()
        try:
            return await reader.readexactly(n)
        except asyncio.IncompleteReadError:
            raise _Closed from None

    # ------------------------------------------------------------------ routes
    async def _route(self, reader, writer, method: str, path: str, body: bytes) -> None:
        if path == "/health":
            return await self._send(writer, 200, {"status": "ok", "model": self.models[0]})
        if path == "/v1/models" or path.startswith("/v1/models/"):
            if method != "GET":
                raise ApiError(405, f"{path} takes GET")
            cards = [self._card(m) for m in self.models]
            if path == "/v1/models":
                return await self._send(writer, 200, {"object": "list", "data": cards})
            name = path[len("/v1/models/") :]
            card = next((c for c in cards if c["id"] == name), None)
            if card is None:
                raise ApiError(404, f"The model {name!r} does not exist", code="model_not_found")
            return await self._send(writer, 200, card)
        kind = _ROUTES.get(path)
        if kind is None:
            raise ApiError(404, f"no route {method} {path}", code="not_found")
        if method != "POST":
            raise ApiError(405, f"{path} takes POST")
        if len(body) >= THREAD_DECODE_BYTES:  # a large body is not the event loop's
            req = await asyncio.to_thread(self._parse, kind, body)
        else:
            req = self._parse(kind, body)
        await self._complete(reader, writer, req)

    def _card(self, model: str) -> dict[str, Any]:
        desc = self.loaded.describe()
        return {
            "id": model,
            "object": "model",
            "created": 0,
            "owned_by": "specedit",
            "specedit": {
                "backend": desc.get("backend"),
                "device": desc.get("device"),
                "n_ctx": desc.get("n_ctx"),
                "prediction": True,
            },
        }

    def _parse(self, kind: str, body: bytes) -> ApiRequest:
        try:
            obj = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise ApiError(400, f"the body is not valid JSON: {e}") from None
        return parse_request(kind, obj, self.models)

    # ------------------------------------------------------------------ generation
    async def _complete(self, reader, writer, req: ApiRequest) -> None:
        if self._waiting >= MAX_QUEUE:
            raise ApiError(
                429, f"{MAX_QUEUE} requests are waiting already; retry later", type="rate_limit"
            )
        cancel = threading.Event()
        self._cancels.add(cancel)
        self._waiting += 1
        try:
            got = await self._wait_turn(reader, cancel)
        finally:
            self._waiting -= 1
        if not got:
            self._cancels.discard(cancel)
            raise _Closed
        try:
            await self._run(reader, writer, req, cancel)
        finally:
            self._turn.release()
            self._cancels.discard(cancel)
            self.served += 1

    async def _wait_turn(self, reader: asyncio.StreamReader, cancel: threading.Event) -> bool:
        """Wait for the model, in arrival order; False when the client left meanwhile."""
        task = asyncio.ensure_future(self._turn.acquire())
        while True:
            done, _ = await asyncio.wait({task}, timeout=TICK_S)
            if done:
                if reader.at_eof() or cancel.is_set():
                    self._turn.release()
                    return False
                return True
            if reader.at_eof() or cancel.is_set():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                if task.done() and not task.cancelled():
                    self._turn.release()
                return False

    async def _run(self, reader, writer, req: ApiRequest, cancel: threading.Event) -> None:
        loop = asyncio.get_running_loop()
        pieces: asyncio.Queue[str] = asyncio.Queue()

        def on_text(text: str) -> None:  # the generation thread's
            loop.call_soon_threadsafe(pieces.put_nowait, text)

        fut = loop.run_in_executor(
            self._pool, run_request, self.loaded, req, on_text if req.stream else None, cancel
        )
        rid, created = new_id(req.kind), now()
        started = False  # stream headers sent (only once text exists: errors stay errors)
        while True:
            done, _ = await asyncio.wait({fut}, timeout=TICK_S)
            if reader.at_eof():
                cancel.set()  # the client is gone: stop within one target call
            if req.stream:
                started = await self._flush(writer, req, rid, created, pieces, started, cancel)
            if done:
                break
        try:
            out = fut.result()
        except ApiError:
            if started:
                raise _Closed from None
            raise
        except UserError as e:
            if started:
                raise _Closed from None
            raise ApiError(400, str(e)) from None
        except Exception as e:
            log.exception("a completion failed")
            if started:
                raise _Closed from None
            raise ApiError(500, f"internal error: {e}", type="server_error") from None
        log.info(
            "%s: %s, %d tokens, %.1f tok/s, %.2f tokens/call",
            rid,
            out.finish,
            out.usage["completion_tokens"],
            out.extra["decode_tps"],
            out.extra["tokens_per_call"],
        )
        if out.finish == "cancelled":  # the client left, or the server is stopping
            self.cancelled += 1
            if self._closing and not started:
                raise ApiError(503, "the server is stopping", type="server_error")
            raise _Closed
        if not req.stream:
            body = completion_body(req, rid, created, out.text, out.finish, out.usage, out.extra)
            return await self._send(writer, 200, body)
        started = await self._flush(writer, req, rid, created, pieces, started, cancel)
        if not started:
            await self._stream_head(writer)
            await self._event(writer, chunk_body(req, rid, created, "", first=True))
        final = chunk_body(req, rid, created, "", out.finish, extra=out.extra)
        await self._event(writer, final)
        if req.include_usage:
            await self._event(writer, chunk_body(req, rid, created, None, usage=out.usage))
        await self._chunk(writer, b"data: [DONE]\n\n")
        await self._chunk(writer, b"")

    async def _flush(self, writer, req, rid, created, pieces, started, cancel) -> bool:
        """Send the text that arrived as chunks; whether the stream has begun."""
        text = ""
        while not pieces.empty():
            text += pieces.get_nowait()
        if not text:
            return started
        try:
            if not started:
                await self._stream_head(writer)
            await self._event(writer, chunk_body(req, rid, created, text, first=not started))
        except ConnectionError:
            cancel.set()
        return True

    # ------------------------------------------------------------------ writing
    async def _send(self, writer, status: int, body: dict[str, Any], close: bool = False) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        head = (
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n"
        )
        writer.write(head.encode("latin-1") + data)
        await writer.drain()

    async def _send_error(self, writer, err: ApiError, close: bool = False) -> None:
        log.info("HTTP %d: %s", err.status, err.message)
        await self._send(writer, err.status, err.to_json(), close=close)

    async def _stream_head(self, writer) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\n"
            b"Content-Type: text/event-stream\r\n"
            b"Cache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        await writer.drain()

    async def _chunk(self, writer, data: bytes) -> None:
        writer.write(b"%x\r\n%s\r\n" % (len(data), data))
        await writer.drain()

    async def _event(self, writer, obj: dict[str, Any]) -> None:
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        await self._chunk(writer, b"data: " + data + b"\n\n")
