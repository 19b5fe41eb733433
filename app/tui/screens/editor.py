"""The main screen: the file in a code editor, an instruction line, the live diff, review.

Contract: Enter in the instruction line starts ``app.edit.rewrite.rewrite`` in a thread worker with the
app's settings (``InstructionOps``). The worker streams into a :class:`~..live.LiveRun`; an 8 Hz
timer renders the live diff and the status bar from it, so the engine never waits on the UI. Esc
cancels (the hunks completed before it can still be kept). A finished rewrite opens hunk-by-hunk
review (``ReviewOps``); writing, undo, saving, reloading and conflicts are ``FileOps``'. F6 makes
Enter ask about the file and the context files instead (``AskOps``); the file is never changed.
Modes: ``edit`` (the instruction line shown and focused), ``generating``, ``review``, ``stopped``
(a result with nothing to review, its output visible), ``feedback`` (the line asks what was wrong),
``answering`` and ``answer``. In review and stopped modes the instruction line is hidden and a
line of keys stands in its place: letters are review commands there, and none of them writes
(ctrl+s does, after a confirmation where the result is suspect).
"""

from __future__ import annotations

import logging
import time

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Footer, Label, TextArea

from ....engine.backend import UserError
from ...code.syntax import language_for_path
from ...edit.rewrite import rewrite
from ...options import RewriteOptions
from ...runtime.loaded_model import LoadedModel
from ...store.files import DoesNotFit, SourceFile
from ..live import LiveRun
from ..messages import RewriteFailed, RewriteFinished
from ..review import diff_rows, row_of_new_line
from ..watch import FileWatcher
from ..widgets.answer_view import AnswerView
from ..widgets.diff_view import DiffView
from ..widgets.history_input import HistoryInput
from ..widgets.status import StatusBar
from .ask_ops import AskOps
from .editor_state import EditorState, spec_app
from .file_ops import FileOps, display_path
from .instruction_ops import InstructionOps
from .review_ops import ReviewOps

log = logging.getLogger(__name__)

TICK_HZ = 8
IDLE_REFRESH_S = 0.5
RUNNING = ("generating", "answering")
"""The modes in which a worker runs the model."""
VIEWS = {"edit": "editor", "answering": "answer", "answer": "answer"}
"""The view each mode shows (the diff view for the others)."""


class EditorScreen(InstructionOps, AskOps, ReviewOps, FileOps, Screen):
    """See the module docstring."""

    BINDINGS = [
        Binding("escape", "cancel", "Back"),
        Binding("f3", "toggle_region", "Region"),
        Binding("f4", "add_context", "Context"),
        Binding("f5", "toggle_speculation", "Spec on/off"),
        Binding("f6", "ask", "Ask"),
        Binding("ctrl+s", "save", "Save", show=False),
        Binding("ctrl+s", "write", "Write"),
        Binding("a", "accept", "Accept"),
        Binding("x", "reject", "Reject"),
        Binding("u", "undo_decision", "Undo"),
        Binding("A,shift+a", "accept_all", "All"),
        Binding("X,shift+x", "reject_all", "None"),
        Binding("n", "next_hunk", "Next"),
        Binding("p", "prev_hunk", "Prev"),
        Binding("f", "feedback", "Feedback"),
        Binding("ctrl+r", "rerun", "Re-run"),
        Binding("ctrl+b", "undo_write", "Undo write"),
        Binding("ctrl+l", "clear_context", "Clear context", show=False),
        Binding("ctrl+o", "open", "Open", show=False),
    ]
    REVIEW_ACTIONS = {
        "next_hunk",
        "prev_hunk",
        "accept",
        "reject",
        "undo_decision",
        "reject_all",
        "write",
    }

    mode: reactive[str] = reactive("edit")
    """edit | generating | review | stopped | feedback | answering | answer (see the module
    docstring)."""

    def __init__(self, src: SourceFile, *, watch: bool = True) -> None:
        super().__init__()
        self.state = EditorState.for_file(
            src, display_path(src.path), language_for_path(str(src.path))
        )
        self.ui_timer: Timer | None = None
        self._scope_timer: Timer | None = None
        self._watch = watch
        self.watcher: FileWatcher | None = None

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Label(self._title(), id="title")
        yield Label("", id="banner")
        with ContentSwitcher(initial="editor", id="views"):
            yield TextArea.code_editor(
                self.state.src.text,
                language=self.state.lang,
                id="editor",
                tab_behavior="focus",
                theme="monokai",
            )
            yield DiffView(id="diff")
            yield AnswerView(id="answer")
        with Horizontal(id="instruction-row"):
            yield Label("file", id="scope")
            yield HistoryInput(placeholder=self.PLACEHOLDER, id="instruction")
            yield Label("", id="review-keys")
        yield StatusBar(id="status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.ui_timer = self.set_interval(1 / TICK_HZ, self._tick)
        self.instruction.history = list(getattr(self.app, "history", []))
        self.instruction.focus()
        self.refresh_status()
        if self._watch:
            self.watcher = FileWatcher(self.state.path, self._on_disk_event)
            self.watcher.start()

    def on_unmount(self) -> None:
        if self.state.warm_stop is not None:
            self.state.warm_stop.set()
        if self.watcher is not None:
            self.watcher.stop()
        if self.state.live is not None:
            self.state.live.cancel.set()

    def _title(self) -> str:
        lang = self.state.lang or "plain text"
        modified = self.is_mounted and self.editor.text != self.state.src.text
        mark = "  [b $warning]● modified[/] [dim](ctrl+s saves)[/]" if modified else ""
        return f" {self.state.shown_path}  [dim]{lang}[/]{mark}"

    def refresh_title(self) -> None:
        self.query_one("#title", Label).update(self._title())

    @on(TextArea.Changed, "#editor")
    def _edited(self) -> None:
        self.refresh_title()

    @property
    def editor(self) -> TextArea:
        return self.query_one("#editor", TextArea)

    @property
    def diff(self) -> DiffView:
        return self.query_one("#diff", DiffView)

    @property
    def instruction(self) -> HistoryInput:
        return self.query_one("#instruction", HistoryInput)

    def set_banner(self, text: str, kind: str = "warning") -> None:
        banner = self.query_one("#banner", Label)
        banner.update(text)
        banner.set_class(bool(text), "-shown")
        banner.set_class(kind == "error", "-error")

    def watch_mode(self, old: str, new: str) -> None:
        self.query_one("#views", ContentSwitcher).current = VIEWS.get(new, "diff")
        typing = new in ("edit", "feedback", *RUNNING)
        self.instruction.display = typing
        self.query_one("#review-keys", Label).display = not typing
        if new == "feedback":
            self.instruction.value = ""
            self.instruction.placeholder = self.FEEDBACK_PLACEHOLDER
            self.query_one("#scope", Label).update("feedback")
            self.instruction.focus()
        elif old == "feedback":
            self.instruction.placeholder = (
                self.ASK_PLACEHOLDER if self.state.asking else self.PLACEHOLDER
            )
            self.instruction.value = self.state.last_instruction
        if new in ("review", "stopped", "answer"):
            self.state.hinted = False
            (self.answer_view if new == "answer" else self.diff).focus()
            self.show_review_keys()
        self.refresh_bindings()
        self.refresh_status()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.REVIEW_ACTIONS:
            return self.mode == "review"
        if action == "accept_all":
            return (
                self.mode == "review"
                and self.state.review is not None
                and not self.state.review.partial
            )
        if action == "feedback":
            return self.mode in ("review", "stopped") and self.state.result is not None
        if action in ("undo_write", "save", "open", "toggle_region", "ask"):
            return self.mode == "edit"
        if action == "cancel":
            return self.mode != "edit" or self.state.queued is not None
        if action in ("add_context", "toggle_speculation", "clear_context"):
            return self.mode in ("edit", "stopped")
        return True

    # ------------------------------------------------------------------ status
    def refresh_status(self) -> None:
        app = spec_app(self)
        status = self.query_one(StatusBar)
        live = self.state.live
        status.show_model(app.model_label(live.metrics if live else None))
        load = getattr(app, "load", None)
        if load is not None and self.mode == "edit":
            status.show_loading(
                *load.view(), note="1 instruction queued" if self.state.queued else ""
            )
            return
        settings = app.settings
        state = {"edit": "idle", "answer": "answered"}.get(self.mode, self.mode)
        note = f"queued: {self.state.queued}" if self.state.queued else ""
        metrics = live.metrics if live is not None else None
        result = self.state.result
        if result is not None and self.mode not in RUNNING:
            snap = result.stats.snapshot()
            if given_up := snap["given_up"]:  # made after the model's blocks failed
                note = f"{given_up} · {note}" if note else given_up
        status.show(
            metrics,
            state=state,
            flags=(settings.speculation, settings.exact),
            note=note,
            seconds=time.monotonic() - self.state.run_started if self.state.run_started else None,
        )

    def _tick(self) -> None:
        """UI timer: render the live diff and figures while generating (never per token).

        A tick with no new target call since the last one is skipped (but the figures are
        still refreshed twice a second), so a slow machine spends its CPU on the engine.
        While the model loads, the seconds in the status bar move once a second.
        """
        now = time.monotonic()
        if self.mode not in RUNNING or self.state.live is None:
            if getattr(self.app, "load", None) is not None and now - self.state.last_tick >= 1.0:
                self.state.last_tick = now
                self.refresh_status()
            return
        calls = self.state.live.metrics.target_calls
        if calls == self.state.last_calls and now - self.state.last_tick < IDLE_REFRESH_S:
            return
        self.state.last_calls, self.state.last_tick = calls, now
        if self.mode == "answering":
            self.render_answer_stream()
        else:
            self._render_live()
        self.query_one(StatusBar).sample(self.state.live.metrics)
        self.refresh_status()

    def _render_live(self) -> None:
        assert self.state.live is not None
        preview = self.state.live.preview()
        if preview is self.state.shown:
            return  # nothing new arrived since the last tick
        self.state.shown = preview
        rows = diff_rows(self.state.live.original, preview.hunks)
        self.diff.set_rows(rows, frontier=row_of_new_line(rows, preview.frontier))
        self.diff.follow()

    # ------------------------------------------------------------------ rewriting
    def start_rewrite(
        self,
        instruction: str,
        region: tuple[int, int] | None = None,
        feedback: tuple[str, str] | None = None,
    ) -> bool:
        """Start a rewrite of the editor's text; False (with a message) if it cannot start.

        While the model loads, the instruction is queued instead (see ``InstructionOps``).
        """
        if self.mode in RUNNING:
            self.notify("A run is going on; Esc cancels it.", severity="warning")
            return False
        loaded: LoadedModel | None = getattr(self.app, "loaded", None)
        if loaded is None:
            if getattr(self.app, "load", None) is not None and feedback is None:
                self.queue(instruction)
            else:
                spec_app(self).no_model_help()
            return False
        text = self.editor.text
        if region is None:
            region = self._region(text, quiet=True)
        opts: RewriteOptions = spec_app(self).settings.options(
            instruction,
            context_files=tuple(self.state.context_files),
            region=region,
            feedback=feedback,
        )
        self.state.queued = None
        self.state.last_instruction, self.state.last_region = instruction, region
        self.state.review = None
        self.state.live = LiveRun(text, region)
        self.set_banner("")
        self.diff.set_rows(diff_rows(text, []), frontier=0)
        self.query_one(StatusBar).history.clear()
        self.state.run_started = time.monotonic()
        self.mode = "generating"
        if self.state.warm_stop is not None:  # the rewrite waits at most one chunk of it
            self.state.warm_stop.set()
        self._run_rewrite(loaded, text, opts, self.state.live)
        return True

    @work(thread=True, group="rewrite", exit_on_error=False)
    def _run_rewrite(
        self, loaded: LoadedModel, text: str, opts: RewriteOptions, live: LiveRun
    ) -> None:
        """Thread worker: run the engine; talk to the UI only through messages."""
        try:
            res = rewrite(
                loaded,
                text,
                opts,
                path=self.state.shown_path,
                on_text=live.append,
                cancel=live.cancel,
                metrics=live.metrics,
            )
        except (UserError, ValueError) as exc:
            self.post_message(RewriteFailed(str(exc), isinstance(exc, DoesNotFit)))
            return
        except Exception as exc:  # a bug must not take the user's work down with it
            log.exception("rewrite failed")
            self.post_message(RewriteFailed(f"internal error: {exc!r} (see the log)"))
            return
        self.post_message(RewriteFinished(res))

    def on_rewrite_failed(self, message: RewriteFailed) -> None:
        self.mode = "edit"
        self.instruction.focus()
        hint = " In the app, F3 limits the rewrite to a region." if message.does_not_fit else ""
        self.notify(message.error + hint, title="Rewrite failed", severity="error", timeout=10)
        self._maybe_rerun()

    def on_rewrite_finished(self, message: RewriteFinished) -> None:
        self.show_result(message.result)
        self._maybe_rerun()

    def _maybe_rerun(self) -> None:
        if self.state.rerun_pending:
            self.state.rerun_pending = False
            self.action_rerun()

    # ------------------------------------------------------------------ actions
    def action_cancel(self) -> None:
        if self.mode in RUNNING and self.state.live is not None:
            self.state.live.cancel.set()
            self.query_one(StatusBar).set_text("st-state", "cancelling")
        elif self.mode == "feedback":
            self.mode = "review" if self.state.review is not None else "stopped"
        elif self.mode == "answer":
            self.leave_answer()
        elif self.mode in ("review", "stopped"):
            if self.state.review is not None and any(
                d is not None for d in self.state.review.decisions
            ):
                self.notify("Review discarded; the file is untouched.")
            self.state.review = None
            self.mode = "edit"
            self._scope_label()
            self.set_banner(self.conflict_note() if self.state.conflict else "")
            self.instruction.focus()
        elif self.state.queued is not None:
            self.state.queued = None
            self.notify("The queued instruction is dropped.")
            self.refresh_status()

    def action_open(self) -> None:
        spec_app(self).action_open()
