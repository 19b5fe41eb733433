"""The server of ``specedit serve``: one loaded model, served to editor plugins over a socket.

Contract (the wire protocol is documented in ``docs/protocol.md``):

* :class:`Server` listens on a Unix socket only its user reaches and, with ``tcp=True``, on
  127.0.0.1 behind the discovery file's token; a live server on the path: :class:`AlreadyRunning`.
* Methods: ``initialize``, ``rewrite/start``, ``rewrite/warm``, ``answer/start``,
  ``rewrite/cancel``, ``$/cancelRequest``, ``rewrite/apply``, ``refactor/rename``, ``shutdown``,
  ``exit``; long work is queued and reported by notifications (``app.server.jobs``,
  ``app.server.answers``); a client that disconnects has its sessions cancelled.
* Bounds: at most :func:`connection_cap` connections, each within ``rpc.Limits``; params are
  read in a worker thread. Stopping cancels every job, and the running one's owner still gets
  its ``rewrite/done`` before the connections close.

Running one (the CLI entry, a background thread) is ``app.server.serve``'s business.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import resource
import secrets
import time
from pathlib import Path
from typing import Any

from ..edit.result import Status
from ..runtime.loaded_model import LoadedModel
from ..store.files import ConflictError, FileError, read_source, write_atomic
from .answers import answer_job
from .jobs import Job, Scheduler, Warm
from .params import parse_apply, parse_start, parse_warm, session_id
from .paths import (
    AlreadyRunning,
    claim,
    default_socket_path,
    discovery_path,
    peer_uid,
    release,
    write_discovery,
)
from .renames import rename_request
from .rpc import (
    CONTENT_MODIFIED,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_HEADER_BYTES,
    REQUEST_FAILED,
    SERVER_NOT_INITIALIZED,
    SUSPECT_RESULT,
    Connection,
    Limits,
    RpcError,
)

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
SERVER_VERSION = "0.1.0"
MAX_QUEUE = 64
"""Queued (not yet running) rewrites and answers from all clients; more get -32803."""
MAX_CONNECTIONS = 128
"""Open connections at most (fewer where the file-descriptor limit is low: connection_cap)."""
FD_RESERVE = 32
"""File descriptors kept free of connections: for refusing one more, the log, the model."""

__all__ = ["MAX_CONNECTIONS", "PROTOCOL_VERSION", "AlreadyRunning", "Server", "connection_cap"]


def connection_cap(wanted: int = MAX_CONNECTIONS) -> int:
    """``wanted``, or as many connections as the free file descriptors allow less
    :data:`FD_RESERVE` (at least 1), from the soft ``RLIMIT_NOFILE`` and the descriptors open now."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        in_use = len(os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"))
    except (OSError, ValueError):
        return wanted
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - in_use - FD_RESERVE))


class Server:
    """The socket server over one :class:`LoadedModel`.

    * It listens on a Unix socket (directory 0700, socket 0600, peers of another uid refused via
      ``SO_PEERCRED``) and, with ``tcp=True``, on 127.0.0.1 only, where a connection must send
      the discovery file's random token in ``initialize`` before anything else. The discovery
      file ``{socket, pid, protocolVersion, model[, tcp]}`` is written (0600) once the server
      listens and removed when it stops; a live server on the same path makes :meth:`start`
      raise :class:`AlreadyRunning`, a stale one is cleaned up.
    * Methods: ``initialize``, ``rewrite/start`` (returns ``{sessionId}`` at once),
      ``rewrite/warm`` (returns ``{warmId}`` at once; prefills a file's prompt prefix while the
      model is idle and reports ``rewrite/warmed``), ``answer/start`` (returns ``{sessionId}`` at
      once; a question answered over context files with checked quotes,
      ``app.server.answers``, queued with the rewrites), ``rewrite/cancel`` (alias
      ``answer/cancel``), ``$/cancelRequest`` (cancels the session its request started),
      ``rewrite/apply`` (atomic write with backup; -32801 when the file changed),
      ``refactor/rename`` (a Python rename by rope, ``app.server.renames``: no model, no write;
      answered at once from a worker thread, never queued behind a rewrite), ``shutdown`` then
      ``exit`` (stops the server; ``exit`` alone just closes that connection). Notifications
      ``rewrite/progress``, ``rewrite/preview`` and ``rewrite/done`` come from
      ``app.server.jobs``, ``answer/progress`` and ``answer/done`` from ``app.server.answers``.
    * Bounds: at most :func:`connection_cap` connections at once (:data:`MAX_CONNECTIONS`,
      fewer where the file-descriptor limit is low): one more gets a -32803 error and is closed,
      so the server never runs out of descriptors and no client hangs. Each connection has the
      time limits of :class:`~specedit.app.server.rpc.Limits` (a TCP one must authenticate
      within ``preauth_s`` and sends at most ``rpc.PREAUTH_MAX_CONTENT`` bytes a frame until
      then). Request params are validated, and their text parsed (tree-sitter for ``expand:
      node``), in a worker thread: the event loop never waits on a large text.
    * Stopping (``shutdown``+``exit``, SIGTERM, SIGINT, :meth:`close`) cancels every job; the
      running one ends within one prefill chunk or decode step, and its owner still gets its
      ``rewrite/done`` (``cancelled``) before the connections close.
    """

    def __init__(
        self,
        loaded: LoadedModel,
        socket_path: Path | None = None,
        *,
        tcp: bool = False,
        lock_fd: int | None = None,
        limits: Limits | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.loaded = loaded
        self.socket_path = Path(socket_path) if socket_path else default_socket_path()
        self.discovery = discovery_path(self.socket_path)
        self.tcp = tcp
        self.token = secrets.token_urlsafe(32) if tcp else None
        self.tcp_port: int | None = None
        self.scheduler = Scheduler(loaded)
        self.connections: set[Connection] = set()
        self.limits = limits or Limits()
        self.max_connections = max_connections
        """Set from :func:`connection_cap` when the server starts."""
        self.refused = 0
        """Connections refused because ``max_connections`` were open."""
        self._refusing = 0
        self._refused_logged = 0.0
        self._closing = False
        self.stopped = asyncio.Event()
        self._servers: list[asyncio.base_events.Server] = []
        self._lock_fd = lock_fd
        self._shutdown_requested = False
        self._tasks: set[asyncio.Task[None]] = set()
        self.handlers = {
            "initialize": self._initialize,
            "rewrite/start": self._start,
            "rewrite/warm": self._warm,
            "rewrite/cancel": self._cancel,
            "answer/start": self._answer,
            "answer/cancel": self._cancel,
            "$/cancelRequest": self._cancel_request,
            "rewrite/apply": self._apply,
            "refactor/rename": self._rename,
            "shutdown": self._shutdown,
            "exit": self._exit,
        }

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        if self._lock_fd is None:
            self._lock_fd = claim(self.socket_path)
        try:
            srv = await asyncio.start_unix_server(
                self._on_unix, path=os.fspath(self.socket_path), limit=MAX_HEADER_BYTES
            )
            os.chmod(self.socket_path, 0o600)
            self._servers.append(srv)
            info: dict[str, Any] = {
                "socket": os.fspath(self.socket_path),
                "pid": os.getpid(),
                "protocolVersion": PROTOCOL_VERSION,
                "model": self.loaded.model_name,
            }
            if self.tcp:
                tsrv = await asyncio.start_server(
                    self._on_tcp, host="127.0.0.1", port=0, limit=MAX_HEADER_BYTES
                )
                self._servers.append(tsrv)
                self.tcp_port = tsrv.sockets[0].getsockname()[1]
                info["tcp"] = {"host": "127.0.0.1", "port": self.tcp_port, "token": self.token}
            write_discovery(self.discovery, info)
        except BaseException:
            await self._release()
            raise
        self.max_connections = connection_cap(self.max_connections)
        self.scheduler.start()
        log.info(
            "listening on %s (tcp port %s, at most %d connections)",
            self.socket_path,
            self.tcp_port,
            self.max_connections,
        )

    async def close(self) -> None:
        """Stop: no new connections, every job cancelled (the running one within a chunk,
        its owner told), then the connections closed and the socket removed."""
        if self._closing:
            await self.stopped.wait()
            return
        self._closing = True
        for srv in self._servers:
            srv.close()
        await self.scheduler.close()
        # the last notifications (a cancelled rewrite's done) reach their clients first
        await asyncio.gather(*(c.flush_and_close() for c in list(self.connections)))
        await self._release()
        self.stopped.set()
        log.info("server stopped")

    async def _release(self) -> None:
        for path in (self.discovery, self.socket_path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        if self._lock_fd is not None:
            release(self.socket_path, self._lock_fd)
            self._lock_fd = None

    # ------------------------------------------------------------------ connections
    async def _on_unix(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        uid = peer_uid(writer.get_extra_info("socket"))
        if uid != os.getuid():
            log.warning("refused a connection from uid %s", uid)
            writer.close()
            return
        await self._serve(reader, writer, "unix", authorized=True)

    async def _on_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        await self._serve(reader, writer, f"tcp {peer}", authorized=False)

    async def _serve(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        name: str,
        authorized: bool,
    ) -> None:
        conn = Connection(
            reader, writer, self.handlers, name, authorized=authorized, limits=self.limits
        )
        conn.busy = lambda: self.scheduler.active(conn)
        if len(self.connections) >= self.max_connections or self._closing:
            await self._refuse(conn)
            return
        self.connections.add(conn)
        log.debug("%s: connected (%d open)", conn.name, len(self.connections))
        try:
            await conn.run()
        finally:
            self.connections.discard(conn)
            n = self.scheduler.cancel_owner(conn)
            log.debug("%s: gone; cancelled %d sessions", conn.name, n)

    async def _refuse(self, conn: Connection) -> None:
        self.refused += 1
        now = time.monotonic()
        if now - self._refused_logged > 10:  # a flood of clients is one line, not thousands
            self._refused_logged = now
            log.warning(
                "%d connections open: refusing more (%d refused so far)",
                len(self.connections),
                self.refused,
            )
        what = (
            "stopping" if self._closing else f"at its limit of {self.max_connections} connections"
        )
        err = RpcError(REQUEST_FAILED, f"the server is {what}; retry later")
        # lingering (so that the reply is read, not reset) holds a descriptor: only a few may
        self._refusing += 1
        try:
            await conn.refuse(err, linger_s=0.2 if self._refusing <= FD_RESERVE // 4 else 0.0)
        finally:
            self._refusing -= 1

    def _check_auth(self, conn: Connection) -> None:
        if not conn.authorized:
            raise RpcError(SERVER_NOT_INITIALIZED, "send initialize with the token first")

    # ------------------------------------------------------------------ methods
    async def _initialize(self, conn: Connection, params: Any) -> dict[str, Any]:
        params = params if isinstance(params, dict) else {}
        if not conn.authorized:
            token = params.get("token")
            expected = (self.token or "").encode()
            # bytes: compare_digest raises TypeError for a str that is not ASCII
            if not isinstance(token, str) or not hmac.compare_digest(token.encode(), expected):
                conn.state["close_after_reply"] = True
                raise RpcError(INVALID_PARAMS, "wrong or missing token")
            conn.authorized = True
        for key in ("client", "version"):
            if key in params and not isinstance(params[key], str):
                raise RpcError(INVALID_PARAMS, f"{key} must be a string")
        conn.state["client"] = params.get("client", "?")
        log.info(
            "%s: initialize from %s %s", conn.name, conn.state["client"], params.get("version")
        )
        desc = self.loaded.describe()
        return {
            "server": "specedit",
            "version": SERVER_VERSION,
            "protocolVersion": PROTOCOL_VERSION,
            "model": self.loaded.model_name,
            "backend": desc.get("backend"),
            "device": desc.get("device"),
            "nCtx": desc.get("n_ctx"),
            "batchExact": desc.get("batch_exact"),
        }

    def _check_open(self, conn: Connection) -> None:
        self._check_auth(conn)
        if self._shutdown_requested or self._closing:
            raise RpcError(INVALID_REQUEST, "the server is shutting down")

    def _submit(self, conn: Connection, job: Job) -> int:
        """Queue ``job`` (its queue position), remembering its request for $/cancelRequest."""
        if self._shutdown_requested or self._closing:  # it began stopping during the parse
            raise RpcError(INVALID_REQUEST, "the server is shutting down")
        if len(self.scheduler.queue) >= MAX_QUEUE:
            raise RpcError(REQUEST_FAILED, f"{MAX_QUEUE} sessions are waiting already; retry later")
        if job.request_id is not None:  # a start sent as a notification has no id to cancel by
            by_request = conn.state.setdefault("by_request", {})
            by_request[job.request_id] = job.id
            if len(by_request) > 256:
                del by_request[next(iter(by_request))]
        return self.scheduler.submit(job)

    async def _start(self, conn: Connection, params: Any) -> dict[str, Any]:
        self._check_open(conn)
        request_id = conn.state.get("request_id")  # before the await: the next request's
        p = await asyncio.to_thread(parse_start, params)  # a large text: not on the loop
        job = Job(
            owner=conn,
            text=p.text,
            opts=p.opts,
            path=p.path,
            base_sha256=p.base_sha256,
            request_id=request_id,
        )
        position = self._submit(conn, job)
        return {"sessionId": job.id, "queuePosition": position, "range": p.range_json}

    async def _answer(self, conn: Connection, params: Any) -> dict[str, Any]:
        self._check_open(conn)
        request_id = conn.state.get("request_id")
        job = await asyncio.to_thread(answer_job, conn, params, request_id)  # reads files
        return {"sessionId": job.id, "queuePosition": self._submit(conn, job)}

    async def _warm(self, conn: Connection, params: Any) -> dict[str, Any]:
        self._check_open(conn)
        text, path, region = await asyncio.to_thread(parse_warm, params)
        w = Warm(owner=conn, text=text, path=path, region=region)
        self.scheduler.warm(w)
        return {"warmId": w.id}

    async def _cancel(self, conn: Connection, params: Any) -> dict[str, Any]:
        self._check_auth(conn)
        sid = session_id(params)
        if self.scheduler.get(sid) is None:
            raise RpcError(INVALID_PARAMS, f"unknown session {sid!r}")
        return {"cancelled": self.scheduler.cancel(sid)}

    async def _cancel_request(self, conn: Connection, params: Any) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("id"), int | str):
            raise RpcError(INVALID_PARAMS, "$/cancelRequest needs {id}")
        sid = conn.state.get("by_request", {}).get(params["id"])
        if sid is not None:
            self.scheduler.cancel(sid)

    async def _apply(self, conn: Connection, params: Any) -> dict[str, Any]:
        self._check_auth(conn)
        p = parse_apply(params)
        job = self.scheduler.get(p.session_id)
        if job is None:
            raise RpcError(INVALID_PARAMS, f"unknown session {p.session_id!r}")
        res = job.result
        if job.state == "done" and res is not None and res.status == Status.TRUNCATED:
            raise RpcError(REQUEST_FAILED, f"session {job.id} was cut short: {res.message}")
        if job.state != "done" or res is None or res.new_text is None:
            raise RpcError(REQUEST_FAILED, f"session {job.id} has no finished rewrite to apply")
        if res.suspect is not None and not p.force:
            raise RpcError(
                SUSPECT_RESULT, f"{res.suspect.message}; send force: true to apply it anyway"
            )
        log.info("%s: apply session %s to %s", conn.name, job.id, p.path)
        return await asyncio.to_thread(_apply_job, job, p.path, p.hunk_ids)

    async def _rename(self, conn: Connection, params: Any) -> dict[str, Any]:
        self._check_open(conn)
        return await asyncio.to_thread(rename_request, params)  # rope, maybe a file read

    async def _shutdown(self, conn: Connection, params: Any) -> None:
        self._check_auth(conn)
        self._shutdown_requested = True
        conn.state["shutdown"] = True
        for job in list(self.scheduler.queue):
            self.scheduler.cancel(job.id)
        if self.scheduler.running is not None:
            self.scheduler.running.cancel.set()
        return None

    async def _exit(self, conn: Connection, params: Any) -> None:
        if conn.state.get("shutdown"):
            task = asyncio.get_running_loop().create_task(self.close())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        conn.close()


def _apply_job(job: Job, path: str, hunk_ids: list[int] | None) -> dict[str, Any]:
    """Write the job's accepted hunks to ``path`` (atomic, backed up, sha-checked)."""
    from ..code.diff import apply_hunks

    assert job.result is not None
    hunks = job.result.hunks
    if hunk_ids is not None:
        known = {h.id for h in hunks}
        unknown = sorted(set(hunk_ids) - known)
        if unknown:
            raise RpcError(INVALID_PARAMS, f"unknown hunk ids {unknown}")
        hunks = [h for h in hunks if h.id in set(hunk_ids)]
    try:
        src = read_source(path)
        expected = job.base_sha256 or _sha_of_text(job.text)
        if src.sha256 != expected:
            raise ConflictError(f"{path} changed since the rewrite started (sha256 mismatch)")
        new_text = apply_hunks(job.text, hunks)
        res = write_atomic(src, new_text)
    except ConflictError as e:
        raise RpcError(CONTENT_MODIFIED, str(e)) from None
    except FileError as e:
        raise RpcError(REQUEST_FAILED, str(e)) from None
    except ValueError as e:
        raise RpcError(REQUEST_FAILED, f"cannot apply the hunks: {e}") from None
    return {
        "path": os.fspath(res.path),
        "backup": os.fspath(res.backup_path) if res.backup_path else None,
        "sha256": res.sha256,
        "appliedHunks": [h.id for h in hunks],
    }


def _sha_of_text(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()
