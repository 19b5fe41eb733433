"""The editor screen's file side: write the review, undo, save, reload, conflicts.

Contract: every write goes through ``app.store.files.write_atomic`` (sha256 conflict check,
backup, atomic replace) and undo through ``app.store.undo.undo``; this module only decides
*when* and reports the outcome (the backup with its folder). The write of a review is
ctrl+s, never a letter; for a suspect result or one with worse syntax it asks first, and
only ctrl+s (or the Yes button) answers yes. A failed write keeps the review on screen,
so nothing the user accepted is lost. Changes on disk (from the watchdog thread, via a
``FileChanged`` message) reload the editor when idle; while generating or reviewing they mark
a conflict: the app then refuses to write (``write_atomic`` would too) and ``ctrl+r`` re-runs
the last instruction against the new text.
"""

from __future__ import annotations

import logging
import os

from textual.timer import Timer

from ...code.syntax import syntax_warning
from ...store.files import ConflictError, FileError, SourceFile, read_source, write_atomic
from ...store.undo import undo
from ..messages import FileChanged
from .editor_state import EditorState

log = logging.getLogger(__name__)

DEBOUNCE_S = 0.15


def display_path(path: os.PathLike[str] | str) -> str:
    """``path`` relative to the working directory when inside it, else with ``~``."""
    p = os.path.abspath(os.fspath(path))
    rel = os.path.relpath(p)
    if not rel.startswith(".."):
        return rel
    home = os.path.expanduser("~")
    return "~" + p[len(home) :] if p.startswith(home + os.sep) else p


class FileOps:
    """Mixin for :class:`~.editor.EditorScreen` (uses its widgets and state)."""

    state: EditorState
    _disk_timer: Timer | None = None

    # ------------------------------------------------------------------ writing
    def action_write(self) -> None:
        review = self.state.review
        if review is None:
            return
        if self.state.conflict is not None or self.state.conflict_gone:
            self.notify(self.conflict_note(), title="Not writing", severity="error", timeout=10)
            return
        final = review.result_text()
        accepted = len(review.accepted())
        if not accepted:
            self.notify("No hunk accepted: nothing to write (a: accept, A: accept all).")
            return
        warnings = []
        suspect = self.state.result.suspect if self.state.result is not None else None
        if suspect is not None:
            warnings.append(suspect.message)
        syntax = syntax_warning(self.state.src.text, final, self.state.lang)
        if syntax is not None:
            warnings.append(syntax)
        if not warnings:
            self.write_text(final)
            return
        from .confirm import ConfirmScreen

        def answer(yes: bool | None) -> None:
            if yes and self.state.review is review:
                self.write_text(final)

        hunks = f"{accepted} accepted hunk{'s' if accepted != 1 else ''}"
        question = "\n".join(f"Warning: {w}." for w in warnings)
        self.app.push_screen(
            ConfirmScreen(
                f"{question}\n\nWrite the {hunks} to {self.state.shown_path} anyway?",
                yes="Write",
                yes_key="ctrl+s",
            ),
            answer,
        )

    def write_text(self, final: str) -> bool:
        """Write ``final`` over the file (atomic, backed up); report the outcome."""
        try:
            res = write_atomic(self.state.src, final)
        except ConflictError as exc:
            self._mark_conflict()
            self.notify(str(exc), title="Not writing", severity="error", timeout=10)
            return False
        except FileError as exc:
            self.notify(
                f"{exc}. Your review is kept; fix the problem and press w again.",
                title="Write failed",
                severity="error",
                timeout=10,
            )
            return False
        self._reload()
        self.state.review = None
        self.mode = "edit"
        self._scope_label()
        self.set_banner("")
        self.instruction.focus()
        backup = display_path(res.backup_path) if res.backup_path else "none"
        self.notify(f"Wrote {self.state.shown_path} (backup {backup}); ctrl+b undoes it.")
        return True

    def action_save(self) -> None:
        """Save the editor's own edits (the same atomic, conflict-checked write)."""
        text = self.editor.text
        if text == self.state.src.text:
            self.notify("No unsaved edits.")
            return
        self.write_text(text)

    def action_undo_write(self) -> None:
        try:
            undo(self.state.path)
        except FileError as exc:
            self.notify(str(exc), title="Undo", severity="error")
            return
        self._reload()
        self.notify(f"Restored the previous content of {self.state.shown_path}.")

    def _reload(self) -> None:
        """Re-read the file from disk into the editor (keeping the cursor where possible)."""
        try:
            self.state.src = read_source(self.state.path)
        except FileError as exc:
            self.notify(str(exc), severity="error")
            return
        self.state.conflict, self.state.conflict_gone = None, False
        editor = self.editor
        if editor.text != self.state.src.text:
            cursor = editor.cursor_location
            editor.load_text(self.state.src.text)
            row = min(cursor[0], editor.document.line_count - 1)
            editor.cursor_location = (row, 0)
        self.refresh_title()

    # ------------------------------------------------------------------ changes on disk
    def _on_disk_event(self, path: str) -> None:
        """watchdog thread: hand over to the UI thread."""
        self.post_message(FileChanged(path))

    def on_file_changed(self, message: FileChanged) -> None:
        if self._disk_timer is not None:
            self._disk_timer.stop()
        self._disk_timer = self.set_timer(DEBOUNCE_S, self.check_disk)

    def check_disk(self) -> None:
        """Compare the file on disk with what was read; reload or mark a conflict."""
        try:
            new = read_source(self.state.path)
        except FileError as exc:
            if self.state.path.exists():
                self.notify(f"{exc}", severity="error")
                return
            new = None
        if new is not None and new.sha256 == self.state.src.sha256:
            return  # our own write, or a touch
        busy = self.mode in ("generating", "review")
        unsaved = self.editor.text != self.state.src.text
        if new is None or busy or unsaved:
            self._mark_conflict(new)
            extra = " You have unsaved edits;" if unsaved and not busy else ""
            self.notify(
                f"{self.state.shown_path} changed on disk; it will not be overwritten.{extra} "
                "ctrl+r re-runs against the new text.",
                title="Conflict",
                severity="warning",
                timeout=10,
            )
            return
        self._reload()
        self.notify(f"Reloaded {self.state.shown_path}: it changed on disk.")

    def _mark_conflict(self, new: SourceFile | None = None) -> None:
        if new is None:
            try:
                new = read_source(self.state.path)
            except FileError:
                new = None
        self.state.conflict = new
        self.state.conflict_gone = new is None
        self.set_banner(self.conflict_note(), "error")

    def conflict_note(self) -> str:
        if self.state.conflict_gone:
            return f"CONFLICT: {self.state.shown_path} was deleted on disk; not writing"
        return (
            f"CONFLICT: {self.state.shown_path} changed on disk; not writing over it. "
            "ctrl+r: re-run against the new text"
        )

    def action_rerun(self) -> None:
        """Re-run the last instruction (against the file on disk if it changed)."""
        if self.mode == "generating":
            if self.state.live is not None:
                self.state.live.cancel.set()
            self.state.rerun_pending = True
            return
        if self.state.conflict is not None:
            self._reload()
            self.set_banner("")
        elif self.state.conflict_gone:
            self.notify(self.conflict_note(), severity="error")
            return
        if not self.state.last_instruction:
            self.notify("Nothing to re-run yet: type an instruction and press Enter.")
            return
        self.start_rewrite(self.state.last_instruction)
