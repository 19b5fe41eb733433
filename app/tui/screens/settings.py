"""Settings: the model and the draft model (picked from the catalog, pulled with a
progress bar), the backend and GPU layers, speculation, k, temperature, exact mode, the
edit mode and the theme.

Contract: :class:`SettingsScreen` dismisses with a new ``TuiSettings`` (Apply) or None
(Esc / Cancel); the app saves applied settings to the config file. Each switch says
"on" or "off" beside it. Invalid values (k, temperature, GPU layers) are reported inline
and keep the screen open. "Pull" asks the app to download the selected catalog model in
a thread worker; the app updates the ``#pull-bar`` progress bar here through
:meth:`show_pull`.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, ProgressBar, Select, Switch

from ....models.catalog import CATALOG, is_installed
from ....models.llama_build import parse_gpu_layers
from ...options import BACKENDS, EDIT_MODES
from ..config import TuiSettings
from .editor_state import spec_app


def _model_options(current: str | None) -> list[tuple[str, str]]:
    opts = []
    for name, entry in CATALOG.items():
        mark = "installed" if is_installed(name) else "not pulled"
        opts.append((f"{name}  {entry.size_bytes / 1e6:,.0f} MB  ({mark})", name))
    if current and current not in CATALOG:
        opts.append((f"{current}  (file)", current))
    return opts


def _switch(name: str, value: bool) -> ComposeResult:
    """A switch with its state in words beside it."""
    with Horizontal(classes="switch-row"):
        yield Switch(value=value, id=name)
        yield Label(_on_off(value), id=f"{name}-state", classes="switch-state")


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def _draft_options(current: str | None) -> list[tuple[str, str]]:
    return [("none: prompt lookup only", NO_DRAFT), *_model_options(current)]


NO_DRAFT = "-"


class SettingsScreen(ModalScreen[TuiSettings | None]):
    """See the module docstring."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, settings: TuiSettings) -> None:
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        s = self.settings
        themes = sorted(self.app.available_themes)
        with VerticalScroll(id="settings"):
            yield Label("[b]Settings[/b]  [dim]saved to the config file on Apply[/]")
            with Grid(id="settings-grid"):
                yield Label("Model")
                yield Select(
                    _model_options(s.model),
                    value=s.model,
                    allow_blank=False,
                    id="model",
                    classes="wide",
                )
                yield Label("Draft model")
                yield Select(
                    _draft_options(s.draft_model),
                    value=s.draft_model or NO_DRAFT,
                    allow_blank=False,
                    id="draft-model",
                    classes="wide",
                )
                yield Label("Backend")
                yield Select(
                    [(b, b) for b in BACKENDS], value=s.backend, allow_blank=False, id="backend"
                )
                yield Label("GPU layers")
                yield Input(str(s.gpu_layers), placeholder="N, all or auto", id="gpu-layers")
                yield Label("Speculation")
                yield from _switch("speculation", s.speculation)
                yield Label("Exact mode")
                yield from _switch("exact", s.exact)
                yield Label("k (draft)")
                yield Input("" if s.k is None else str(s.k), placeholder="auto", id="k")
                yield Label("Temperature")
                yield Input(f"{s.temperature:g}", placeholder="0 = greedy", id="temperature")
                yield Label("Edit mode")
                yield Select(
                    [(m, m) for m in EDIT_MODES],
                    value=s.edit,
                    allow_blank=False,
                    id="edit",
                )
                yield Label("Theme")
                yield Select(
                    [(t, t) for t in themes],
                    value=s.theme if s.theme in themes else self.app.theme,
                    allow_blank=False,
                    id="theme",
                )
            yield Label("", id="pull-label")
            yield ProgressBar(total=100, show_eta=False, id="pull-bar")
            yield Label("", id="settings-error")
            with Horizontal(id="settings-buttons"):
                yield Button("Pull model", id="pull")
                yield Button("Apply", variant="primary", id="apply")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self._update_pull_button()
        state = getattr(self.app, "pull_state", None)
        if state:
            self.show_pull(*state)

    def _selected_model(self) -> str:
        value = self.query_one("#model", Select).value
        return str(value) if value is not Select.BLANK else self.settings.model

    def _selected_draft(self) -> str | None:
        value = self.query_one("#draft-model", Select).value
        return None if value in (Select.BLANK, NO_DRAFT) else str(value)

    def _to_pull(self) -> str | None:
        """The selected model, else the selected draft model, that still needs a pull."""
        for name in (self._selected_model(), self._selected_draft()):
            if name in CATALOG and not is_installed(name):
                return name
        return None

    def _update_pull_button(self) -> None:
        name = self._to_pull()
        button = self.query_one("#pull", Button)
        button.disabled = name is None
        button.label = f"Pull {name}" if name else "Pull model"

    @on(Select.Changed)
    def _model_changed(self) -> None:
        self._update_pull_button()

    @on(Switch.Changed)
    def _switched(self, event: Switch.Changed) -> None:
        self.query_one(f"#{event.switch.id}-state", Label).update(_on_off(event.value))

    def show_pull(self, label: str, done: int, total: int) -> None:
        """Progress of a pull (called by the app on the UI thread)."""
        self.query_one("#pull-label", Label).update(label)
        bar = self.query_one("#pull-bar", ProgressBar)
        bar.add_class("-pulling")
        bar.update(total=max(total, 1), progress=done)

    def pull_finished(self) -> None:
        """Refresh the installed marks after a pull (called by the app)."""
        model, draft = self._selected_model(), self._selected_draft()
        select = self.query_one("#model", Select)
        select.set_options(_model_options(self.settings.model))
        select.value = model
        select = self.query_one("#draft-model", Select)
        select.set_options(_draft_options(self.settings.draft_model))
        select.value = draft or NO_DRAFT
        self._update_pull_button()

    @on(Button.Pressed, "#pull")
    def _pull(self) -> None:
        name = self._to_pull()
        if name is None:
            return
        self.query_one("#pull", Button).disabled = True
        spec_app(self).pull_model(name)

    @on(Button.Pressed, "#apply")
    def _apply(self) -> None:
        error = self.query_one("#settings-error", Label)
        k_text = self.query_one("#k", Input).value.strip()
        t_text = self.query_one("#temperature", Input).value.strip() or "0"
        try:
            k = None if k_text in ("", "auto") else int(k_text)
            if k is not None and k < 0:
                raise ValueError
        except ValueError:
            error.update("k must be a whole number >= 0, or empty for auto")
            return
        try:
            temperature = float(t_text)
            if not 0.0 <= temperature <= 5.0:
                raise ValueError
        except ValueError:
            error.update("temperature must be a number from 0 to 5")
            return
        try:
            gpu_layers = parse_gpu_layers(self.query_one("#gpu-layers", Input).value or "auto")
        except ValueError:
            error.update("GPU layers must be a number of layers >= 0, all or auto")
            return
        self.dismiss(
            self.settings.with_(
                model=self._selected_model(),
                draft_model=self._selected_draft(),
                backend=str(self.query_one("#backend", Select).value),
                gpu_layers=gpu_layers,
                speculation=self.query_one("#speculation", Switch).value,
                k=k,
                temperature=temperature,
                exact=self.query_one("#exact", Switch).value,
                edit=str(self.query_one("#edit", Select).value),
                theme=str(self.query_one("#theme", Select).value),
            )
        )

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
