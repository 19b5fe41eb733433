"""Durable renames: the one ``fsync_dir``, for the models cache and the app's state alike.

Contract: ``fsync_dir(directory)`` fsyncs a folder so a rename in it survives a crash. A
platform or filesystem that cannot fsync folders (Windows cannot open one; the errnos of
``NO_DIR_FSYNC``) is logged and ignored; any other failure raises ``OSError``, which
callers turn into their own one-line message.
"""

from __future__ import annotations

import errno
import logging
import os

log = logging.getLogger(__name__)

NO_DIR_FSYNC = frozenset({errno.EINVAL, errno.EBADF, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EISDIR})
"""The errnos with which a filesystem says it cannot fsync a folder at all (not that it failed)."""


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """fsync ``directory`` so a rename in it survives a crash (see the module docstring)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        if os.name != "nt":
            raise
        log.debug("cannot open folder %s to fsync it: %s", directory, exc)
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in NO_DIR_FSYNC:
            raise
        log.debug("cannot fsync folder %s: %s", directory, exc)
    finally:
        os.close(fd)
