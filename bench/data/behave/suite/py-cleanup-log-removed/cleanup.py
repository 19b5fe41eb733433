"""Housekeeping for the build cache directory.

The CI runners share a cache of build artefacts; ``remove_stale`` deletes files
nobody touched for a while and ``trim_to_size`` deletes the oldest files until
the cache fits its quota.
"""

import logging
import os
import time

logger = logging.getLogger(__name__)

SECONDS_PER_DAY = 86400
KEEP_NAMES = {".keep", "README"}


def cache_files(directory):
    """(path, size, mtime) of every regular file under ``directory``."""
    out = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            if name in KEEP_NAMES:
                continue
            path = os.path.join(root, name)
            try:
                st = os.stat(path)
            except FileNotFoundError:
                continue
            out.append((path, st.st_size, st.st_mtime))
    return out


def remove_stale(directory, max_age_days, now=None):
    """Delete the files not modified for ``max_age_days``; return their paths."""
    now = time.time() if now is None else now
    limit = now - max_age_days * SECONDS_PER_DAY
    removed = []
    for path, _size, mtime in cache_files(directory):
        if mtime < limit:
            os.remove(path)
            removed.append(path)
    return removed


def trim_to_size(directory, max_bytes):
    """Delete the least recently modified files until the total is under ``max_bytes``."""
    files = sorted(cache_files(directory), key=lambda f: f[2])
    total = sum(size for _p, size, _m in files)
    removed = []
    for path, size, _mtime in files:
        if total <= max_bytes:
            break
        try:
            os.remove(path)
        except OSError as e:
            logger.warning("could not remove %s: %s", path, e)
            continue
        total -= size
        removed.append(path)
    return removed


def remove_empty_dirs(directory):
    """Remove the empty sub-directories of ``directory`` (deepest first)."""
    count = 0
    for root, dirs, files in os.walk(directory, topdown=False):
        if root != directory and not dirs and not files:
            try:
                os.rmdir(root)
                count += 1
            except OSError:
                pass
    return count


def total_size(directory):
    return sum(size for _p, size, _m in cache_files(directory))
