"""Watch one file for changes on disk with watchdog.

Contract: :class:`FileWatcher` watches the file's *directory* (editors save by writing a
temporary file and renaming it over the original, which a watch on the file itself
misses) and calls ``on_change(path)`` from watchdog's thread for every event that creates,
modifies, deletes or moves onto the file. The callback must be thread safe (the app
posts a message). Deciding whether the content really changed (sha256 against what was
read) is the caller's job, so the app's own atomic writes are harmless.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)


class FileWatcher:
    """A watchdog observer on ``path``'s directory, filtered to ``path``."""

    def __init__(self, path: str | os.PathLike[str], on_change: Callable[[str], None]) -> None:
        self.path = Path(os.path.abspath(os.fspath(path)))
        self._real = os.path.realpath(self.path)
        self._on_change = on_change
        self._observer = None

    def _matches(self, p: str | bytes | None) -> bool:
        if not p:
            return False
        p = os.fsdecode(p)
        return p == str(self.path) or os.path.realpath(p) == self._real

    def start(self) -> bool:
        """Start watching; False (and a log line) if watchdog is missing or fails."""
        try:
            from watchdog.events import FileSystemEvent, FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:
            log.warning("watchdog is not installed; not watching %s", self.path)
            return False
        watcher = self

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                dest = getattr(event, "dest_path", None)
                if watcher._matches(event.src_path) or watcher._matches(dest):
                    watcher._on_change(str(watcher.path))

        try:
            observer = Observer()
            observer.daemon = True
            observer.schedule(_Handler(), str(self.path.parent), recursive=False)
            observer.start()
        except (OSError, RuntimeError) as exc:
            log.warning("cannot watch %s: %s", self.path.parent, exc)
            return False
        self._observer = observer
        return True

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=2)
