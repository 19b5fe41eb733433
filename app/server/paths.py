"""Where ``specedit serve`` listens and how clients find it, safely.

Contract:

* :func:`default_socket_path` is ``$XDG_RUNTIME_DIR/specedit/rpc.sock``; without that
  variable, ``<tmp>/specedit-<uid>/rpc.sock``. :func:`private_dir` creates the socket's
  directory with mode 0700 and refuses (:class:`ServerSetupError`) one that is a symlink, is
  not a directory, is owned by another user, or is writable by group or others.
* The discovery file (:func:`discovery_path`: the socket path with suffix ``.json``) holds
  ``{socket, pid, protocolVersion, model}`` and, with ``--tcp``, ``tcp: {host, port, token}``.
  It is written atomically with mode 0600 and removed at shutdown.
* :func:`claim` makes one server own a socket path: it takes an exclusive ``flock`` on
  ``<socket>.lock`` (held for the server's life), refuses if a server answers on the socket
  (:class:`AlreadyRunning`), and removes a stale socket and discovery file.
* :func:`peer_uid` reads the connecting process's uid with ``SO_PEERCRED``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import stat
import struct
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# sun_path is 108 bytes on Linux, including the terminating NUL
MAX_SOCKET_PATH = 107


class ServerSetupError(Exception):
    """The server cannot start; ``str(err)`` is one clear line."""


class AlreadyRunning(ServerSetupError):
    """Another server owns the socket path."""


def runtime_dir() -> Path:
    """The per-user directory for the socket (not created here)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "specedit"
    return Path(tempfile.gettempdir()) / f"specedit-{os.getuid()}"


def default_socket_path() -> Path:
    return runtime_dir() / "rpc.sock"


def discovery_path(sock: Path) -> Path:
    return sock.with_suffix(".json")


def private_dir(path: Path) -> Path:
    """Create ``path`` (mode 0700) or check an existing one is private to this user."""
    try:
        path.mkdir(mode=0o700, parents=False)
    except FileExistsError:
        pass
    except FileNotFoundError:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.mkdir(mode=0o700, exist_ok=True)
    except OSError as e:
        raise ServerSetupError(f"cannot create {path}: {e.strerror or e}") from None
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise ServerSetupError(f"{path} is not a directory (a symlink?); refusing to use it")
    if st.st_uid != os.getuid():
        raise ServerSetupError(f"{path} belongs to uid {st.st_uid}, not to you; refusing")
    if st.st_mode & 0o022:
        raise ServerSetupError(
            f"{path} is writable by others (mode {stat.S_IMODE(st.st_mode):o}); "
            "use a private directory for the socket"
        )
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def socket_alive(sock: Path, timeout: float = 1.0) -> bool:
    """True when something accepts connections on the Unix socket ``sock``."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(os.fspath(sock))
        return True
    except OSError:
        return False
    finally:
        s.close()


def claim(sock: Path) -> int:
    """Own ``sock``: lock it, refuse a live server, clean stale files. Returns the lock fd."""
    if len(os.fsencode(sock)) > MAX_SOCKET_PATH:
        raise ServerSetupError(f"socket path {sock} is too long for a Unix socket")
    private_dir(sock.parent)
    lock = sock.with_suffix(".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        info = read_discovery(discovery_path(sock)) or {}
        raise AlreadyRunning(
            f"a specedit server already runs on {sock} (pid {info.get('pid', '?')})"
        ) from None
    if socket_alive(sock):
        os.close(fd)
        raise AlreadyRunning(f"a server already answers on {sock}; not starting another")
    for stale in (sock, discovery_path(sock)):
        if stale.exists() or stale.is_symlink():
            log.info("removing stale %s", stale)
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
    return fd


def write_discovery(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON to ``path`` atomically, mode 0600."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=1)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_discovery(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (None if unknown)."""
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid
