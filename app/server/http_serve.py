"""Running ``specedit serve --http``: the command, the token file, a server in a thread.

Contract:

* :func:`http_main` is the CLI entry of ``specedit serve --http [HOST:]PORT``: on a
  non-loopback host it reads the bearer token from :func:`token_file` (0600, in the state
  dir), creating it with a random token the first time and printing it then, once; it
  logs to the server log (``serve._setup_logging``; uvicorn's loggers too), loads the
  model, serves
  (:class:`~specedit.app.server.http_api.HttpApi`) until SIGINT/SIGTERM (the running
  request ends within one target call) and exits with status 0.
* :class:`HttpThread` runs an ``HttpApi`` over a preloaded model in a daemon thread
  (tests, benchmarks); extra keyword arguments go to ``HttpApi`` (``token``, ``limits``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import Any

from ...engine.backend import UserError
from ..options import LoadConfig
from ..runtime.loaded_model import LoadedModel
from ..store.files import FileError
from ..store.state import state_subdir, write_private
from .http_api import HttpApi, is_loopback, parse_address
from .loop_thread import LoopThread

log = logging.getLogger(__name__)

__all__ = ["HttpThread", "http_main", "load_token", "token_file"]

UVICORN_LOGGERS = ("uvicorn.error", "uvicorn.access")
"""uvicorn's loggers, sent to the server log with specedit's."""


class HttpThread(LoopThread):
    """Run an :class:`HttpApi` over a preloaded model in a daemon thread (tests,
    benchmarks); ``base_url`` once started."""

    name, what = "specedit-http", "the HTTP API"

    def __init__(self, loaded: LoadedModel, host: str = "127.0.0.1", **kw: Any) -> None:
        self.loaded, self.host, self.kw = loaded, host, kw
        super().__init__()

    def make(self) -> HttpApi:
        return HttpApi(self.loaded, self.host, **self.kw)

    @property
    def api(self) -> HttpApi | None:
        return self.served

    @property
    def base_url(self) -> str:
        assert self.api is not None
        return self.api.base_url


def token_file() -> Path:
    """Where the bearer token of a non-loopback ``serve --http`` is kept (0600)."""
    return state_subdir("run") / "http-token"


def load_token() -> tuple[str, bool]:
    """The bearer token and whether it was created just now (then it is printed, once)."""
    path = token_file()
    try:
        token = path.read_text().strip()
        if token:
            os.chmod(path, 0o600)
            return token, False
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(32)
    write_private(path, token.encode() + b"\n")
    return token, True


def http_main(args: Any, config: LoadConfig) -> int:
    """``specedit serve --http [HOST:]PORT`` (module docstring)."""
    from ..runtime.loaded_model import load_model
    from .serve import _setup_logging

    try:
        host, port = parse_address(args.http)
    except ValueError as e:
        raise UserError(str(e)) from None
    token = None
    if not is_loopback(host):
        token, new = load_token()
        if new:
            sys.stderr.write(f"specedit serve: bearer token (kept in {token_file()}): {token}\n")
        else:
            sys.stderr.write(f"specedit serve: the bearer token is in {token_file()}\n")
    level = getattr(args, "serve_log_level", None) or "INFO"
    log_path = _setup_logging(
        level, getattr(args, "log_file", None), asyncio_too=True, also=UVICORN_LOGGERS
    )
    log.info("loading %s (log: %s)", config.model, log_path)
    loaded = load_model(config)

    async def main() -> None:
        api = HttpApi(loaded, host, port, token=token)
        try:
            await api.start()
        except OSError as e:
            raise FileError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: loop.create_task(api.close()))
        sys.stderr.write(
            f"specedit serve: {loaded.model_name} on {api.base_url} (pid {os.getpid()})\n"
        )
        sys.stderr.flush()
        await api.stopped.wait()

    try:
        asyncio.run(main())
    finally:
        loaded.target.close()
    return 0
