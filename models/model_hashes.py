"""The hash record: a catalog model's file checked against its pinned sha256.

Contract:
  * ``verify`` recomputes the sha256 (``specedit models verify``).
  * ``check_once`` (called where a model is loaded) checks a catalog model's file once per
    version of the file (path, size, mtime, inode), remembering the result in a record
    file the caller names (a small JSON file, 0600); ``recorded_check`` reads that record
    without hashing. A user's own GGUF has no pinned hash.
  * A size or hash mismatch raises ``ModelError``: one line, with the command that fixes it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from ..engine.backend import ModelError
from .catalog import (
    CatalogEntry,
    Progress,
    catalog_entry,
    entry_for_file,
    fix_command,
    model_path,
)

logger = logging.getLogger(__name__)

CHUNK = 1 << 20
"""Bytes read (and hashed) at a time."""


def sha256_file(path: Path, label: str, total: int, progress: Progress | None) -> str:
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(label, done, total)
    return digest.hexdigest()


def _checked_size(entry: CatalogEntry, path: Path) -> os.stat_result:
    """``path``'s stat when it is a file of the catalog size, else ``ModelError``."""
    if not path.is_file():
        raise ModelError(
            f"model {entry.name!r} is not installed ({path} is missing); "
            f"run: {fix_command(entry.name)}"
        )
    st = path.stat()
    if st.st_size != entry.size_bytes:
        raise ModelError(
            f"model file {path} has {st.st_size} bytes, expected {entry.size_bytes}; "
            f"run: {fix_command(entry.name, force=True)}"
        )
    return st


def _check_sha(entry: CatalogEntry, path: Path, actual: str) -> None:
    if actual != entry.sha256:
        raise ModelError(
            f"model file {path} is corrupt: sha256 {actual}, expected {entry.sha256}; "
            f"run: {fix_command(entry.name, force=True)}"
        )


def verify(
    name: str | CatalogEntry, progress: Progress | None = None, record: Path | None = None
) -> Path:
    """Recompute the model file's sha256; return its path or raise ``ModelError``.

    With ``record`` (see ``check_once``), the result is remembered there."""
    entry = catalog_entry(name)
    path = model_path(entry)
    st = _checked_size(entry, path)
    actual = sha256_file(path, f"{entry.name}: verifying", st.st_size, progress)
    if record is not None:
        remember(record, path, st, actual)
    _check_sha(entry, path, actual)
    return path


def check_once(path: Path, record: Path) -> bool:
    """Check a catalog model's file against its pinned sha256, once per file version.

    The hash is computed at the first use of each (path, size, mtime, inode) and kept in
    ``record`` (a small JSON file, mode 0600), so later loads cost one ``stat``. Raises
    ``ModelError`` (one line, with the command that fixes it) on a size or hash mismatch.
    Returns False for a file that is not a catalog model's (nothing to check against).
    """
    entry = entry_for_file(path)
    if entry is None:
        return False
    st = _checked_size(entry, path)
    key = str(path.resolve())
    seen = _read_record(record)
    known = seen.get(key)
    if isinstance(known, dict) and known.get("stamp") == _stamp(st):
        actual = str(known.get("sha256"))
    else:
        logger.info("checking the sha256 of %s (once per version of the file)", path)
        actual = sha256_file(path, f"{entry.name}: checking", st.st_size, None)
        remember(record, path, st, actual)
    _check_sha(entry, path, actual)
    return True


def recorded_check(path: Path, record: Path) -> bool | None:
    """What ``check_once`` remembered about ``path``'s current version, without hashing:
    True (its sha256 matched), False (it did not), None (not checked yet, or not a
    catalog model's file)."""
    entry = entry_for_file(path)
    if entry is None:
        return None
    known = _read_record(record).get(str(path.resolve()))
    if not isinstance(known, dict) or known.get("stamp") != _stamp(path.stat()):
        return None
    return known.get("sha256") == entry.sha256


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _read_record(record: Path) -> dict:
    try:
        data = json.loads(record.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remember(record: Path, path: Path, st: os.stat_result, actual: str) -> None:
    """Keep ``path``'s sha256 for its current version in ``record`` (best effort)."""
    seen = {k: v for k, v in _read_record(record).items() if os.path.exists(k)}
    seen[str(path.resolve())] = {"stamp": _stamp(st), "sha256": actual}
    tmp = record.with_name(f".{record.name}.{os.getpid()}.tmp")
    try:
        if not record.parent.exists():
            record.parent.mkdir(mode=0o700, parents=True)
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(seen, f, indent=1)
        os.replace(tmp, record)
    except OSError as exc:  # only a cache: the next load checks again
        logger.warning("could not record the model check in %s: %s", record, exc)
        tmp.unlink(missing_ok=True)
