"""``specedit serve --http [HOST:]PORT``: an OpenAI-compatible HTTP API over one loaded model.

Contract (the wire format is ``app.server.openai_wire``'s, the generation
``app.server.openai_run``'s, the queue ``app.server.http_generation``'s; README "An
OpenAI-compatible API"):

* Served by Starlette on uvicorn (h11, with the bounds of ``app.server.http_conn``): no HTTP is
  parsed or framed here. Routes: ``GET /v1/models``, ``GET /v1/models/{id}``,
  ``POST /v1/chat/completions``, ``POST /v1/completions`` (``stream: true``: server-sent
  events), ``GET /health``; every error in OpenAI's shape.
* Bounds: the socket server's (``app.server.rpc``), each answered with its HTTP status.
* Authorization: none on a loopback address; elsewhere ``Authorization: Bearer <token>`` on
  every request (the token file is ``app.server.http_serve``'s).
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
import socket
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..runtime.loaded_model import LoadedModel
from ..store.files import FileError
from .core import MAX_CONNECTIONS, connection_cap
from .http_conn import BoundedH11, bounded_protocol
from .http_generation import Generations
from .openai_wire import ApiError, ApiRequest, parse_request
from .rpc import MAX_CONTENT_LENGTH, MAX_HEADER_BYTES, THREAD_DECODE_BYTES, Limits

log = logging.getLogger(__name__)

__all__ = ["HttpApi", "is_loopback", "parse_address"]

CLOSING_STATUSES = frozenset({401, 408, 411, 413})
"""Errors after which the connection closes: what follows on it cannot be trusted."""
SHUTDOWN_GRACE_S = 5.0
"""How long a stopping server waits for its connections once every request has ended."""
_KINDS = {"/v1/chat/completions": "chat", "/v1/completions": "completion"}


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


def error_response(err: ApiError, *, close: bool = False) -> JSONResponse:
    """``err`` in OpenAI's shape, with its status (and ``Connection: close`` where due)."""
    log.info("HTTP %d: %s", err.status, err.message)
    close = close or err.status in CLOSING_STATUSES
    headers = {"Connection": "close"} if close else None
    return JSONResponse(err.to_json(), status_code=err.status, headers=headers)


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc)


async def _route_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's routing errors (404, 405) in OpenAI's shape."""
    assert isinstance(exc, HTTPException)
    path = request.url.path
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        return error_response(ApiError(405, f"{path} takes {allowed or 'another method'}"))
    if exc.status_code == 404:
        err = ApiError(404, f"no route {request.method} {path}", code="not_found")
        return error_response(err)
    return error_response(ApiError(exc.status_code, str(exc.detail)))


async def read_body(request: Request) -> bytes | None:
    """The request's body within the bounds (``HttpApi``: 411, 413); None when the client left
    while sending it (or its 408 cut it off)."""
    length = request.headers.get("content-length")  # h11 has checked that it is a number
    if length is None and "transfer-encoding" not in request.headers:
        raise ApiError(411, "a POST needs a Content-Length (or a chunked body)")
    if length is not None and int(length) > MAX_CONTENT_LENGTH:
        raise ApiError(
            413, f"the body is {int(length):,} bytes, over the {MAX_CONTENT_LENGTH:,}-byte limit"
        )
    body = bytearray()
    try:
        async for piece in request.stream():
            body += piece
            if len(body) > MAX_CONTENT_LENGTH:
                raise ApiError(413, f"the body is over the {MAX_CONTENT_LENGTH:,}-byte limit")
    except ClientDisconnect:
        return None
    return bytes(body)


class _Gate:
    """ASGI middleware: the header block's bound, then (with a token) every request needs
    ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.expected = token.encode() if token is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            err = self._refusal(scope)
            if err is not None:
                return await error_response(err, close=True)(scope, receive, send)
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> ApiError | None:
        headers = scope["headers"]
        # h11 bounds a header block that arrives in parts; one that came whole is measured
        # here: the request line and each "name: value\r\n"
        size = len(scope["method"]) + len(scope.get("raw_path") or b"") + 12
        size += sum(len(k) + len(v) + 4 for k, v in headers)
        if size > MAX_HEADER_BYTES:
            return ApiError(400, f"the header block is over {MAX_HEADER_BYTES} bytes")
        if self.expected is None:
            return None
        kind, _, given = dict(headers).get(b"authorization", b"").partition(b" ")
        if kind.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self.expected):
            return ApiError(401, "a bearer token is required", code="invalid_api_key")
        return None


class _Completions:
    """The ASGI endpoint of ``POST /v1/chat/completions`` and ``POST /v1/completions``."""

    def __init__(self, api: HttpApi) -> None:
        self.api = api

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        body = await read_body(request)
        if body is None:
            return  # the client left (or was answered 408): nobody to answer
        kind = _KINDS[request.url.path]
        if len(body) >= THREAD_DECODE_BYTES:  # a large body is not the event loop's
            req = await asyncio.to_thread(self.api.parse, kind, body)
        else:
            req = self.api.parse(kind, body)
        await self.api.generations.respond(req, scope, receive, send)


class _Uvicorn(uvicorn.Server):
    """uvicorn's server without its signal handlers: ``http_serve`` stops it through
    :meth:`HttpApi.close`, which cancels the running generation first."""

    @contextlib.contextmanager
    def capture_signals(self):  # type: ignore[override]
        yield


class HttpApi:
    """The HTTP server over one :class:`LoadedModel`.

    * Routes: ``GET /v1/models`` (the one model, ``owned_by: "specedit"``),
      ``GET /v1/models/{id}``, ``POST /v1/chat/completions``, ``POST /v1/completions``
      (``stream: true`` answers with server-sent events ending ``data: [DONE]``),
      ``GET /health``. Anything else is a 404 (405 for a known path with the wrong method),
      every error in OpenAI's shape ``{"error": {"message", "type", "param", "code"}}``.
    * Bounds: a header block of at most :data:`~specedit.app.server.rpc.MAX_HEADER_BYTES`
      (h11's limit: 400 beyond); a body of at most
      :data:`~specedit.app.server.rpc.MAX_CONTENT_LENGTH` (413, counted as it arrives for a
      chunked one), a POST with neither a ``Content-Length`` nor a chunked body is a 411; a
      request whole within ``Limits.frame_s`` of its first byte (408); an idle connection
      closed after ``Limits.idle_s``; at most ``connection_cap()`` connections (503 beyond); at
      most ``core.MAX_QUEUE`` requests waiting (429 beyond). After a 401, 408, 411 or 413 the
      connection closes (the rest of its input cannot be trusted).
    * One model, one generation at a time, a client that leaves cancelled within one target
      call: ``app.server.http_generation``.
    * Authorization: on a loopback address (127.0.0.0/8, ::1, localhost) none. On any other
      address every request needs ``Authorization: Bearer <token>`` (401 otherwise);
      ``http_serve.http_main`` keeps the token in a 0600 file in the state dir
      (``run/http-token``), created with a random token the first time and printed then, once.
    """

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
        self.generations = Generations(loaded)
        self.app = self._app()
        self._protocol: type[BoundedH11] | None = None
        self._server: _Uvicorn | None = None
        self._serving: asyncio.Task[None] | None = None

    @property
    def served(self) -> int:
        """Completion requests that ran (any outcome)."""
        return self.generations.served

    @property
    def cancelled(self) -> int:
        """Of those, the ones cancelled: their client left, or the server stopped."""
        return self.generations.cancelled

    @property
    def _closing(self) -> bool:
        return self.generations.closing

    @property
    def connections(self) -> int:
        """Open connections now."""
        return len(self._server.server_state.connections) if self._server else 0

    # ------------------------------------------------------------------ the app
    def _app(self) -> Starlette:
        routes = [
            Route("/health", self._health, methods=["GET"]),
            Route("/v1/models", self._list_models, methods=["GET"]),
            Route("/v1/models/{name:path}", self._model, methods=["GET"]),
            *(Route(path, _Completions(self), methods=["POST"]) for path in _KINDS),
        ]
        app = Starlette(
            routes=routes,
            exception_handlers={ApiError: _api_error, HTTPException: _route_error},
        )
        app.add_middleware(_Gate, token=self.token)
        return app

    async def _health(self, request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "model": self.models[0]})

    async def _list_models(self, request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [self._card(m) for m in self.models]})

    async def _model(self, request: Request) -> JSONResponse:
        name = request.path_params["name"]
        if name not in self.models:
            raise ApiError(404, f"The model {name!r} does not exist", code="model_not_found")
        return JSONResponse(self._card(name))

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

    def parse(self, kind: str, body: bytes) -> ApiRequest:
        try:
            obj = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise ApiError(400, f"the body is not valid JSON: {e}") from None
        return parse_request(kind, obj, self.models)

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Listen (an ``OSError`` if the address cannot be had) and serve in a task."""
        self.max_connections = connection_cap(self.max_connections)
        self._protocol = bounded_protocol(self.limits, self.max_connections)
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.create_server((self.host, self.port), family=family)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            http=self._protocol,
            lifespan="off",
            log_config=None,
            proxy_headers=False,
            server_header=False,
            timeout_keep_alive=self.limits.idle_s,  # type: ignore[arg-type]
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,  # type: ignore[arg-type]
            h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        )
        self._server = _Uvicorn(config)
        self._serving = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:  # uvicorn says so once it listens
            if self._serving.done():
                sock.close()
                self._serving.result()
                raise RuntimeError("uvicorn stopped before it served")
            await asyncio.sleep(0.01)
        log.info("HTTP API on %s:%d (token: %s)", self.host, self.port, bool(self.token))

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    async def close(self) -> None:
        """Stop: no new connections, every request cancelled (the running one within a
        target call), then the connections closed."""
        if self.generations.closing:
            await self.stopped.wait()
            return
        if self._protocol is not None:
            self._protocol.closing = True
        await self.generations.close()
        if self._server is not None and self._serving is not None:
            self._server.should_exit = True
            await self._serving
        self.stopped.set()
        log.info("HTTP API stopped")
