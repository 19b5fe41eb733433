"""Fault injection for tests of the write path; reusable by any test that writes files.

* :class:`FaultyOS` (a context manager) stands in for the ``os`` module inside the specedit
  modules that write (:data:`WRITERS`) and makes one chosen call fail with an ``OSError`` (ENOSPC by default):
  the ``op`` is an ``os`` function name, ``on`` a predicate over the path it acts on (for
  calls that take a file descriptor, the path the descriptor was opened with). Every other
  call is the real one, so the rest of the write path runs for real.
* :func:`run_and_kill` starts a real process and SIGKILLs it at a chosen point: a delay after
  it starts, or after it prints a line containing ``trigger``. It returns what happened.
* :func:`newest_step` / :func:`step_intact`: the newest backup of a file and whether its
  bytes still match the sha256 recorded beside it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from specedit.app.store import backups, files, state
from specedit.models import durable

WRITERS = (files, state, backups, durable)
_FD_OPS = {"write", "pwrite", "fsync", "fchmod", "ftruncate", "posix_fallocate"}


class FaultyOS:
    """``os`` with one failing call: ``op`` on a path for which ``on(path)`` is true.

    ``times`` is how many matching calls fail (then the real call runs again, as for a disk
    that was full for a moment); ``partial`` makes a failing ``write``/``pwrite`` first write
    half its bytes, as a disk that fills up in the middle of a write does."""

    def __init__(
        self,
        op: str,
        on: Callable[[Path], bool],
        *,
        err: int = errno.ENOSPC,
        times: int = 1,
        partial: bool = False,
    ) -> None:
        self._op, self._on, self._err = op, on, err
        self.left, self.partial = times, partial
        self.fired: list[Path] = []
        self._paths: dict[int, Path] = {}

    def __enter__(self) -> FaultyOS:
        for module in WRITERS:
            module.os = self  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc: object) -> None:
        for module in WRITERS:
            module.os = os  # type: ignore[attr-defined]

    def __getattr__(self, name: str):
        real = getattr(os, name)
        if name == self._op and name != "open":
            return lambda *a, **kw: self._call(name, real, a, kw)
        return real

    def open(self, path, flags, mode=0o777, *, dir_fd=None):  # noqa: A003
        if self._op == "open":
            self._maybe_fail(Path(path))
        fd = os.open(path, flags, mode, dir_fd=dir_fd)
        self._paths[fd] = Path(path)
        return fd

    def close(self, fd: int) -> None:
        self._paths.pop(fd, None)
        os.close(fd)

    def _subject(self, name: str, args: tuple) -> Path:
        if name in _FD_OPS:
            return self._paths.get(args[0], Path(f"/proc/self/fd/{args[0]}"))
        return Path(args[1] if name in ("replace", "rename", "link") else args[0])

    def _maybe_fail(self, subject: Path) -> None:
        if self.left > 0 and self._on(subject):
            self.left -= 1
            self.fired.append(subject)
            raise OSError(self._err, os.strerror(self._err), str(subject))

    def _call(self, name: str, real, args: tuple, kwargs: dict):
        subject = self._subject(name, args)
        if self.left > 0 and self._on(subject) and self.partial and name in ("write", "pwrite"):
            data = bytes(args[1])
            real(args[0], data[: len(data) // 2], *args[2:])
        self._maybe_fail(subject)
        return real(*args, **kwargs)


@dataclass
class Kill:
    """What happened to a process :func:`run_and_kill` ran."""

    killed: bool  # False when it had exited before the kill
    returncode: int
    ran_s: float  # from the trigger (or the start) to the kill or the exit
    output: list[str] = field(default_factory=list)  # its stdout+stderr lines


def run_and_kill(
    cmd: Sequence[str],
    *,
    delay_s: float,
    trigger: str | None = None,
    env: dict[str, str] | None = None,
    timeout_s: float = 900,
) -> Kill:
    """Run ``cmd`` (stdout and stderr together) and SIGKILL it ``delay_s`` seconds after it
    starts, or after it prints a line containing ``trigger``, unless it has exited by then."""
    proc = subprocess.Popen(
        list(cmd), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []
    seen = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if trigger is not None and trigger in line:
                seen.set()
        seen.set()  # end of output: nothing left to wait for

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if trigger is not None and not seen.wait(timeout_s):
            raise TimeoutError(f"{cmd[0]} never printed {trigger!r}")
        t0 = time.perf_counter()
        try:
            proc.wait(timeout=delay_s)
            killed = False
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout_s)
            killed = True
        ran_s = time.perf_counter() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    return Kill(killed=killed, returncode=proc.returncode, ran_s=ran_s, output=lines)


def newest_step(path: Path, suffix: str = ".bak") -> Path | None:
    steps = backups.list_steps(backups.backup_dir(path), suffix)
    return steps[-1] if steps else None


def step_intact(step: Path) -> bool:
    """True when the step's bytes hash to the sha256 recorded beside it."""
    record = json.loads(step.with_name(step.name + ".json").read_text())
    return hashlib.sha256(step.read_bytes()).hexdigest() == record["sha256"]


def check_whole(p: Path, old: bytes) -> str:
    """The file is ``old``, or exactly what specedit recorded writing over the newest backup,
    which then holds ``old``; the newest backup is intact either way."""
    now, step = p.read_bytes(), newest_step(p)
    if step is not None:
        assert step_intact(step)
    if now == old:
        return "old"
    assert step is not None and step.read_bytes() == old, "new content without its backup"
    record = json.loads(step.with_name(step.name + ".json").read_text())
    assert record["wrote"] == hashlib.sha256(now).hexdigest(), "a mix of old and new"
    return "new"
