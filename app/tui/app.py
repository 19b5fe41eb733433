"""The thin Textual ``App``: owns the settings and the loaded model, routes screens.

Contract: :class:`SpecEditApp` opens ``path`` in an :class:`~.screens.editor.EditorScreen`
(or a file picker when there is none or it cannot be read) on its first frame, and loads
the model in a thread worker meanwhile (or uses a preloaded ``LoadedModel``, which it
then never closes): the interface answers keys from the first frame, the status bar
shows the load (model, backend, device, stage, seconds; :attr:`load`), and an
instruction given meanwhile is queued by the editor and run when the model is ready.
``loader`` replaces ``app.runtime.loaded_model.load_model`` (tests). It pulls catalog models in a
thread worker with progress shown in the settings screen, and shows the help and
settings screens; applied settings are saved to the config file (``app.tui.config``)
and a change of model, backend or offload reloads the model. Failures become
notifications; the app never exits on one.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from textual import work
from textual.app import App
from textual.binding import Binding

from ...engine.backend import UserError
from ...engine.metrics import Metrics
from ...models.catalog import CATALOG, is_installed
from ...models.wheels import pull
from ..options import LoadConfig
from ..runtime.loaded_model import LoadedModel, load_model, resolve_backend
from ..store.files import FileError, SourceFile, read_source
from .config import DEFAULT_THEME, TuiSettings, save_settings
from .messages import ModelFailed, ModelLoaded, ModelStage, PullFinished, PullProgress
from .screens.confirm import ConfirmScreen
from .screens.editor import RUNNING, EditorScreen
from .screens.help import HelpScreen
from .screens.picker import FilePickerScreen
from .screens.settings import SettingsScreen
from .widgets.status import format_where

log = logging.getLogger(__name__)

Loader = Callable[..., LoadedModel]


@dataclass
class Loading:
    """A model load in progress, as the status bar shows it."""

    model: str
    detail: str = ""
    """The backend, then ``"<backend> on <device>"`` once the weights are in."""
    stage: str = "start"
    started: float = field(default_factory=time.monotonic)
    number: int = 0
    """Which load this is: messages of an older load that ran on are ignored."""

    def view(self) -> tuple[str, float]:
        """(stage, seconds so far) for ``StatusBar.show_loading``."""
        return self.stage, time.monotonic() - self.started


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
        loaded: LoadedModel | None = None,
        settings: TuiSettings | None = None,
        load_on_start: bool = True,
        watch: bool = True,
        loader: Loader | None = None,
        history: list[str] | None = None,
        problems: list[str] | None = None,
        save_config: bool = True,
    ) -> None:
        super().__init__()
        self.start_path = path
        self.loaded = loaded
        if settings is None:
            settings = TuiSettings(model=loaded.model_name) if loaded else TuiSettings()
        self.settings = settings
        self.history: list[str] = list(history or [])
        self.problems = list(problems or [])
        self._save_config = save_config
        self._loader = loader or load_model
        self._preloaded = loaded
        self._load_on_start = load_on_start and loaded is None
        self._watch = watch
        self.load: Loading | None = None
        """The model load in progress, if any."""
        self._loads = 0
        self.pull_state: tuple[str, int, int] | None = None

    @property
    def model_state(self) -> str:
        """loading | ready | none."""
        if self.load is not None:
            return "loading"
        return "ready" if self.loaded is not None else "none"

    def model_label(self, metrics: Metrics | None = None) -> str:
        """The model and where it runs: the last run's backend, device and verifier when
        there was one, else the loaded target's."""
        if self.load is not None:
            where = f" · {self.load.detail}" if self.load.detail else ""
            return f"{self.load.model}{where}"
        loaded = self.loaded
        if loaded is None:
            return f"no model ({self.settings.model})"
        if metrics is not None and metrics.backend:
            where = format_where(metrics.backend, metrics.device, metrics.verifier)
        else:
            where = format_where(loaded.target.backend, loaded.target.device_name)
        return f"{loaded.model_name} · {where}"

    def on_mount(self) -> None:
        theme = self.settings.theme
        if theme not in self.available_themes:
            self.problems.append(f"unknown theme {theme!r}; using {DEFAULT_THEME}")
            theme = DEFAULT_THEME
        self.theme = theme
        if self.start_path is not None:
            self.open_path(self.start_path)
        else:
            self.action_open()
        for problem in self.problems:
            self.notify(problem, title="Settings", severity="warning", timeout=10)
        if self._load_on_start:
            self.start_load(self.settings.model)

    def on_unmount(self) -> None:
        for screen in self.screen_stack:
            live = getattr(screen, "live", None)
            if live is not None:
                live.cancel.set()
        self._close(self.loaded)

    def _close(self, loaded: LoadedModel | None) -> None:
        """Free a model this app loaded (never the one it was given)."""
        if loaded is None or loaded is self._preloaded:
            return
        if loaded.lock.acquire(timeout=5):  # never free a model a rewrite is using
            try:
                loaded.target.close()
            finally:
                loaded.lock.release()

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
        if editor is not None and editor.mode in RUNNING:
            self.notify("A run is going on; Esc cancels it first.", severity="warning")
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
            if new.theme != old.theme and new.theme in self.available_themes:
                self.theme = new.theme
            self._save(new)
            if new.loads_differently(old):
                self.start_load(new.model)
            self._refresh_status()

        self.push_screen(SettingsScreen(self.settings), apply)

    def _save(self, settings: TuiSettings) -> None:
        if not self._save_config:
            return
        try:
            path = save_settings(settings)
        except OSError as exc:
            self.notify(f"Settings not saved: {exc}", severity="warning", timeout=10)
            return
        self.notify(f"Settings saved to {path}.")

    def _refresh_status(self) -> None:
        editor = self.editor_screen()
        if editor is not None and editor.is_mounted:
            editor.refresh_status()

    # ------------------------------------------------------------------ model
    def no_model_help(self) -> None:
        """Explain why no rewrite can start, and offer the fix."""
        name = self.settings.model
        if name in CATALOG and not is_installed(name):
            self.offer_pull(name)
        else:
            self.notify("No model is loaded: F2 opens the settings to pick one.", severity="error")

    def start_load(self, name: str) -> None:
        """Load ``name`` in a thread worker; the status bar follows it from now on."""
        self._loads += 1
        self.load = Loading(name, number=self._loads)
        self._refresh_status()
        self._load_worker(self.settings.load_config(name), self._loads)

    @work(thread=True, group="model", exclusive=True, exit_on_error=False)
    def _load_worker(self, cfg: LoadConfig, number: int) -> None:
        """Thread worker: load ``cfg``; talk to the UI only through messages."""
        name = cfg.model
        for needed in (name, cfg.draft_model):
            if needed in CATALOG and not is_installed(needed):
                self.post_message(ModelFailed(needed, f"{needed} is not pulled yet", True, number))
                return

        def stage(what: str, detail: str) -> None:
            self.post_message(ModelStage(name, what, detail, number))

        try:
            stage("start", resolve_backend(cfg))
            loaded = self._loader(cfg, on_stage=stage)
        except (UserError, OSError, ValueError, RuntimeError) as exc:
            self.post_message(ModelFailed(name, str(exc), number=number))
            return
        self.post_message(ModelLoaded(loaded, number))

    def _current(self, number: int) -> bool:
        return self.load is not None and self.load.number == number

    def on_model_stage(self, message: ModelStage) -> None:
        if self._current(message.number):
            self.load.stage, self.load.detail = message.stage, message.detail  # type: ignore[union-attr]
            self._refresh_status()

    def on_model_loaded(self, message: ModelLoaded) -> None:
        if not self._current(message.number):  # a newer load was asked for meanwhile
            self._close(message.loaded)
            return
        old, self.loaded = self.loaded, message.loaded
        self._close(old)
        self.load = None
        self.notify(f"Model {message.loaded.model_name} ready.")
        editor = self.editor_screen()
        if editor is not None and editor.is_mounted:
            editor.model_ready()

    def on_model_failed(self, message: ModelFailed) -> None:
        if not self._current(message.number):
            return
        self.load = None
        editor = self.editor_screen()
        if editor is not None and editor.is_mounted:
            editor.model_failed()
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
        if message.model == self.settings.model and self.loaded is None:
            self.start_load(message.model)
