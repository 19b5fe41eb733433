"""File picker: a ``DirectoryTree`` that returns a readable text file.

Contract: :class:`FilePickerScreen` dismisses with the ``SourceFile`` of the chosen file,
read with ``app.store.files.read_source``; a file it cannot edit (binary, not UTF-8, too large,
unreadable) gets its one-line reason as a notification and the picker stays open. Esc
dismisses with None.
"""

from __future__ import annotations

import os
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DirectoryTree, Footer, Label

from ...store.files import FileError, SourceFile, read_source


class FilePickerScreen(Screen[SourceFile | None]):
    """See the module docstring."""

    BINDINGS = [Binding("escape", "dismiss_none", "Back")]

    def __init__(self, title: str = "Open a file", root: str | os.PathLike[str] = ".") -> None:
        super().__init__()
        self.title_text = title
        self.root = Path(root)

    def compose(self) -> ComposeResult:
        yield Label(f" {self.title_text}", id="title")
        yield DirectoryTree(self.root, id="tree")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DirectoryTree).focus()

    @on(DirectoryTree.FileSelected)
    def _chosen(self, event: DirectoryTree.FileSelected) -> None:
        try:
            src = read_source(event.path)
        except FileError as exc:
            self.notify(str(exc), title="Cannot open", severity="error", timeout=8)
            return
        self.dismiss(src)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
