"""The thin Textual ``App``: owns the settings and the model session, routes screens.

Contract: :class:`SpecEditApp` opens ``path`` in an :class:`~.screens.editor.EditorScreen`
(or a file picker when there is none or it cannot be read), loads the model in a thread
worker (or uses a preloaded ``ModelSession``, which it then never closes), pulls catalog
models in a thread worker with progress shown in the settings screen, and shows the help
and settings screens. Failures become notifications; the app never exits on one.
"""

from __future__ import annotations

import logging
import os
import time

from textual import work
from textual.app import App
from textual.binding import Binding

from ...engine.backend import UserError
from ...models.catalog import CATALOG, is_installed, pull
from ..files import FileError, SourceFile, read_source
from ..session import ModelSession, load_session
from .messages import ModelFailed, ModelLoaded, PullFinished, PullProgress
from .screens.confirm import ConfirmScreen
from .screens.editor import EditorScreen
from .screens.help import HelpScreen
from .screens.picker import FilePickerScreen
from .screens.settings import SettingsScreen
from .settings import TuiSettings

log = logging.getLogger(__name__)


class SpecEditApp(App[int]):
    """See the module docstring."""

    CSS_PATH = "specedit.tcss"
    TITLE = "specedit"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("f2", "settings", "Settings"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        session: ModelSession | None = None,
        settings: TuiSettings | None = None,
        load_model: bool = True,
        watch: bool = True,
    ) -> None:
        super().__init__()
        self.start_path = path
        self.session = session
        if settings is None:
            settings = TuiSettings(model=session.model_name) if session else TuiSettings()
        self.settings = settings
        self._owns_session = False
        self._load_on_start = load_model and session is None
        self._watch = watch
        self.model_state = "ready" if session else "none"
        self.pull_state: tuple[str, int, int] | None = None

    @property
    def model_label(self) -> str:
        if self.model_state == "loading":
            return f"loading {self.settings.model}…"
        if self.session is not None:
            return self.session.model_name
        return f"no model ({self.settings.model})"

    def on_mount(self) -> None:
        if self.start_path is not None:
            self.open_path(self.start_path)
        else:
            self.action_open()
        if self._load_on_start:
            self.load_model(self.settings.model)

    def on_unmount(self) -> None:
        for screen in self.screen_stack:
            live = getattr(screen, "live", None)
            if live is not None:
                live.cancel.set()
        self._close(self.session)

    def _close(self, session: ModelSession | None) -> None:
        if session is None or not self._owns_session:
            return
        if session.lock.acquire(timeout=5):  # never free a model a rewrite is using
            try:
                session.target.close()
            finally:
                session.lock.release()

    # ------------------------------------------------------------------ files
    def editor_screen(self) -> EditorScreen | None:
        return next((s for s in self.screen_stack if isinstance(s, EditorScreen)), None)

    def open_path(self, path: str | os.PathLike[str]) -> bool:
        if os.path.isdir(path):  # `specedit src/`: pick a file in it
            self.action_open(root=path)
            return False
        try:
            src = read_source(path)
        except FileError as exc:
            self.notify(str(exc), title="Cannot open", severity="error", timeout=10)
            if self.editor_screen() is None:
                self.action_open()
            return False
        self.open_source(src)
        return True

    def open_source(self, src: SourceFile) -> None:
        screen = EditorScreen(src, watch=self._watch)
        if isinstance(self.screen, EditorScreen):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def action_open(self, root: str | os.PathLike[str] = ".") -> None:
        editor = self.editor_screen()
        if editor is not None and editor.mode == "generating":
            self.notify("A rewrite is running; Esc cancels it first.", severity="warning")
            return

        def chosen(src: SourceFile | None) -> None:
            if src is not None:
                self.open_source(src)
            elif self.editor_screen() is None:
                self.exit(0)

        self.push_screen(FilePickerScreen(root=root), chosen)

    # ------------------------------------------------------------------ screens
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_settings(self) -> None:
        if isinstance(self.screen, SettingsScreen):
            return

        def apply(new: TuiSettings | None) -> None:
            if new is None:
                return
            old, self.settings = self.settings, new
            if (new.model, new.draft_model) != (old.model, old.draft_model):
                self.load_model(new.model)
            self._refresh_status()

        self.push_screen(SettingsScreen(self.settings), apply)

    def _refresh_status(self) -> None:
        editor = self.editor_screen()
        if editor is not None and editor.is_mounted:
            editor.refresh_status()

    # ------------------------------------------------------------------ model
    def no_model_help(self) -> None:
        """Explain why no rewrite can start, and offer the fix."""
        name = self.settings.model
        if self.model_state == "loading":
            self.notify(f"{name} is still loading; try again in a moment.")
        elif name in CATALOG and not is_installed(name):
            self.offer_pull(name)
        else:
            self.notify("No model is loaded: F2 opens the settings to pick one.", severity="error")

    @work(thread=True, group="model", exit_on_error=False)
    def load_model(self, name: str) -> None:
        """Thread worker: load ``name`` (catalog name or GGUF path)."""
        self.call_from_thread(self._set_model_state, "loading")
        for needed in (name, self.settings.draft_model):
            if needed in CATALOG and not is_installed(needed):
                self.post_message(ModelFailed(needed, f"{needed} is not pulled yet", True))
                return
        try:
            session = load_session(self.settings.load_config(name))
        except (UserError, OSError, ValueError, RuntimeError) as exc:
            self.post_message(ModelFailed(name, str(exc)))
            return
        self.post_message(ModelLoaded(session))

    def _set_model_state(self, state: str) -> None:
        self.model_state = state
        self._refresh_status()

    def on_model_loaded(self, message: ModelLoaded) -> None:
        old, self.session = self.session, message.session
        self._close(old)
        self._owns_session = True
        self.model_state = "ready"
        self._refresh_status()
        self.notify(f"Model {message.session.model_name} ready.")

    def on_model_failed(self, message: ModelFailed) -> None:
        self.model_state = "none" if self.session is None else "ready"
        self._refresh_status()
        if message.missing:
            self.offer_pull(message.model)
        else:
            self.notify(
                f"{message.error}. F2 picks another model.",
                title="Model load failed",
                severity="error",
                timeout=15,
            )

    def offer_pull(self, name: str) -> None:
        size = CATALOG[name].size_bytes / 1e6

        def answer(yes: bool | None) -> None:
            if yes:
                self.action_settings()
                self.pull_model(name)

        self.push_screen(
            ConfirmScreen(f"Model {name} ({size:,.0f} MB) is not installed.\n\nPull it now?"),
            answer,
        )

    @work(thread=True, group="pull", exclusive=True, exit_on_error=False)
    def pull_model(self, name: str) -> None:
        """Thread worker: download a catalog model, posting throttled progress."""
        last = [0.0]

        def progress(label: str, done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.1 or done >= total:
                last[0] = now
                self.post_message(PullProgress(label, done, total))

        try:
            pull(name, progress)
        except (UserError, OSError) as exc:
            self.post_message(PullFinished(name, str(exc)))
            return
        self.post_message(PullFinished(name))

    def on_pull_progress(self, message: PullProgress) -> None:
        self.pull_state = (message.label, message.done, message.total)
        for screen in self.screen_stack:
            if isinstance(screen, SettingsScreen):
                screen.show_pull(*self.pull_state)

    def on_pull_finished(self, message: PullFinished) -> None:
        self.pull_state = None
        for screen in self.screen_stack:
            if isinstance(screen, SettingsScreen):
                screen.pull_finished()
        if message.error:
            self.notify(message.error, title="Pull failed", severity="error", timeout=15)
            return
        self.notify(f"Pulled {message.model}.")
        if message.model == self.settings.model and self.session is None:
            self.load_model(message.model)
