"""Per-project settings files (``.toolrc.json``) for the formatter CLI.

Settings are looked up from the current directory upwards; the nearest file
wins, and missing keys take the values of ``DEFAULTS``.
"""

import json
import os

FILE_NAME = ".toolrc.json"
DEFAULTS = {"line_length": 88, "indent": 4, "quote": "double", "exclude": []}


class SettingsError(ValueError):
    pass


def merge_defaults(data):
    unknown = sorted(set(data) - set(DEFAULTS))
    if unknown:
        raise SettingsError("unknown settings: " + ", ".join(unknown))
    merged = dict(DEFAULTS)
    merged.update(data)
    return merged


def load_settings(path):
    """The settings of the file at ``path``, completed with the defaults."""
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise SettingsError(f"{path}: {e}") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: the top level must be an object")
    return merge_defaults(data)


def find_file(start):
    """The nearest settings file at or above ``start``, or None."""
    here = os.path.abspath(start)
    while True:
        candidate = os.path.join(here, FILE_NAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def settings_for(start="."):
    """The settings that apply in ``start`` (the defaults when there is no file)."""
    path = find_file(start)
    return load_settings(path) if path else dict(DEFAULTS)


def load_all(paths):
    """{path: settings} for several files, e.g. for the 'config check' command."""
    return {path: load_settings(path) for path in paths}


def dump(settings, path):
    """Write only the settings that differ from the defaults."""
    changed = {k: v for k, v in settings.items() if DEFAULTS.get(k) != v}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(changed, f, indent=2, sort_keys=True)
        f.write("\n")
