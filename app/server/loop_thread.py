"""A server of the app's (the socket's or the HTTP API's) run in a daemon thread of its own.

Contract: a subclass says how to ``make()`` its server (an object with ``async start()``,
``async close()`` and a ``stopped`` event); ``start(timeout)`` runs it on a new event loop
in a daemon thread and returns once it listens (or raises what kept it from starting, or
``TimeoutError``); ``stop(timeout)`` closes it from any thread and joins the thread; the
object is a context manager doing both. ``served`` is the server once made.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any


class LoopThread:
    name = "specedit-server"
    """The thread's name."""
    what = "the server"
    """What ``start`` says did not start."""

    def __init__(self) -> None:
        self.served: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name=self.name, daemon=True)

    def make(self) -> Any:
        """The server to run (called in the thread, on its loop)."""
        raise NotImplementedError

    def start(self, timeout: float = 30.0):
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"{self.what} did not start")
        if self._error is not None:
            raise self._error
        return self

    def _main(self) -> None:
        async def run() -> None:
            self.loop = asyncio.get_running_loop()
            try:
                self.served = self.make()
                await self.served.start()
            except BaseException as e:
                self._error = e
                self._ready.set()
                return
            self._ready.set()
            await self.served.stopped.wait()

        asyncio.run(run())

    def stop(self, timeout: float = 30.0) -> None:
        if self.loop is not None and self.served is not None and self._thread.is_alive():
            fut = asyncio.run_coroutine_threadsafe(self.served.close(), self.loop)
            with contextlib.suppress(Exception):
                fut.result(timeout)
        self._thread.join(timeout)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
