"""Per-user settings of the ``notes`` command-line tool.

The settings live in a JSON file (``$XDG_CONFIG_HOME/notes/config.json``); anything the
file leaves out falls back to ``DEFAULTS``. ``notes config set KEY VALUE`` rewrites the
file through ``save_settings``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

DEFAULTS: dict[str, Any] = {
    "editor": "vi",
    "notes_dir": "~/notes",
    "date_format": "%Y-%m-%d",
    "pager": True,
    "max_title": 60,
}

_TYPES = {key: type(value) for key, value in DEFAULTS.items()}


class ConfigError(ValueError):
    pass


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "notes" / "config.json"


def _check(values: dict[str, Any]) -> None:
    for key, value in values.items():
        if key not in _TYPES:
            raise ConfigError(f"unknown setting {key!r}")
        if not isinstance(value, _TYPES[key]):
            raise ConfigError(f"{key} must be {_TYPES[key].__name__}, got {value!r}")


def load_settings(path: Path | None = None) -> dict[str, Any]:
    """The settings: ``DEFAULTS`` updated with the file's values."""
    p = path or config_path()
    if not p.exists():
        return dict(DEFAULTS)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ConfigError(f"{p}: {e}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a JSON object")
    _check(data)
    return {**DEFAULTS, **data}


def save_settings(values: dict[str, Any], path: Path | None = None) -> Path:
    """Write the values that differ from ``DEFAULTS`` to the file (creating its folder)."""
    _check(values)
    p = path or config_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    changed = {k: v for k, v in values.items() if DEFAULTS.get(k) != v}
    p.write_text(json.dumps(changed, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return p


def parse_value(key: str, text: str) -> Any:
    """``text`` from the command line as the type ``key`` holds."""
    kind = _TYPES.get(key)
    if kind is None:
        raise ConfigError(f"unknown setting {key!r}")
    if kind is bool:
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{key} must be true or false, got {text!r}")
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"{key} must be a whole number, got {text!r}") from None
    return text


def set_value(key: str, text: str, path: Path | None = None) -> dict[str, Any]:
    settings = load_settings(path) or dict(DEFAULTS)
    settings[key] = parse_value(key, text)
    save_settings(settings, path)
    return settings


def notes_dir(settings: dict[str, Any]) -> Path:
    return Path(os.path.expanduser(settings["notes_dir"]))
