"""Where ``specedit serve`` listens and how clients find it, safely.

Contract:

* :func:`default_socket_path` is ``$XDG_RUNTIME_DIR/specedit/rpc.sock``, else
  ``<user cache>/specedit/run/rpc.sock`` (:func:`user_cache_home`), the path the editor plugins
  compute too; never the shared temp dir.
* :func:`socket_dir_problem` is the one rule for a socket's directory (a real directory owned by
  this user, mode 0700 exactly), which the plugins apply too; :func:`private_dir` creates a
  missing one and refuses (:class:`ServerSetupError`) an existing one that breaks it.
* The discovery file (:func:`discovery_path`) says where a server listens; it is written
  atomically with mode 0600 and removed at shutdown.
* :func:`claim` makes one server own a socket path (:class:`AlreadyRunning` otherwise);
  :func:`release` gives it up and leaves no lock file behind. :func:`peer_uid` reads the
  connecting process's uid with ``SO_PEERCRED``.
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
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# sun_path is 108 bytes on Linux, including the terminating NUL
MAX_SOCKET_PATH = 107


class ServerSetupError(Exception):
    """The server cannot start; ``str(err)`` is one clear line."""


class AlreadyRunning(ServerSetupError):
    """Another server owns the socket path."""


def user_cache_home() -> Path:
    """The user's cache base: ``$XDG_CACHE_HOME`` if absolute, else ``~/.cache`` (macOS:
    ``~/Library/Caches``), as ``platformdirs.user_cache_path`` has it."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg)
    home = Path(os.path.expanduser("~"))
    return home / "Library" / "Caches" if sys.platform == "darwin" else home / ".cache"


def runtime_dir() -> Path:
    """The per-user directory for the socket (not created here)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "specedit"
    return user_cache_home() / "specedit" / "run"


def default_socket_path() -> Path:
    """``$XDG_RUNTIME_DIR/specedit/rpc.sock`` when that variable is an absolute path; otherwise
    ``<user cache>/specedit/run/rpc.sock``. The base of ``platformdirs.user_cache_path`` is
    written out (:func:`user_cache_home`) because the editor plugins compute the same path
    (``plugins/nvim/lua/specedit/client.lua`` and ``plugins/vscode/src/client.ts``; tests keep
    the three in step). The shared temp dir is never used: another user could create the
    directory there first."""
    return runtime_dir() / "rpc.sock"


def discovery_path(sock: Path) -> Path:
    """The discovery file: the socket path with suffix ``.json``, holding ``{socket, pid,
    protocolVersion, model}`` and, with ``--tcp``, ``tcp: {host, port, token}``."""
    return sock.with_suffix(".json")


def socket_dir_problem(path: Path) -> str | None:
    """Why ``path`` (an existing socket directory) is unsafe, in one line; None when it is
    a directory, not a symlink, owned by this user, with mode 0700. The plugins apply the
    same rule (and words) before they connect."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"cannot inspect the socket directory {path}: {e.strerror or e}"
    if stat.S_ISLNK(st.st_mode):
        return f"the socket directory {path} is a symlink; refusing it"
    if not stat.S_ISDIR(st.st_mode):
        return f"the socket directory {path} is not a directory; refusing it"
    if st.st_uid != os.getuid():
        return f"the socket directory {path} belongs to uid {st.st_uid}, not to you; refusing it"
    mode = stat.S_IMODE(st.st_mode)
    if mode != 0o700:
        return (
            f"the socket directory {path} has mode {mode:04o}, not 0700; refusing it "
            f"(chmod 700 {path} if it is yours)"
        )
    return None


def _make_dirs(path: Path) -> bool:
    """Create ``path`` and its missing parents with mode 0700; False if it existed."""
    missing: list[Path] = []
    p = path
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    created = False
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            continue  # made by someone else meanwhile: checked below like any existing one
        except OSError as e:
            raise ServerSetupError(f"cannot create {d}: {e.strerror or e}") from None
        os.chmod(d, 0o700)  # ours: undo a umask that took the owner's bits away
        created = created or d == path
    return created


def private_dir(path: Path) -> Path:
    """Create ``path`` (mode 0700, and its missing parents) or check that an existing one is
    private to this user.

    An existing directory is never changed: one that breaks :func:`socket_dir_problem`'s
    rule raises :class:`ServerSetupError`."""
    _make_dirs(path)
    problem = socket_dir_problem(path)
    if problem:
        raise ServerSetupError(problem)
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


def lock_path(sock: Path) -> Path:
    return sock.with_suffix(".lock")


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _lock(lock: Path) -> int | None:
    """An fd holding an exclusive flock on the file now at ``lock``; None if another has it.

    The file can be unlinked by :func:`release` between our open and our flock: a lock on an
    unlinked file excludes nobody, so then open the new file and try again."""
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as e:
            raise ServerSetupError(f"cannot open {lock}: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        if _same_file(fd, lock):
            return fd
        os.close(fd)


def claim(sock: Path) -> int:
    """Own ``sock``: take an exclusive ``flock`` on ``<socket>.lock`` (held for the server's
    life), refuse if a server answers on the socket (:class:`AlreadyRunning`), and remove a
    stale socket and discovery file. Returns the lock fd, which :func:`release` gives back."""
    if len(os.fsencode(sock)) > MAX_SOCKET_PATH:
        raise ServerSetupError(f"socket path {sock} is too long for a Unix socket")
    private_dir(sock.parent)
    fd = _lock(lock_path(sock))
    if fd is None:
        info = read_discovery(discovery_path(sock)) or {}
        raise AlreadyRunning(
            f"a specedit server already runs on {sock} (pid {info.get('pid', '?')})"
        ) from None
    if socket_alive(sock):
        release(sock, fd)
        raise AlreadyRunning(f"a server already answers on {sock}; not starting another")
    for stale in (sock, discovery_path(sock)):
        if stale.exists() or stale.is_symlink():
            log.info("removing stale %s", stale)
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
    return fd


def release(sock: Path, fd: int) -> None:
    """Give up the claim :func:`claim` returned ``fd`` for: remove the lock file while still
    holding its lock (only if it is still the file locked), then close ``fd``. So a server
    that stops, or fails to start (a model that does not load), leaves no ``rpc.lock``
    behind."""
    lock = lock_path(sock)
    try:
        if _same_file(fd, lock):
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
    finally:
        os.close(fd)


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
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("iII"))
    except (OSError, AttributeError):
        return None
    _pid, uid, _gid = struct.unpack("iII", creds)  # struct ucred: pid_t, uid_t, gid_t
    return uid
