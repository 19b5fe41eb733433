"""Running ``specedit serve``: the command, and a server in a background thread.

Contract:

* :func:`serve_main` is the CLI entry: it logs to ``<state>/logs/server.log`` (rotated, private;
  asyncio's own logger too, each of its messages at most once a minute, and then never to
  stderr), claims the socket before loading the model (so a second server is refused at
  once, and a model that fails to load leaves no ``rpc.lock``), then serves
  (:class:`~specedit.app.server.core.Server`) until SIGINT/SIGTERM or ``shutdown``+``exit``.
  A signal stops it as ``Server.close`` does: the running rewrite ends after the model call
  in flight and its client is told, then the process exits with status 0.
* :class:`ServerThread` runs a server over a preloaded model in a daemon thread (tests,
  embedding); extra keyword arguments go to ``Server`` (``limits``, ``max_connections``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from ..options import LoadConfig
from ..runtime.loaded_model import LoadedModel
from ..store.files import FileError
from ..store.state import PrivateRotatingFileHandler, private_dir, state_subdir
from .core import Server
from .loop_thread import LoopThread
from .paths import ServerSetupError, claim, default_socket_path, release

log = logging.getLogger(__name__)

__all__ = ["ServerThread", "serve_main"]


class ServerThread(LoopThread):
    """Run a :class:`Server` over a preloaded model in a daemon thread."""

    def __init__(
        self, loaded: LoadedModel, socket_path: Path, *, tcp: bool = False, **server_kw: Any
    ) -> None:
        self.loaded = loaded
        self.socket_path = Path(socket_path)
        self.tcp = tcp
        self.server_kw = server_kw
        """More keyword arguments of :class:`Server` (``limits``, ``max_connections``)."""
        super().__init__()

    def make(self) -> Server:
        return Server(self.loaded, self.socket_path, tcp=self.tcp, **self.server_kw)

    @property
    def server(self) -> Server | None:
        return self.served


def _setup_logging(
    level: str, log_file: str | None, *, asyncio_too: bool = False, also: tuple[str, ...] = ()
) -> Path:
    """Log ``specedit`` (and with ``asyncio_too`` asyncio's logger, for the whole process;
    the loggers named in ``also``, e.g. uvicorn's) to the private, rotated server log; its
    path."""
    try:  # private: the log names the files edited (folder 0700, files 0600, rotated too)
        if log_file:
            path = Path(log_file)
            private_dir(path.parent, tighten=False)  # a folder the user chose stays as it is
        else:
            path = state_subdir("logs") / "server.log"
        handler = PrivateRotatingFileHandler(
            path, maxBytes=5_000_000, backupCount=3, encoding="utf-8"
        )
    except OSError as e:
        raise ServerSetupError(f"cannot open the log file: {e}") from None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    lvl = getattr(logging, level.upper(), None)
    if not isinstance(lvl, int):
        raise ServerSetupError(f"unknown log level {level!r}")
    handler.setLevel(lvl)
    root = logging.getLogger("specedit")
    root.addHandler(handler)
    root.setLevel(min(lvl, root.getEffectiveLevel()))
    if asyncio_too:
        # asyncio's errors (e.g. accept() failing at the descriptor limit) go to the log file,
        # once per kind a minute, not to the editor's stderr
        handler.addFilter(_AsyncioOncePerMinute())
        aio = logging.getLogger("asyncio")
        aio.addHandler(handler)
        aio.propagate = False
    for name in also:
        other = logging.getLogger(name)
        other.addHandler(handler)
        other.setLevel(lvl)
        other.propagate = False
    return path


class _AsyncioOncePerMinute(logging.Filter):
    """Let each of asyncio's message templates through at most once a minute."""

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("asyncio"):
            return True
        now = time.monotonic()
        key = str(record.msg)
        if now - self._last.get(key, -60.0) < 60.0:
            return False
        self._last[key] = now
        return True


def serve_main(args: Any, config: LoadConfig) -> int:
    """The ``specedit serve`` command (see module docstring): ``config`` is the model to
    serve, ``args`` the socket and logging flags."""
    from ..runtime.loaded_model import load_model

    level = getattr(args, "serve_log_level", None) or "INFO"
    try:
        log_path = _setup_logging(level, getattr(args, "log_file", None), asyncio_too=True)
        sock = Path(args.socket).expanduser().absolute() if args.socket else default_socket_path()
        lock_fd = claim(sock)  # refuse early, before the model load
    except ServerSetupError as e:
        raise FileError(str(e)) from None
    log.info("loading %s (log: %s)", config.model, log_path)
    try:
        loaded = load_model(config)
    except BaseException:
        release(sock, lock_fd)  # no rpc.lock left behind
        raise

    async def main() -> None:
        server = Server(loaded, sock, tcp=bool(args.tcp), lock_fd=lock_fd)
        try:
            await server.start()
        except ServerSetupError as e:
            raise FileError(str(e)) from None
        loop = asyncio.get_running_loop()

        def stop(sig: signal.Signals) -> None:
            log.info("%s: stopping", sig.name)
            loop.create_task(server.close())

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop, sig)
        sys.stderr.write(f"specedit serve: {loaded.model_name} on {sock} (pid {os.getpid()})\n")
        sys.stderr.flush()
        await server.stopped.wait()

    try:
        asyncio.run(main())
    finally:
        loaded.target.close()
    return 0
