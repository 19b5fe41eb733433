"""The terminal app's config file and environment: settings that outlive a session.

Contract:
  * :func:`config_path` is ``$XDG_CONFIG_HOME/specedit/config.toml`` (the platform's user
    config dir when ``XDG_CONFIG_HOME`` is unset).
  * :func:`load_settings` reads it into ``TuiSettings`` (``TuiSettings.from_saved`` checks
    each value), then applies ``$SPECEDIT_MODEL``, then the command line's flags (a
    ``LoadConfig`` whose None fields were not given, ``TuiSettings.from_load_config``):
    flags beat the environment, which beats the file.
    A missing file is the defaults; an unreadable or malformed one, or a bad value in it,
    is one line in the returned problems and never stops the app.
  * :func:`save_settings` writes the settings that differ from the defaults, atomically,
    in a file only the user may read (0600, its folder 0700 when created here:
    ``app.state``'s private writes); it returns the path, or raises ``OSError``.
  * The history of instructions (Up in the instruction line) lives in the private state
    dir, ``tui-history.txt`` (0600): :func:`load_history`, :func:`append_history`.
"""

from __future__ import annotations

import json
import logging
import os
import tomllib
from pathlib import Path
from typing import Any

import platformdirs

from ..options import LoadConfig
from ..state import private_dir, state_dir, state_subdir, write_private
from .settings import TuiSettings

log = logging.getLogger(__name__)

MODEL_ENV = "SPECEDIT_MODEL"
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
    env_model = os.environ.get(MODEL_ENV, "").strip()
    if env_model:
        settings = settings.with_(model=env_model)
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
