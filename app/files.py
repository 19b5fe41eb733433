"""Reading and safely rewriting the user's source file.

Contract: a user's file is never half-written or lost.

* :func:`read_source` reads a UTF-8 text file into a :class:`SourceFile`: text with line
  endings normalised to ``"\\n"`` and the BOM stripped, plus what is needed to write it back
  the same way (dominant newline style, BOM, trailing newline, mode) and the sha256 of the
  raw bytes. Anything that is not an editable UTF-8 text file raises :class:`FileError` with
  a one-line message.
* :func:`render` turns new ``"\\n"`` text back into bytes in the original's conventions.
* :func:`write_atomic` refuses to write (:class:`ConflictError`) if the file changed on disk
  since it was read, backs up the current content, then writes a temp file in the same
  directory, fsyncs it, copies the mode, ``os.replace``\\ s it over the original (following
  symlinks to the real file) and fsyncs the directory. On failure the temp file is removed,
  the original is untouched, and :class:`FileError` carries the OS reason.
* Backups live in ``<state>/backups/<sha256(real path)[:16]>/<time_ns>.bak`` with an
  ``index.json`` naming the original path; the newest :data:`MAX_BACKUPS` are kept. ``<state>``
  is ``$SPECEDIT_STATE_DIR`` or ``platformdirs.user_state_path("specedit")``.
* :func:`undo` restores the newest backup atomically and pops it; the content it replaces is
  kept beside the backups as ``<time_ns>.redo`` so undo never loses anything either.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from ..engine.backend import UserError

__all__ = [
    "MAX_BACKUPS",
    "ConflictError",
    "FileError",
    "SourceFile",
    "WriteResult",
    "backup_dir",
    "list_backups",
    "read_source",
    "render",
    "source_from_text",
    "state_dir",
    "undo",
    "write_atomic",
]

logger = logging.getLogger(__name__)

BOM = b"\xef\xbb\xbf"
MAX_BACKUPS = 20
BINARY_SNIFF_BYTES = 8192
STATE_ENV = "SPECEDIT_STATE_DIR"


class FileError(UserError):
    """A user-facing file problem; ``str(err)`` is one clear line."""


class ConflictError(FileError):
    """The file changed on disk between reading and writing it."""


@dataclass(frozen=True)
class SourceFile:
    """A text file as read. ``path`` is ``None`` only for buffers with no file."""

    path: Path | None
    text: str
    newline: str
    bom: bool
    trailing_newline: bool
    sha256: str
    mode: int
    size: int


@dataclass(frozen=True)
class WriteResult:
    """Outcome of a write: the real file written, its backup, the sha256 of the new bytes."""

    path: Path
    backup_path: Path | None
    sha256: str


# ----------------------------------------------------------------------------- reading


def _detect_newline(text: str) -> str:
    crlf = text.count("\r\n")
    cr = text.count("\r") - crlf
    lf = text.count("\n") - crlf
    # Ties prefer "\n", then "\r\n".
    best = max((lf, 2, "\n"), (crlf, 1, "\r\n"), (cr, 0, "\r"))
    return best[2] if best[0] > 0 else "\n"


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _decode(raw: bytes, name: str) -> tuple[str, bool]:
    """Return (text without BOM, bom) or raise FileError for binary / non-UTF-8 bytes."""
    nul = raw.find(b"\x00", 0, BINARY_SNIFF_BYTES)
    if nul >= 0:
        raise FileError(
            f"{name} looks binary (NUL byte at offset {nul}); specedit edits UTF-8 text files"
        )
    bom = raw.startswith(BOM)
    body = raw[len(BOM) :] if bom else raw
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(BOM) if bom else 0)
        raise FileError(
            f"{name} is not valid UTF-8 (byte 0x{raw[offset]:02x} at offset {offset}); "
            "specedit edits UTF-8 text files"
        ) from None
    return text, bom


def _make_source(path: Path | None, raw: bytes, text: str, bom: bool, mode: int) -> SourceFile:
    norm = _normalise(text)
    return SourceFile(
        path=path,
        text=norm,
        newline=_detect_newline(text),
        bom=bom,
        trailing_newline=norm.endswith("\n"),
        sha256=hashlib.sha256(raw).hexdigest(),
        mode=mode,
        size=len(raw),
    )


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def read_source(path: str | os.PathLike[str], *, max_bytes: int = 4_000_000) -> SourceFile:
    """Read a UTF-8 text file; raise FileError if it is missing, not a file, unreadable,
    larger than ``max_bytes``, binary or not valid UTF-8."""
    name = os.fspath(path)
    abspath = Path(os.path.abspath(name))
    try:
        st = os.stat(abspath)
    except FileNotFoundError:
        if abspath.is_symlink():
            raise FileError(f"{name} is a broken symlink") from None
        raise FileError(f"{name} does not exist") from None
    except OSError as exc:
        raise FileError(f"cannot read {name}: {_os_reason(exc)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise FileError(f"{name} is a directory; specedit edits files")
    if not stat.S_ISREG(st.st_mode):
        raise FileError(f"{name} is not a regular file")
    if st.st_size > max_bytes:
        raise FileError(f"{name} is too large ({st.st_size:,} bytes; the limit is {max_bytes:,})")
    try:
        with open(abspath, "rb") as fh:
            raw = fh.read(max_bytes + 1)
            mode = stat.S_IMODE(os.fstat(fh.fileno()).st_mode)
    except OSError as exc:
        raise FileError(f"cannot read {name}: {_os_reason(exc)}") from None
    if len(raw) > max_bytes:  # grew since stat
        raise FileError(f"{name} is too large (over {max_bytes:,} bytes)")
    text, bom = _decode(raw, name)
    return _make_source(abspath, raw, text, bom, mode)


def source_from_text(text: str, path: str | os.PathLike[str] | None = None) -> SourceFile:
    """A SourceFile for an unsaved editor buffer; sha256 is of ``text`` encoded as UTF-8.

    A leading U+FEFF is taken as a BOM. Mode is 0o644. Note that ``write_atomic`` compares
    the sha256 against the file on disk, so it only writes a buffer identical to the file."""
    bom = text.startswith("\ufeff")
    body = text[1:] if bom else text
    raw = (BOM if bom else b"") + body.encode("utf-8")
    abspath = Path(os.path.abspath(os.fspath(path))) if path is not None else None
    return _make_source(abspath, raw, body, bom, 0o644)


def render(src: SourceFile, new_text: str) -> bytes:
    """Encode ``new_text`` ("\\n" line endings) with src's newline style, BOM and
    trailing-newline convention."""
    text = _normalise(new_text)
    if src.trailing_newline:
        if text and not text.endswith("\n"):
            text += "\n"
    else:
        text = text.rstrip("\n")
    if src.newline != "\n":
        text = text.replace("\n", src.newline)
    data = text.encode("utf-8")
    return BOM + data if src.bom else data


# ----------------------------------------------------------------------------- writing


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        logger.warning("cannot open %s to fsync it: %s", directory, exc)
        return
    try:
        os.fsync(fd)
    except OSError as exc:  # some filesystems refuse directory fsync; the data is written
        logger.warning("fsync of directory %s failed: %s", directory, exc)
    finally:
        os.close(fd)


def _write_temp(directory: Path, prefix: str, data: bytes, mode: int) -> Path:
    """Write ``data`` to a fresh fsynced temp file in ``directory``; remove it on failure."""
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return Path(tmp)


def _unchanged_bytes(src: SourceFile, target: Path) -> bytes:
    """The bytes of ``target``; ConflictError unless they hash to ``src.sha256``."""
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        raise ConflictError(
            f"{src.path} was deleted since it was read; not writing. "
            "Re-run against the new content."
        ) from None
    except OSError as exc:
        raise FileError(f"cannot read {src.path}: {_os_reason(exc)}") from None
    current = hashlib.sha256(data).hexdigest()
    if current != src.sha256:
        raise ConflictError(
            f"{src.path} changed on disk since it was read "
            f"(sha256 {current[:12]} != {src.sha256[:12]}); not writing. "
            "Re-run against the new content."
        )
    return data


def _replace(
    target: Path, data: bytes, mode: int, before_replace: Callable[[], object] | None = None
) -> None:
    """Atomically replace ``target`` with ``data``; raise FileError, original untouched."""
    tmp: Path | None = None
    try:
        tmp = _write_temp(target.parent, f".{target.name}.specedit-", data, mode)
        with contextlib.suppress(OSError):  # keep the owner when running as root
            st = os.stat(target)
            os.chown(tmp, st.st_uid, st.st_gid)
        if before_replace is not None:
            before_replace()
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise FileError(f"cannot write {target}: {_os_reason(exc)}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _fsync_dir(target.parent)


def write_atomic(src: SourceFile, new_text: str, *, backup: bool = True) -> WriteResult:
    """Write ``new_text`` over ``src.path`` atomically, after checking the file is unchanged
    and (by default) backing it up. Symlinks are followed; ``path`` in the result is the
    real file written."""
    if src.path is None:
        raise FileError("this buffer has no file path; cannot write it")
    target = src.path.resolve()
    old = _unchanged_bytes(src, target)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError as exc:
        raise FileError(f"cannot read {src.path}: {_os_reason(exc)}") from None
    backup_path = _save_backup(target, old, ".bak") if backup else None
    data = render(src, new_text)
    # Re-check right before the rename to keep the race window as small as possible.
    try:
        _replace(target, data, mode, before_replace=lambda: _unchanged_bytes(src, target))
    except FileError:
        if backup_path is not None:  # nothing was written: don't leave a no-op undo step
            with contextlib.suppress(OSError):
                backup_path.unlink()
        raise
    digest = hashlib.sha256(data).hexdigest()
    logger.info("wrote %s (%d bytes, backup %s)", target, len(data), backup_path)
    return WriteResult(path=target, backup_path=backup_path, sha256=digest)


# ----------------------------------------------------------------------------- backups


def state_dir() -> Path:
    """``$SPECEDIT_STATE_DIR`` if set, else the platform's user state dir for specedit."""
    override = os.environ.get(STATE_ENV)
    if override:
        return Path(override).expanduser()
    return platformdirs.user_state_path("specedit")


def backup_root() -> Path:
    """``$SPECEDIT_BACKUP_DIR`` if set, else ``state_dir()/backups``."""
    override = os.environ.get("SPECEDIT_BACKUP_DIR")
    return Path(override).expanduser() if override else state_dir() / "backups"


def backup_dir(path: str | os.PathLike[str]) -> Path:
    """The directory holding the backups of ``path`` (its real, absolute path)."""
    real = Path(os.path.abspath(os.fspath(path))).resolve()
    key = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    return backup_root() / key


def _entries(directory: Path, suffix: str) -> list[Path]:
    try:
        found = [p for p in directory.iterdir() if p.suffix == suffix and p.stem.isdigit()]
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise FileError(f"cannot list backups in {directory}: {_os_reason(exc)}") from None
    return sorted(found, key=lambda p: int(p.stem))


def _save_backup(target: Path, data: bytes, suffix: str) -> Path:
    """Store ``data`` as the newest backup of ``target``; prune to MAX_BACKUPS."""
    directory = backup_dir(target)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        index = directory / "index.json"
        if not index.exists():
            payload = json.dumps({"path": str(target)}, indent=2).encode("utf-8")
            tmp = _write_temp(directory, ".index-", payload, 0o600)
            os.replace(tmp, index)
        existing = _entries(directory, suffix)
        stamp = time.time_ns()
        if existing:
            stamp = max(stamp, int(existing[-1].stem) + 1)
        dest = directory / f"{stamp}{suffix}"
        tmp = _write_temp(directory, ".backup-", data, 0o600)
        os.replace(tmp, dest)
    except OSError as exc:
        raise FileError(
            f"cannot back up {target} to {directory}: {_os_reason(exc)}; not writing"
        ) from None
    for old in _entries(directory, suffix)[:-MAX_BACKUPS]:
        with contextlib.suppress(OSError):
            old.unlink()
    logger.debug("backed up %s to %s", target, dest)
    return dest


def list_backups(path: str | os.PathLike[str]) -> list[Path]:
    """Backups of ``path``, oldest first (the last one is what :func:`undo` restores)."""
    return _entries(backup_dir(path), ".bak")


def undo(path: str | os.PathLike[str]) -> Path:
    """Restore the newest backup of ``path`` atomically and remove it from the stack.

    The content being replaced is saved as a ``.redo`` file beside the backups. Returns the
    real path of the restored file."""
    target = Path(os.path.abspath(os.fspath(path))).resolve()
    backups = list_backups(target)
    if not backups:
        raise FileError(f"no backups of {os.fspath(path)} to restore")
    newest = backups[-1]
    try:
        data = newest.read_bytes()
    except OSError as exc:
        raise FileError(f"cannot read backup {newest}: {_os_reason(exc)}") from None
    try:
        st = os.stat(target)
        current: bytes | None = target.read_bytes()
        mode = stat.S_IMODE(st.st_mode)
    except FileNotFoundError:
        current, mode = None, 0o644
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise FileError(f"{os.fspath(path)} is a directory; cannot restore") from None
        raise FileError(f"cannot read {os.fspath(path)}: {_os_reason(exc)}") from None
    if current is not None and current != data:
        _save_backup(target, current, ".redo")
    _replace(target, data, mode)
    with contextlib.suppress(OSError):
        newest.unlink()
    logger.info("restored %s from %s", target, newest)
    return target
