"""The backup store: the bytes each write replaced, so ``undo`` and ``redo`` can put them back.

Contract: a step saved here is complete and durable before the write it protects starts.
Layout (all private: folders 0700, files 0600, see ``app.store.state``)::

    <root>/<sha256(real path)[:16]>/index.json        {"path": the real path}
    <root>/<key>/<time_ns>.bak     the undo stack: content a write replaced
    <root>/<key>/<time_ns>.redo    the redo stack: content an undo replaced
    <root>/<key>/<step>.json       {"sha256": of the step's bytes, "wrote": of the bytes that
                                   replaced them, "mode": ...}

``<root>`` is ``$SPECEDIT_BACKUP_DIR`` or ``<state dir>/backups``. :func:`save` writes the record,
then the step (each a fsynced temp file renamed into place), then fsyncs the folder, and keeps the
newest :data:`MAX_BACKUPS` of that stack; the record lets undo tell whether the file still holds
what specedit wrote and whether a step is intact. Functions here raise ``OSError``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from pathlib import Path

from .state import (
    FILE_MODE,
    fsync_dir,
    private_dir,
    state_dir,
    state_subdir,
    write_private,
    write_temp,
)

__all__ = [
    "MAX_BACKUPS",
    "backup_dir",
    "backup_root",
    "list_steps",
    "pop",
    "read_record",
    "save",
]

log = logging.getLogger(__name__)

MAX_BACKUPS = 20  # per file and per stack


def backup_root() -> Path:
    """``$SPECEDIT_BACKUP_DIR`` if set, else ``state_dir()/backups``."""
    override = os.environ.get("SPECEDIT_BACKUP_DIR")
    return Path(override).expanduser() if override else state_dir() / "backups"


def backup_dir(path: str | os.PathLike[str]) -> Path:
    """The folder holding the steps of ``path`` (its real, absolute path)."""
    real = Path(os.path.abspath(os.fspath(path))).resolve()
    key = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    return backup_root() / key


def list_steps(directory: Path, suffix: str) -> list[Path]:
    """The ``suffix`` (".bak" or ".redo") steps in ``directory``, oldest first."""
    try:
        found = [p for p in directory.iterdir() if p.suffix == suffix and p.stem.isdigit()]
    except FileNotFoundError:
        return []
    return sorted(found, key=lambda p: int(p.stem))


def _record_path(step: Path) -> Path:
    return step.with_name(step.name + ".json")


def read_record(step: Path) -> dict | None:
    """The record beside ``step``, or None when it is missing or unreadable (a step saved by
    an older version has none)."""
    try:
        rec = json.loads(_record_path(step).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def save(target: Path, data: bytes, suffix: str, *, wrote: str, mode: int) -> Path:
    """Store ``data`` (what ``target`` holds now) as the newest ``suffix`` step, recording
    that bytes hashing to ``wrote`` are about to replace it; return the step's path."""
    if os.environ.get("SPECEDIT_BACKUP_DIR"):
        private_dir(backup_root(), tighten=False)  # a folder the user chose stays as it is
    else:
        state_subdir("backups")  # the state dir and backups/ 0700
    directory = private_dir(backup_dir(target))
    index = directory / "index.json"
    if not index.exists():
        write_private(index, json.dumps({"path": str(target)}, indent=2).encode("utf-8"))
    existing = list_steps(directory, suffix)
    stamp = time.time_ns()
    if existing:
        stamp = max(stamp, int(existing[-1].stem) + 1)
    dest = directory / f"{stamp}{suffix}"
    record = {"sha256": hashlib.sha256(data).hexdigest(), "wrote": wrote, "mode": mode}
    rec_tmp = write_temp(directory, ".record-", json.dumps(record).encode("utf-8"), FILE_MODE)
    os.replace(rec_tmp, _record_path(dest))
    tmp = write_temp(directory, ".backup-", data, FILE_MODE)
    try:
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        with contextlib.suppress(OSError):
            os.unlink(_record_path(dest))
        raise
    fsync_dir(directory)  # the step exists on disk before the write it protects starts
    for old in list_steps(directory, suffix)[:-MAX_BACKUPS]:
        pop(old)
    log.debug("saved %s of %s as %s", suffix, target, dest)
    return dest


def pop(step: Path) -> None:
    """Remove a step and its record (best effort: a leftover step only adds an undo)."""
    for p in (step, _record_path(step)):
        with contextlib.suppress(OSError):
            p.unlink()
