"""The main screen: the file in a code editor, an instruction line, the live diff, review.

Contract: Enter in the instruction line starts ``app.rewrite.rewrite`` in a thread worker
with the app's settings (region mode limits it to the enclosing tree-sitter node). The
worker streams into a :class:`~..live.LiveRun`; an 8 Hz timer renders the live diff and
the status bar from it, so the engine never waits on the UI. Esc cancels (the file is
untouched and the partial output stays visible). A finished rewrite opens hunk-by-hunk
review; writing, undo, saving, reloading and conflicts are in :class:`FileOps`.
Typing in the instruction line first warms the model up on the file
(``app.rewrite.warm``, once per version of the text and context): it reads the file while
the instruction is typed, and the rewrite, which interrupts it, prefills only the rest.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Footer, Input, Label, TextArea

from ....engine.backend import UserError
from ...files import SourceFile
from ...options import RewriteOptions
from ...rewrite import WarmResult, rewrite, warm
from ...session import ModelSession
from ...syntax import enclosing_node_range, language_for_path
from ..live import LiveRun
from ..messages import RewriteFailed, RewriteFinished
from ..review import Review, diff_rows, row_of_new_line
from ..watch import FileWatcher
from ..widgets.diff_view import DiffView
from ..widgets.status import StatusBar
from .file_ops import FileOps
from .review_ops import ReviewOps

log = logging.getLogger(__name__)

TICK_HZ = 8
IDLE_REFRESH_S = 0.5


def display_path(path: os.PathLike[str] | str) -> str:
    """``path`` relative to the working directory when inside it, else with ``~``."""
    p = os.path.abspath(os.fspath(path))
    rel = os.path.relpath(p)
    if not rel.startswith(".."):
        return rel
    home = os.path.expanduser("~")
    return "~" + p[len(home) :] if p.startswith(home + os.sep) else p


class EditorScreen(ReviewOps, FileOps, Screen):
    """See the module docstring."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel/back"),
        Binding("f3", "toggle_region", "Region"),
        Binding("f4", "add_context", "Context"),
        Binding("f5", "toggle_speculation", "Spec on/off"),
        Binding("ctrl+r", "rerun", "Re-run"),
        Binding("ctrl+s", "save", "Save", show=False),
        Binding("ctrl+b", "undo_write", "Undo write"),
        Binding("ctrl+l", "clear_context", "Clear context", show=False),
        Binding("ctrl+o", "open", "Open", show=False),
        Binding("n", "next_hunk", "Next"),
        Binding("p", "prev_hunk", "Prev"),
        Binding("a", "accept", "Accept"),
        Binding("x", "reject", "Reject"),
        Binding("A,shift+a", "accept_all", "Accept all"),
        Binding("w", "write", "Write"),
    ]
    REVIEW_ACTIONS = {"next_hunk", "prev_hunk", "accept", "reject", "accept_all", "write"}

    mode: reactive[str] = reactive("edit")
    """edit | generating | review | stopped (cancelled or no output: preview kept)."""

    def __init__(self, src: SourceFile, *, watch: bool = True) -> None:
        super().__init__()
        assert src.path is not None
        self.src = src
        self.path = src.path
        self.shown_path = display_path(src.path)
        self.lang = language_for_path(str(src.path))
        self.live: LiveRun | None = None
        self.review: Review | None = None
        self.last_instruction = ""
        self.last_region: tuple[int, int] | None = None
        self.region_mode = False
        self.context: list[tuple[str, str]] = []
        self.conflict: SourceFile | None = None
        self.conflict_gone = False
        self.rerun_pending = False
        self.ui_timer: Timer | None = None
        self._scope_timer: Timer | None = None
        self._shown: object = None
        self._warm_key: tuple | None = None
        self._warm_stop: threading.Event | None = None
        self.warm_result: WarmResult | None = None
        self._last_calls, self._last_tick = -1, 0.0
        self._watch = watch
        self.watcher: FileWatcher | None = None

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Label(self._title(), id="title")
        yield Label("", id="banner")
        with ContentSwitcher(initial="editor", id="views"):
            yield TextArea.code_editor(
                self.src.text,
                language=self.lang,
                id="editor",
                tab_behavior="focus",
                theme="monokai",
            )
            yield DiffView(id="diff")
        with Horizontal(id="instruction-row"):
            yield Label("file", id="scope")
            yield Input(
                placeholder="Instruction, e.g. add type hints to parse(); Enter rewrites",
                id="instruction",
            )
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.ui_timer = self.set_interval(1 / TICK_HZ, self._tick)
        self.query_one("#instruction", Input).focus()
        self.refresh_status()
        if self._watch:
            self.watcher = FileWatcher(self.path, self._on_disk_event)
            self.watcher.start()

    def on_unmount(self) -> None:
        if self._warm_stop is not None:
            self._warm_stop.set()
        if self.watcher is not None:
            self.watcher.stop()
        if self.live is not None:
            self.live.cancel.set()

    def _title(self) -> str:
        lang = self.lang or "plain text"
        return f" {self.shown_path}  [dim]{lang}[/]"

    @property
    def editor(self) -> TextArea:
        return self.query_one("#editor", TextArea)

    @property
    def diff(self) -> DiffView:
        return self.query_one("#diff", DiffView)

    def set_banner(self, text: str, kind: str = "warning") -> None:
        banner = self.query_one("#banner", Label)
        banner.update(text)
        banner.set_class(bool(text), "-shown")
        banner.set_class(kind == "error", "-error")

    def watch_mode(self, old: str, new: str) -> None:
        self.query_one("#views", ContentSwitcher).current = "editor" if new == "edit" else "diff"
        self.refresh_bindings()
        self.refresh_status()
        if new == "review":
            self.diff.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.REVIEW_ACTIONS:
            return self.mode == "review"
        if action in ("undo_write", "save", "open", "toggle_region"):
            return self.mode == "edit"
        if action == "cancel":
            return self.mode != "edit"
        if action in ("add_context", "toggle_speculation", "clear_context"):
            return self.mode in ("edit", "stopped")
        return True

    # ------------------------------------------------------------------ status
    def refresh_status(self) -> None:
        app = self.app
        metrics = self.live.metrics if self.live is not None else None
        settings = app.settings  # type: ignore[attr-defined]
        state = {"edit": "idle", "stopped": "stopped"}.get(self.mode, self.mode)
        self.query_one(StatusBar).show(
            metrics,
            state=state,
            model=app.model_label,  # type: ignore[attr-defined]
            flags=(settings.speculation, settings.exact),
        )

    def _tick(self) -> None:
        """UI timer: render the live diff and figures while generating (never per token).

        A tick with no new target call since the last one is skipped (but the figures are
        still refreshed twice a second), so a slow machine spends its CPU on the engine.
        """
        if self.mode != "generating" or self.live is None:
            return
        calls, now = self.live.metrics.target_calls, time.monotonic()
        if calls == self._last_calls and now - self._last_tick < IDLE_REFRESH_S:
            return
        self._last_calls, self._last_tick = calls, now
        self._render_live()
        status = self.query_one(StatusBar)
        status.sample(self.live.metrics)
        self.refresh_status()

    def _render_live(self) -> None:
        assert self.live is not None
        preview = self.live.preview()
        if preview is self._shown:
            return  # nothing new arrived since the last tick
        self._shown = preview
        rows = diff_rows(self.live.original, preview.hunks)
        self.diff.set_rows(rows, frontier=row_of_new_line(rows, preview.frontier))
        self.diff.follow()

    # ------------------------------------------------------------------ rewriting
    def _region(self, text: str) -> tuple[int, int] | None:
        if not self.region_mode:
            return None
        sel = self.editor.selection
        (r0, _), (r1, c1) = sorted((sel.start, sel.end))
        end = r1 + 1 if (c1 > 0 or r1 == r0) else r1
        return enclosing_node_range(text, self.lang, r0, end)

    def _scope_label(self) -> None:
        """What the next rewrite covers: the file or a region, plus context files."""
        ctx = f" +{len(self.context)} ctx" if self.context else ""
        region = self._region(self.editor.text)
        scope = "file" if region is None else f"L{region[0] + 1}-{region[1]}"
        self.query_one("#scope", Label).update(scope + ctx)

    @on(TextArea.SelectionChanged, "#editor")
    def _selection_moved(self) -> None:
        if self.region_mode and self.mode == "edit":  # parse at most 5 times a second
            if self._scope_timer is not None:
                self._scope_timer.stop()
            self._scope_timer = self.set_timer(0.2, self._scope_label)

    @on(Input.Changed, "#instruction")
    def _maybe_warm(self) -> None:
        """Warm the model up on this version of the file while the instruction is typed."""
        session: ModelSession | None = getattr(self.app, "session", None)
        if session is None or self.mode != "edit":
            return
        text = self.editor.text
        key = (id(session), self.shown_path, hash(text), tuple(self.context))
        if key == self._warm_key or not text.strip():
            return
        self._warm_key = key
        if self._warm_stop is not None:
            self._warm_stop.set()
        self._warm_stop = threading.Event()
        self._run_warm(session, text, tuple(self.context), self._warm_stop)

    @work(thread=True, group="warm", exit_on_error=False)
    def _run_warm(self, session: ModelSession, text: str, context: tuple, stop) -> None:
        try:
            self.warm_result = warm(
                session, text, path=self.shown_path, context=context, interrupt=stop
            )
        except (UserError, ValueError) as exc:  # the rewrite will say it too
            log.info("warm-up skipped: %s", exc)
        except Exception:  # a warm-up only ever saves time
            log.exception("warm-up failed")

    @on(Input.Submitted, "#instruction")
    def _submitted(self, event: Input.Submitted) -> None:
        instruction = event.value.strip()
        if not instruction:
            self.notify("Type an instruction first.", severity="warning")
            return
        self.start_rewrite(instruction)

    def start_rewrite(self, instruction: str, region: tuple[int, int] | None = None) -> bool:
        """Start a rewrite of the editor's text; False (with a message) if it cannot start."""
        if self.mode == "generating":
            self.notify("A rewrite is running; Esc cancels it.", severity="warning")
            return False
        session: ModelSession | None = getattr(self.app, "session", None)
        if session is None:
            self.app.no_model_help()  # type: ignore[attr-defined]
            return False
        text = self.editor.text
        if region is None:
            region = self._region(text)
        opts: RewriteOptions = self.app.settings.options(  # type: ignore[attr-defined]
            instruction, context=tuple(self.context), region=region
        )
        self.last_instruction, self.last_region = instruction, region
        self.review = None
        self.live = LiveRun(text, region)
        self.set_banner("")
        self.diff.set_rows(diff_rows(text, []), frontier=0)
        self.mode = "generating"
        if self._warm_stop is not None:  # the rewrite waits at most one chunk of it
            self._warm_stop.set()
        self._run_rewrite(session, text, opts, self.live)
        return True

    @work(thread=True, group="rewrite", exit_on_error=False)
    def _run_rewrite(
        self, session: ModelSession, text: str, opts: RewriteOptions, live: LiveRun
    ) -> None:
        """Thread worker: run the engine; talk to the UI only through messages."""
        try:
            res = rewrite(
                session,
                text,
                opts,
                path=self.shown_path,
                on_text=live.append,
                cancel=live.cancel,
                metrics=live.metrics,
            )
        except (UserError, ValueError) as exc:
            self.post_message(RewriteFailed(str(exc)))
            return
        except Exception as exc:  # a bug must not take the user's work down with it
            log.exception("rewrite failed")
            self.post_message(RewriteFailed(f"internal error: {exc!r} (see the log)"))
            return
        self.post_message(RewriteFinished(res))

    def on_rewrite_failed(self, message: RewriteFailed) -> None:
        self.mode = "edit"
        hint = (
            " In the app, F3 limits the rewrite to a region." if "region" in message.error else ""
        )
        self.notify(message.error + hint, title="Rewrite failed", severity="error", timeout=10)
        self._maybe_rerun()

    def on_rewrite_finished(self, message: RewriteFinished) -> None:
        self.show_result(message.result)
        self._maybe_rerun()

    def _maybe_rerun(self) -> None:
        if self.rerun_pending:
            self.rerun_pending = False
            self.action_rerun()

    # ------------------------------------------------------------------ actions
    def action_cancel(self) -> None:
        if self.mode == "generating" and self.live is not None:
            self.live.cancel.set()
            self.query_one(StatusBar).set_text("st-state", "cancelling")
        elif self.mode in ("review", "stopped"):
            if self.mode == "review":
                self.notify("Review discarded; the file is untouched.")
            self.review = None
            self.mode = "edit"
            self._scope_label()
            self.set_banner(self.conflict_note() if self.conflict else "")
            self.editor.focus()

    def action_toggle_region(self) -> None:
        self.region_mode = not self.region_mode
        self._scope_label()
        where = "the enclosing function/class (or selection)" if self.region_mode else "the file"
        self.notify(f"Rewrites now cover {where}.")

    def action_toggle_speculation(self) -> None:
        app = self.app
        app.settings = app.settings.with_(speculation=not app.settings.speculation)  # type: ignore[attr-defined]
        state = "on" if app.settings.speculation else "off"  # type: ignore[attr-defined]
        self.notify(f"Speculation {state}; ctrl+r re-runs the last instruction to compare tok/s.")
        self.refresh_status()

    def action_add_context(self) -> None:
        from .picker import FilePickerScreen

        def add(src: SourceFile | None) -> None:
            if src is not None and src.path is not None:
                self.context.append((display_path(src.path), src.text))
                self.notify(f"Added context file {display_path(src.path)} (a draft source).")
                self._scope_label()

        self.app.push_screen(FilePickerScreen("Add a context file (Esc to go back)"), add)

    def action_clear_context(self) -> None:
        self.context.clear()
        self._scope_label()
        self.notify("Context files cleared.")

    def action_open(self) -> None:
        self.app.action_open()  # type: ignore[attr-defined]
