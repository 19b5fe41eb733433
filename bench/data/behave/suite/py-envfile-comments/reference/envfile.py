"""Read ``.env`` files: ``KEY=value`` lines, optionally quoted, with ``${VAR}`` expansion.

Used by the dev server and the test runner to load local settings without exporting
them in the shell. Values from the real environment win over the file unless
``override=True``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class EnvFileError(ValueError):
    """A line of a .env file that cannot be read."""

    def __init__(self, lineno: int, line: str, why: str):
        super().__init__(f"line {lineno}: {why}: {line!r}")
        self.lineno = lineno
        self.line = line


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        inner = value[1:-1]
        if value[0] == '"':
            inner = inner.replace("\\n", "\n").replace('\\"', '"')
        return inner
    return value


def parse_line(line: str, lineno: int = 0) -> tuple[str, str] | None:
    """``(key, value)`` for one line, or None for a blank line or a comment.

    An ``export`` prefix is accepted (so the file can also be sourced by a shell)."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    if stripped.startswith("export "):
        stripped = stripped[len("export ") :].lstrip()
    key, sep, value = stripped.partition("=")
    if not sep:
        raise EnvFileError(lineno, line, "no '=' in line")
    key = key.strip()
    if not _KEY.match(key):
        raise EnvFileError(lineno, line, f"bad variable name {key!r}")
    return key, _unquote(value.strip())


def expand(value: str, known: dict[str, str]) -> str:
    """Replace ``${NAME}`` with its value from ``known`` or the environment ('' if unset)."""
    return _REF.sub(lambda m: known.get(m.group(1), os.environ.get(m.group(1), "")), value)


def parse_env(text: str) -> dict[str, str]:
    """The variables set by ``text``, in order, references expanded."""
    result: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        pair = parse_line(line, lineno)
        if pair is None:
            continue
        key, value = pair
        result[key] = expand(value, result)
    return result


def load_env(path: str | Path = ".env", override: bool = False) -> dict[str, str]:
    """Read ``path`` (if it exists) into ``os.environ``; return what the file set."""
    p = Path(path)
    if not p.is_file():
        return {}
    values = parse_env(p.read_text(encoding="utf-8"))
    for key, value in values.items():
        if override or key not in os.environ:
            os.environ[key] = value
    return values


def dump_env(values: dict[str, str]) -> str:
    """``values`` as .env text, quoting values with spaces or quotes."""
    out = []
    for key, value in values.items():
        if any(c in value for c in " \t'\"#"):
            value = '"' + value.replace('"', '\\"').replace("\n", "\\n") + '"'
        out.append(f"{key}={value}")
    return "\n".join(out) + "\n"
