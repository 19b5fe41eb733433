"""Housekeeping for the render farm's scratch space.

Jobs leave intermediate frames under ``/scratch/<job>/``; the nightly cron runs
``python -m purge /scratch --days 3`` to delete what is older than the retention and
to drop the job folders that end up empty.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("purge")

KEEP_NAMES = {".keep", "README"}


@dataclass
class PurgeStats:
    deleted: int = 0
    freed_bytes: int = 0
    kept: int = 0
    removed_dirs: int = 0


def is_protected(path: Path) -> bool:
    """Files the purge never touches: markers and anything inside a ``.lock``ed folder."""
    if path.name in KEEP_NAMES:
        return True
    return (path.parent / ".lock").exists()


def purge_old(root: Path, max_age_days: float, now: float | None = None) -> PurgeStats:
    """Delete the files under ``root`` last modified more than ``max_age_days`` ago."""
    now = time.time() if now is None else now
    cutoff = now - max_age_days * 86400
    stats = PurgeStats()
    for dirpath, _dirs, files in os.walk(root):
        for name in sorted(files):
            path = Path(dirpath) / name
            if is_protected(path):
                stats.kept += 1
                continue
            st = path.stat()
            if st.st_mtime >= cutoff:
                stats.kept += 1
                continue
            path.unlink()
            log.info("deleted %s (%d bytes)", path, st.st_size)
            stats.deleted += 1
            stats.freed_bytes += st.st_size
    return stats


def remove_empty_dirs(root: Path) -> int:
    """Remove the empty folders below ``root`` (never ``root`` itself), deepest first."""
    removed = 0
    for dirpath, _dirs, _files in sorted(os.walk(root), key=lambda t: -t[0].count(os.sep)):
        p = Path(dirpath)
        if p != root and not any(p.iterdir()):
            p.rmdir()
            removed += 1
    return removed


def human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    raise AssertionError("unreachable")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="purge", description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("--days", type=float, default=3.0)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    if not args.root.is_dir():
        log.error("%s is not a folder", args.root)
        return 2
    stats = purge_old(args.root, args.days)
    stats.removed_dirs = remove_empty_dirs(args.root)
    print(
        f"deleted {stats.deleted} files ({human(stats.freed_bytes)}), kept {stats.kept}, "
        f"removed {stats.removed_dirs} empty folders"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
