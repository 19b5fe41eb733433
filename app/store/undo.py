"""Undo and redo of specedit's writes, from the backup store (``app.store.backups``).

Contract: undo and redo never drop a line.

* :func:`undo` restores the newest backup of a file and pops it; the text it replaces goes on
  the redo stack. :func:`redo` puts back what the last undo replaced; the text it replaces
  goes on the undo stack. Each step records the sha256 of the bytes written over it, so both
  refuse (:class:`~app.store.files.FileError`, one line, nothing changed) when the file changed
  since specedit wrote it: that later edit would be lost. With ``force`` they restore anyway
  and the edit is kept on the other stack; :class:`Restored` names the step restored from
  and where the replaced text went.
* A step whose bytes no longer match its record is refused as damaged. A step from an
  older version (no record) needs ``force``: specedit cannot tell what was written over it.
* The write itself is ``app.store.files``'s: the same permission checks, atomic rename (or write
  in place for hard links), backup first and conflict check just before the bytes change.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from . import backups
from .files import (
    ConflictError,
    FileError,
    PartlyWritten,
    backup_dir,
    check_write,
    os_reason,
    put_bytes,
    save_step,
)

__all__ = ["Restored", "redo", "undo"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Restored:
    """Outcome of an undo or redo."""

    path: Path
    """The real file restored."""
    step: Path
    """The backup (``.bak``) or redo file (``.redo``) its content came from (now removed)."""
    saved: Path | None
    """Where the text it replaced was kept (a redo file after undo, a backup after redo);
    None when the file already held that content."""
    forced: bool
    """The file had changed since specedit wrote it, and ``force`` restored it anyway."""


def undo(path: str | os.PathLike[str], *, force: bool = False) -> Restored:
    """Restore the newest backup of ``path`` and pop it; the text it replaces goes on the
    redo stack. Refuses (FileError) when the file changed since specedit wrote it, unless
    ``force``."""
    return _restore(path, ".bak", ".redo", force)


def redo(path: str | os.PathLike[str], *, force: bool = False) -> Restored:
    """Put back what the last :func:`undo` replaced (the newest redo step) and pop it; the
    text it replaces goes on the undo stack. Refuses when the file changed since that undo,
    unless ``force``."""
    return _restore(path, ".redo", ".bak", force)


def _read_current(target: Path, name: str) -> tuple[bytes | None, os.stat_result | None]:
    try:
        return target.read_bytes(), os.stat(target)
    except FileNotFoundError:
        return None, None
    except IsADirectoryError:
        raise FileError(f"{name} is a directory; cannot restore") from None
    except OSError as exc:
        raise FileError(f"cannot read {name}: {os_reason(exc)}") from None


def _recorded_mode(record: dict | None) -> int:
    """The mode a deleted file is re-created with: the one recorded, else 0644."""
    mode = (record or {}).get("mode")
    return mode & 0o7777 if isinstance(mode, int) else 0o644


def _refusal(name: str, cmd: str, step: Path, record: dict | None) -> FileError:
    other = "redo" if cmd == "undo" else "undo"
    if record is None:
        why = f"cannot tell whether {name} changed since {step} was saved (no record of it)"
    elif cmd == "undo":
        why = f"{name} changed since specedit wrote it; undo would drop those edits"
    else:
        why = f"{name} changed since undo restored it; redo would drop those edits"
    return FileError(
        f"{why}, so nothing was restored (specedit {cmd} --force restores {step} "
        f"and keeps the current text for specedit {other})"
    )


def _restore(path: str | os.PathLike[str], take: str, give: str, force: bool) -> Restored:
    name = os.fspath(path)
    cmd = "undo" if take == ".bak" else "redo"
    target = Path(os.path.abspath(name)).resolve()
    directory = backup_dir(target)
    try:
        steps = backups.list_steps(directory, take)
    except OSError as exc:
        raise FileError(f"cannot list backups in {directory}: {os_reason(exc)}") from None
    if not steps:
        what = "backups of" if cmd == "undo" else "undone writes of"
        raise FileError(f"no {what} {name} to restore")
    step = steps[-1]
    try:
        data = step.read_bytes()
    except OSError as exc:
        raise FileError(f"cannot read backup {step}: {os_reason(exc)}") from None
    record = backups.read_record(step)
    if record is not None and record.get("sha256") != hashlib.sha256(data).hexdigest():
        raise FileError(f"backup {step} is damaged (its sha256 does not match); not restoring it")
    current, st = _read_current(target, name)
    saved, forced = None, False
    if current != data:
        if current is not None:
            if record is None or record.get("wrote") != hashlib.sha256(current).hexdigest():
                if not force:
                    raise _refusal(name, cmd, step, record)
                forced = True
        in_place = st is not None and check_write(target, st, force)
        mode = stat.S_IMODE(st.st_mode) if st is not None else _recorded_mode(record)
        digest = hashlib.sha256(data).hexdigest()
        if current is not None:
            saved = save_step(target, current, give, digest, mode)

        def unchanged() -> None:
            if _read_current(target, name)[0] != current:
                raise ConflictError(f"{name} changed on disk during {cmd}; nothing was restored")

        try:
            put_bytes(target, data, current or b"", st, mode, in_place, unchanged, saved)
        except PartlyWritten:
            raise
        except FileError:
            if saved is not None:
                backups.pop(saved)
            raise
    backups.pop(step)
    logger.info("%s: restored %s from %s (replaced text: %s)", cmd, target, step, saved)
    return Restored(path=target, step=step, saved=saved, forced=forced)
