"""The terminal app's settings: what the user chose, the config file that keeps it, the history.

Contract:
  * :class:`TuiSettings` holds every knob the settings screen edits and builds the same option
    objects the CLI does (:meth:`~TuiSettings.options`: ``RewriteOptions``;
    :meth:`~TuiSettings.load_config`: ``LoadConfig``); the defaults stay in ``app.options``.
    :data:`SAVED` names the fields the file keeps (``to_saved``; ``from_saved`` checks each value
    and returns the problems it skipped).
  * :func:`config_path` is ``$XDG_CONFIG_HOME/specedit/config.toml`` (else the platform's).
  * :func:`load_settings`: the file, then ``$SPECEDIT_MODEL``, then the command line's flags (a
    ``LoadConfig`` whose None fields were not given). A missing file is the defaults; a bad file
    or value is one line in the returned problems and never stops the app.
  * :func:`save_settings` writes what differs from the defaults, atomically and private (0600,
    ``app.store.state``), and returns the path, or raises ``OSError``.
  * :func:`load_history`, :func:`append_history`: instructions, ``tui-history.txt`` (0600).
"""

from __future__ import annotations

import json
import logging
import os
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import platformdirs

from ...engine.sampling import SamplingParams
from ...models.llama_build import parse_gpu_layers
from ..options import BACKENDS, EDIT_MODES, LoadConfig, RewriteOptions, env_model
from ..store.state import private_dir, state_dir, state_subdir, write_private

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
        context_files: tuple[tuple[str, str], ...] = (),
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
            context_files=context_files,
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


log = logging.getLogger(__name__)

HISTORY_MAX = 200


def config_path() -> Path:
    """Where the settings live (see the module docstring)."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else platformdirs.user_config_path()
    return base / "specedit" / "config.toml"


def read_config(path: Path | None = None) -> tuple[dict[str, Any], list[str]]:
    """The ``[tui]`` table of the config file (or its top level) and any problem reading it."""
    path = path or config_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {}, [f"{path}: {exc}; using the defaults"]
    table = data.get("tui", data)
    if not isinstance(table, dict):
        return {}, [f"{path}: [tui] is not a table; using the defaults"]
    return table, []


def load_settings(
    flags: LoadConfig | None = None, path: Path | None = None
) -> tuple[TuiSettings, list[str]]:
    """Settings from the file, the environment and the flags; plus the problems met."""
    path = path or config_path()
    data, problems = read_config(path)
    settings, bad = TuiSettings.from_saved(data)
    problems += [f"{path}: {p}" for p in bad]
    model = env_model()
    if model:
        settings = settings.with_(model=model)
    if flags is not None:
        settings = TuiSettings.from_load_config(flags, settings)
    return settings, problems


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))  # a TOML basic string: JSON's escapes are TOML's


def save_settings(settings: TuiSettings, path: Path | None = None) -> Path:
    """Save the settings that differ from the defaults (see the module docstring)."""
    path = path or config_path()
    lines = [
        "# specedit terminal app settings: written by the app (F2), safe to edit by hand.",
        "# $SPECEDIT_MODEL and command-line flags take precedence over these.",
        "[tui]",
    ]
    lines += [f"{key} = {_toml_value(v)}" for key, v in settings.to_saved().items()]
    private_dir(path.parent, tighten=False)  # a folder the user made is left as it is
    return write_private(path, ("\n".join(lines) + "\n").encode())


def history_path() -> Path:
    return state_dir() / "tui-history.txt"


def load_history() -> list[str]:
    """Earlier instructions, oldest first (empty when there is no readable history)."""
    try:
        text = history_path().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    items = []
    for line in text.splitlines():  # one JSON string a line; anything else is skipped
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, str) and item.strip():
            items.append(item)
    return items[-HISTORY_MAX:]


def append_history(history: list[str], instruction: str) -> list[str]:
    """``history`` with ``instruction`` last (moved there if it was already in it); the
    file is rewritten best effort (a failure is logged: history is a convenience)."""
    history = [h for h in history if h != instruction] + [instruction]
    history = history[-HISTORY_MAX:]
    try:
        state_subdir()
        write_private(history_path(), "".join(json.dumps(h) + "\n" for h in history).encode())
    except OSError as exc:
        log.warning("could not save the instruction history: %s", exc)
    return history
