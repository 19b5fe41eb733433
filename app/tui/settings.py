"""The terminal app's settings: one frozen dataclass, turned into the shared option objects.

Contract: :class:`TuiSettings` holds every knob the settings screen edits (model, draft
model, backend, GPU layers, speculation, k, temperature, exact mode, edit mode, theme)
and builds the same option objects the CLI does: :meth:`TuiSettings.options` the
``RewriteOptions`` passed to ``app.rewrite.rewrite``, :meth:`TuiSettings.load_config` the
``LoadConfig`` passed to ``app.loaded_model.load_model``; the defaults stay in
``app.options``. :data:`SAVED` names the fields the config file keeps
(``app.tui.config``); :meth:`TuiSettings.to_saved` and :meth:`TuiSettings.from_saved`
convert, the latter checking each value and returning the problems it skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...engine.sampling import SamplingParams
from ...models.llama_build import parse_gpu_layers
from ..options import BACKENDS, EDIT_MODES, LoadConfig, RewriteOptions

DEFAULT_THEME = "textual-dark"


@dataclass(frozen=True)
class TuiSettings:
    """What the user chose in the settings screen (or the config file)."""

    model: str = LoadConfig.model
    """Catalog name or GGUF path of the target model."""
    draft_model: str | None = None
    """A small model (catalog name or GGUF path) loaded beside the target to propose
    drafts too; None drafts by prompt lookup only."""
    speculation: bool = True
    """Speculation on (``draft='auto'``: prompt lookup, plus the draft model when one is
    loaded) or plain decoding (``'none'``), for a live A/B of tokens/s."""
    k: int | None = None
    """Draft length; None lets the engine adapt it."""
    temperature: float = 0.0
    """0 is greedy decoding."""
    exact: bool = False
    """Verify in sub-blocks whose numerics equal 1-token decoding."""
    n_ctx: int = LoadConfig.n_ctx
    """Context length the model is loaded with."""
    backend: str = LoadConfig.backend
    """llama.cpp, torch or auto (``LoadConfig.backend``)."""
    gpu_layers: int | str = LoadConfig.gpu_layers
    """llama.cpp layers offloaded to a GPU: a number, all or auto."""
    device: str | None = LoadConfig.device
    """Torch device; None picks CUDA when present."""
    edit: str = "auto"
    """``RewriteOptions.edit``: ``auto``, ``blocks`` or ``whole`` (``app.options.EDIT_MODES``)."""
    theme: str = DEFAULT_THEME
    """The Textual theme of the app."""
    engine: str = LoadConfig.engine
    """``--engine openai:URL``: the model runs on that server (from the command line
    only; not kept in the config file)."""

    @classmethod
    def from_load_config(cls, cfg: LoadConfig, base: TuiSettings | None = None) -> TuiSettings:
        """``base`` (default: the defaults) loading what ``cfg`` (the command line's flags)
        sets: its fields that are None were not given and keep ``base``'s values."""
        given = {
            name: getattr(cfg, name)
            for name in (
                "model",
                "draft_model",
                "backend",
                "gpu_layers",
                "device",
                "n_ctx",
                "engine",
            )
            if getattr(cfg, name) is not None
        }
        return replace(base or cls(), **given)

    def load_config(self, model: str | None = None) -> LoadConfig:
        """How to load ``model`` (default: the chosen one) under these settings."""
        return LoadConfig(
            model=model or self.model,
            backend=self.backend,
            device=self.device,
            gpu_layers=self.gpu_layers,
            n_ctx=self.n_ctx,
            draft_model=self.draft_model,
            engine=self.engine,
        )

    def options(
        self,
        instruction: str,
        *,
        context: tuple[tuple[str, str], ...] = (),
        region: tuple[int, int] | None = None,
        feedback: tuple[str, str] | None = None,
    ) -> RewriteOptions:
        """The rewrite options for ``instruction`` under these settings."""
        return RewriteOptions(
            instruction=instruction,
            draft="auto" if self.speculation else "none",
            k=self.k,
            sampling=SamplingParams(temperature=self.temperature),
            exact=self.exact,
            context=context,
            region=region,
            feedback=feedback,
            edit=self.edit,
        )

    def loads_differently(self, other: TuiSettings) -> bool:
        """True when ``other`` needs the model loaded again."""
        return self.load_config() != other.load_config()

    def with_(self, **changes: object) -> TuiSettings:
        return replace(self, **changes)

    # ------------------------------------------------------------------ the config file
    def to_saved(self) -> dict[str, Any]:
        """The kept fields that differ from the defaults (a default is not pinned)."""
        default = TuiSettings()
        changed = {n: getattr(self, n) for n in SAVED if getattr(self, n) != getattr(default, n)}
        return {k: ("auto" if k == "k" else "none") if v is None else v for k, v in changed.items()}

    @classmethod
    def from_saved(cls, data: dict[str, Any], base: TuiSettings | None = None):
        """``base`` (default: the defaults) with the valid values of ``data``; returns
        ``(settings, problems)``, one line per value skipped."""
        base = base or cls()
        changes: dict[str, Any] = {}
        problems: list[str] = []
        for key, value in data.items():
            check = SAVED.get(key)
            if check is None:
                problems.append(f"unknown setting {key!r}")
                continue
            try:
                changes[key] = check(value)
            except (TypeError, ValueError):
                problems.append(f"{key} = {value!r} is not valid")
        return replace(base, **changes), problems


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(value)
    return value.strip()


def _draft(value: Any) -> str | None:
    return None if value in ("", "none") else _name(value)


def _k(value: Any) -> int | None:
    if value in ("auto", ""):
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(value)
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(value)
    return value


def _temperature(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 5:
        raise ValueError(value)
    return float(value)


def _choice(options: tuple[str, ...]):
    def check(value: Any) -> str:
        if value not in options:
            raise ValueError(value)
        return value

    return check


def _gpu_layers(value: Any) -> int | str:
    if isinstance(value, bool):
        raise TypeError(value)
    return parse_gpu_layers(value)


SAVED = {
    "model": _name,
    "draft_model": _draft,
    "backend": _choice(BACKENDS),
    "gpu_layers": _gpu_layers,
    "speculation": _bool,
    "k": _k,
    "temperature": _temperature,
    "exact": _bool,
    "edit": _choice(EDIT_MODES),
    "theme": _name,
}
"""The settings the config file keeps, each with the check its value must pass."""
