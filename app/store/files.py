"""Reading and safely rewriting the user's source file.

Contract: a user's file is never half-written or lost, nor written against its owner's or
its user's will.
* :func:`read_source` reads a UTF-8 text file into a :class:`SourceFile`: text with ``"\\n"``
  line endings and no BOM, what is needed to write it back the same way, and the raw bytes'
  sha256 (else :class:`FileError`, one line); :func:`render` writes new text back that way.
* :func:`write_atomic` refuses (:class:`ConflictError`) a file changed on disk since it was read,
  and (:class:`FileError`, unless ``force``) one the user may not write or does not own. It backs
  up the content durably (``app.store.backups``), then replaces the file atomically (fsynced temp file,
  mode, owner and group kept, ``os.replace``, folder fsync), or in place where a rename would
  split hard links or lose the owner; on any failure the original is untouched or put back and
  :class:`FileError` carries the OS reason. Symlinks are followed: the real file is written.
* :func:`check_writable` refuses early what the write would; :func:`check_write`,
  :func:`put_bytes` and :func:`save_step` are the steps ``app.store.undo`` shares.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...engine.backend import UserError
from . import backups
from .backups import MAX_BACKUPS, backup_dir
from .state import fsync_dir, write_temp

__all__ = [
    "MAX_BACKUPS",
    "MAX_SOURCE_BYTES",
    "ConflictError",
    "FileError",
    "SourceFile",
    "WriteResult",
    "backup_dir",
    "check_writable",
    "list_backups",
    "read_source",
    "render",
    "source_from_text",
    "write_atomic",
]

logger = logging.getLogger(__name__)

BOM = b"\xef\xbb\xbf"
BINARY_SNIFF_BYTES = 8192


class FileError(UserError):
    """A user-facing file problem; ``str(err)`` is one clear line."""


class DoesNotFit(FileError):
    """The text (or region) to rewrite and its prompt do not fit the model's context; a
    smaller region may (front ends say how to choose one)."""


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
    """Outcome of a write: the real file written, its backup, the sha256 of the new bytes,
    and whether it was written in place (see the module docstring)."""

    path: Path
    backup_path: Path | None
    sha256: str
    in_place: bool = False


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


def os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


MAX_SOURCE_BYTES = 4_000_000
"""The largest file specedit reads (the CLI, the terminal app) or text it takes (the server)."""


def read_source(path: str | os.PathLike[str], *, max_bytes: int = MAX_SOURCE_BYTES) -> SourceFile:
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
        raise FileError(f"cannot read {name}: {os_reason(exc)}") from None
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
        raise FileError(f"cannot read {name}: {os_reason(exc)}") from None
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


def _may_write(path: Path, st: os.stat_result, extra: int = 0) -> bool:
    """Whether we may write ``path``. root may write anything, so for root the file (or
    folder) counts as writable only when some write bit is set: a 0444 file is read-only."""
    if os.geteuid() == 0:
        return bool(st.st_mode & 0o222)
    eff = os.access in os.supports_effective_ids
    return os.access(path, os.W_OK | extra, effective_ids=eff)


def check_write(target: Path, st: os.stat_result, force: bool) -> bool:
    """Refuse (FileError) a write the user should not make; return True when the file must
    be written in place (a hard link, or ``force`` in a read-only folder)."""
    if st.st_uid != os.geteuid() and not force:
        raise FileError(
            f"{target} belongs to another user (uid {st.st_uid}); not writing it "
            "(--force writes it and keeps its owner)"
        )
    if not _may_write(target, st) and not force:
        raise FileError(
            f"{target} is read-only (mode {stat.S_IMODE(st.st_mode):o}); not writing it "
            "(--force writes it anyway)"
        )
    if st.st_nlink > 1:
        return True  # a rename would break the link: write in place after the backup
    parent = target.parent
    try:
        writable_dir = _may_write(parent, os.stat(parent), os.X_OK)
    except OSError as exc:
        raise FileError(f"cannot write {target}: {os_reason(exc)}") from None
    if not writable_dir:
        if not force:
            raise FileError(
                f"cannot write {target}: its folder {parent} is read-only; not writing "
                "(--force writes the file in place)"
            )
        return True
    return False


def _keep_owner(tmp: Path, st: os.stat_result, mode: int) -> bool:
    """Give ``tmp`` the owner and group of the file it replaces; False when not allowed."""
    tst = os.stat(tmp)
    if (tst.st_uid, tst.st_gid) == (st.st_uid, st.st_gid):
        return True
    try:
        os.chown(tmp, st.st_uid, st.st_gid)
        os.chmod(tmp, mode)  # chown may clear the set-id bits
    except OSError:
        return False
    return True


def _link_original(target: Path) -> Path | None:
    """A second name for the original, to put it back if the folder cannot be synced."""
    keep = target.parent / f".{target.name}.specedit-{secrets.token_hex(4)}.old"
    try:
        os.link(target, keep)
    except OSError as exc:  # no hard links here: no rollback, the write is still atomic
        logger.debug("cannot link %s to %s: %s", target, keep, exc)
        return None
    return keep


def _replace(
    target: Path, data: bytes, mode: int, st: os.stat_result | None, before: Callable[[], object]
) -> bool:
    """Atomically replace (or create) ``target``; raise FileError with the file unchanged.
    Return False, having written nothing, when the new file could not keep the owner."""
    tmp: Path | None = None
    keep: Path | None = None
    try:
        tmp = write_temp(target.parent, f".{target.name}.specedit-", data, mode)
        if st is not None and not _keep_owner(tmp, st, mode):
            return False
        before()
        keep = _link_original(target) if st is not None else None
        os.replace(tmp, target)
        tmp = None
        try:
            fsync_dir(target.parent)
        except OSError as exc:  # the rename may not survive a crash: put the original back
            if keep is None:
                raise FileError(
                    f"wrote {target}, but syncing its folder failed: {os_reason(exc)}"
                ) from None
            os.replace(keep, target)
            keep = None
            raise FileError(
                f"cannot write {target}: syncing its folder failed: {os_reason(exc)}; "
                "the file is unchanged"
            ) from None
    except OSError as exc:
        raise FileError(f"cannot write {target}: {os_reason(exc)}") from None
    finally:
        for leftover in (tmp, keep):
            if leftover is not None:
                with contextlib.suppress(OSError):
                    os.unlink(leftover)
    return True


class PartlyWritten(FileError):
    """An in-place write failed and the old bytes could not be put back."""


def _pwrite_all(fd: int, data: bytes) -> None:
    view, offset = memoryview(data), 0
    while offset < len(data):
        offset += os.pwrite(fd, view[offset:], offset)


def _write_in_place(
    target: Path,
    data: bytes,
    old: bytes,
    before: Callable[[], object],
    backup: Path | None,
    why: str = "",
) -> None:
    """Overwrite ``target``'s own inode (keeps hard links, owner, mode). Safe because the
    backup is complete and fsynced first; space is reserved before the first byte changes,
    and on a failure the old bytes are written back."""
    try:
        fd = os.open(target, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise FileError(f"cannot write {target}{why}: {os_reason(exc)}") from None
    try:
        before()
        try:
            if len(data) > len(old):
                try:
                    os.posix_fallocate(fd, 0, len(data))
                except OSError as exc:
                    if exc.errno not in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
                        raise FileError(f"cannot write {target}: {os_reason(exc)}") from None
            _pwrite_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except OSError as exc:
            reason = os_reason(exc)
            try:
                _pwrite_all(fd, old)
                os.ftruncate(fd, len(old))
                os.fsync(fd)
            except OSError:
                where = f"is in {backup}" if backup else "could not be written back"
                raise PartlyWritten(
                    f"cannot write {target}: {reason}; it may be partly written: "
                    f"its previous content {where}"
                ) from None
            raise FileError(f"cannot write {target}: {reason}; the file is unchanged") from None
    finally:
        os.close(fd)


def put_bytes(
    target: Path,
    data: bytes,
    old: bytes,
    st: os.stat_result | None,
    mode: int,
    in_place: bool,
    before: Callable[[], object],
    backup: Path | None,
) -> bool:
    """Write ``data`` over ``target`` by rename, or in place; return True if in place."""
    if not in_place and _replace(target, data, mode, st, before):
        return False
    why = "" if in_place else " without changing its owner"  # a rename could not keep it
    _write_in_place(target, data, old, before, backup, why)
    return True


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
        raise FileError(f"cannot read {src.path}: {os_reason(exc)}") from None
    current = hashlib.sha256(data).hexdigest()
    if current != src.sha256:
        raise ConflictError(
            f"{src.path} changed on disk since it was read "
            f"(sha256 {current[:12]} != {src.sha256[:12]}); not writing. "
            "Re-run against the new content."
        )
    return data


def _stat(target: Path, name: object) -> os.stat_result:
    try:
        return os.stat(target)
    except OSError as exc:
        raise FileError(f"cannot read {name}: {os_reason(exc)}") from None


def save_step(target: Path, data: bytes, suffix: str, wrote: str, mode: int) -> Path:
    """Save ``data`` as the newest ``suffix`` step of ``target`` (see app.store.backups)."""
    try:
        return backups.save(target, data, suffix, wrote=wrote, mode=mode)
    except OSError as exc:
        where = backups.backup_dir(target)
        raise FileError(
            f"cannot back up {target} to {where}: {os_reason(exc)}; not writing"
        ) from None


def check_writable(src: SourceFile, *, force: bool = False) -> None:
    """Raise FileError now when :func:`write_atomic` would refuse ``src``'s file for its
    permissions or owner, so a command can refuse before a long generation (the write
    checks again)."""
    if src.path is None:
        raise FileError("this buffer has no file path; cannot write it")
    target = src.path.resolve()
    check_write(target, _stat(target, src.path), force)


def write_atomic(
    src: SourceFile, new_text: str, *, backup: bool = True, force: bool = False
) -> WriteResult:
    """Write ``new_text`` over ``src.path`` after checking the file is unchanged and the user
    may write it (``force`` writes a read-only file or another user's, keeping its owner),
    and (by default) backing it up. Symlinks are followed; ``path`` in the result is the real
    file written. See the module docstring for hard links."""
    if src.path is None:
        raise FileError("this buffer has no file path; cannot write it")
    target = src.path.resolve()
    old = _unchanged_bytes(src, target)
    st = _stat(target, src.path)
    in_place = check_write(target, st, force)
    mode = stat.S_IMODE(st.st_mode)
    data = render(src, new_text)
    digest = hashlib.sha256(data).hexdigest()
    backup_path = save_step(target, old, ".bak", digest, mode) if backup else None
    # The sha is checked again right before the bytes change, to keep the race window small.
    try:
        in_place = put_bytes(
            target,
            data,
            old,
            st,
            mode,
            in_place,
            lambda: _unchanged_bytes(src, target),
            backup_path,
        )
    except PartlyWritten:
        raise  # keep the backup: it is the only whole copy of the old content
    except FileError:
        if backup_path is not None:  # nothing was written: don't leave a no-op undo step
            backups.pop(backup_path)
        raise
    how = "in place" if in_place else "atomically"
    logger.info("wrote %s %s (%d bytes, backup %s)", target, how, len(data), backup_path)
    return WriteResult(path=target, backup_path=backup_path, sha256=digest, in_place=in_place)


def list_backups(path: str | os.PathLike[str]) -> list[Path]:
    """Backups of ``path``, oldest first (the last one is what :func:`undo` restores)."""
    directory = backup_dir(path)
    try:
        return backups.list_steps(directory, ".bak")
    except OSError as exc:
        raise FileError(f"cannot list backups in {directory}: {os_reason(exc)}") from None
