"""specedit's private state on disk: where it lives, and durable, private writes.

Contract: everything specedit keeps about the user's work (backups, the prompt cache, the model
checks, the logs) is private to that user, and a crash never leaves a half-written file under its
real name.
* :func:`state_dir` is ``$SPECEDIT_STATE_DIR`` or ``platformdirs.user_state_path("specedit")``.
* :func:`private_dir` creates a folder (and parents) 0700 and, with ``tighten`` (the default),
  takes group and other access from an existing one; one owned by another user raises
  ``PermissionError``. :func:`state_subdir` does this for the state dir and a folder below it.
* :func:`write_private` replaces a file atomically with mode 0600 (temp file, fsync,
  ``os.replace``, folder fsync); :func:`make_private` sets 0600 on a file another library wrote.
* :class:`PrivateRotatingFileHandler`: a ``RotatingFileHandler`` whose files are all 0600.
* :func:`write_temp` and :func:`fsync_dir` (``models.durable``'s) are the durable-write steps
  ``app.store.files`` builds on. Functions here raise ``OSError``; callers word their own message.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import logging.handlers
import os
import secrets
import stat
from pathlib import Path

import platformdirs

from ...models.durable import fsync_dir

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "PrivateRotatingFileHandler",
    "create_private",
    "fsync_dir",
    "make_private",
    "private_dir",
    "state_dir",
    "state_subdir",
    "write_private",
    "write_temp",
]

log = logging.getLogger(__name__)

STATE_ENV = "SPECEDIT_STATE_DIR"
DIR_MODE = 0o700
FILE_MODE = 0o600


def state_dir() -> Path:
    """``$SPECEDIT_STATE_DIR`` if set, else the platform's user state dir for specedit."""
    override = os.environ.get(STATE_ENV)
    if override:
        return Path(override).expanduser()
    return platformdirs.user_state_path("specedit")


def _not_ours(path: Path, st: os.stat_result) -> PermissionError:
    return PermissionError(
        errno.EPERM, f"{path} belongs to another user (uid {st.st_uid}); not keeping state there"
    )


def private_dir(
    path: str | os.PathLike[str], *, tighten: bool = True, follow_symlinks: bool = True
) -> Path:
    """Create ``path`` and its missing parents with mode 0700; return it.

    With ``tighten`` an existing ``path`` that we own loses group and other access, and one
    another user owns raises ``PermissionError``. Without it an existing folder is left as
    it is (a log file's folder the user chose). Without ``follow_symlinks`` a ``path`` that
    is a symlink raises ``NotADirectoryError`` (a folder whose files only specedit names).
    Other ``OSError`` pass through."""
    path = Path(path)
    missing = []
    p = path
    while not p.exists() and not p.is_symlink() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            os.mkdir(d, DIR_MODE)
            os.chmod(d, DIR_MODE)  # mkdir's mode is masked by the umask
    st = os.stat(path) if follow_symlinks else os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(path))
    if tighten and path not in missing:
        if st.st_uid != os.geteuid():
            raise _not_ours(path, st)
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o077 | DIR_MODE)
            log.info("made %s private (mode 0700)", path)
    return path


def state_subdir(*parts: str) -> Path:
    """``state_dir()/parts...``, each level created or tightened to 0700 (see private_dir)."""
    d = private_dir(state_dir())
    for part in parts:
        d = private_dir(d / part)
    return d


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_temp(directory: str | os.PathLike[str], prefix: str, data: bytes, mode: int) -> Path:
    """Write ``data`` to a new file ``directory/<prefix><random>.tmp`` with ``mode``, fsync it
    and return its path. On failure the file is removed and the ``OSError`` raised."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    tmp = Path(directory) / f"{prefix}{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, flags, FILE_MODE)
    try:
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_private(path: str | os.PathLike[str], data: bytes) -> Path:
    """Atomically replace ``path`` with ``data``, mode 0600, fsynced (folder included).
    The folder must exist (see private_dir). Raises ``OSError``; ``path`` is then untouched."""
    path = Path(path)
    tmp = write_temp(path.parent, f".{path.name}.", data, FILE_MODE)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)
    return path


def create_private(path: str | os.PathLike[str]) -> None:
    """Create ``path`` as a new empty file with mode 0600 (it must not exist; a symlink in
    its place is refused), for a library to write into afterwards."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    os.close(os.open(path, flags, FILE_MODE))


def make_private(path: str | os.PathLike[str]) -> None:
    """Set mode 0600 on a file we wrote (e.g. one another library created)."""
    os.chmod(path, FILE_MODE)


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A RotatingFileHandler whose log files are 0600.

    The live file is opened (created) with mode 0600 and tightened if it was looser;
    rotation renames files, so rotated ones keep 0600. Rotated files left looser by an
    older version are tightened when the handler is made."""

    def __init__(self, filename: str | os.PathLike[str], **kwargs) -> None:
        super().__init__(filename, **kwargs)
        for i in range(1, self.backupCount + 1):
            with contextlib.suppress(FileNotFoundError):
                _tighten_file(Path(f"{self.baseFilename}.{i}"))

    def _open(self):  # type: ignore[override]
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.baseFilename, flags, FILE_MODE)
        try:
            st = os.fstat(fd)
            if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) & 0o077:
                os.fchmod(fd, FILE_MODE)
            return os.fdopen(fd, self.mode, encoding=self.encoding, errors=self.errors)
        except BaseException:
            os.close(fd)
            raise


def _tighten_file(path: Path) -> None:
    st = os.stat(path)
    if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(path, FILE_MODE)
