"""A download or hash-check progress bar on the terminal, for ``models.catalog``'s callbacks.

Contract: ``rich_progress(console=None)`` is a context manager yielding a
``models.catalog.Progress`` callback that draws a ``rich`` bar (on stderr by default); the
bar starts with the first report, so a failure before it prints no empty line, and stops
when the block ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ...models.catalog import Progress


@contextlib.contextmanager
def rich_progress(console: object | None = None) -> Iterator[Progress]:
    """A ``rich`` progress bar (on stderr by default) as a ``pull``/``verify`` callback."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.progress import Progress as RichProgress

    bar = RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console if console is not None else Console(stderr=True),
        transient=False,
    )
    task_id: list[int] = []

    def callback(label: str, done: int, total: int) -> None:
        if not task_id:  # the bar starts with the first report: a failure before it
            bar.start()  # prints no empty progress line
            task_id.append(bar.add_task(label, total=total))
        bar.update(task_id[0], description=label, completed=done, total=total)

    try:
        yield callback
    finally:
        if task_id:
            bar.stop()
