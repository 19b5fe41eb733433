"""The keys a change removes from a JSON, TOML or YAML file, and the section it changes.

Contract: ``removed_keys(old, new, path) -> list[RemovedKey] | None`` parses both texts as
the file's language (``json``, ``tomllib``, PyYAML's loader of plain strings) and lists the key paths
``old`` has and ``new`` has not, in the original's order (a removed table is one entry, not
one per key under it). Lists count as one place: a key is removed only when no item of the list
has it any more, so items added or reordered remove nothing. A key that comes back beside
itself under another name with the same value was renamed, not removed. None when the file is
not one of these languages or either text does not parse (the syntax checks say that).
``other_section(old, new, path, instruction) -> OtherSection | None``: a value set under a
section the instruction does not say whose twin key stands under one it says.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass

from ..code.syntax import language_name

Path = tuple[str, ...]


@dataclass(frozen=True)
class RemovedKey:
    """A key path the change removed (``("services", "web", "volumes")``) and the 0-based
    line of the original where its last key stands (None when it cannot be told)."""

    path: Path
    line: int | None

    def dotted(self) -> str:
        return ".".join(k for k in self.path if k != "[]")


def _load(text: str, lang: str):
    try:
        if lang == "json":
            return json.loads(text)
        if lang == "toml":
            return tomllib.loads(text)
        import yaml

        # every scalar a string: YAML 1.1 reads a key ``on:`` as True
        return yaml.load(text, Loader=yaml.BaseLoader)
    except (ValueError, tomllib.TOMLDecodeError, ImportError):
        return None
    except Exception as e:  # yaml.YAMLError and its kin: no parse is no reading
        if type(e).__module__.startswith("yaml"):
            return None
        raise


def _paths(value, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            here = (*prefix, str(k))
            out.add(here)
            out |= _paths(v, here)
    elif isinstance(value, list):
        for v in value:
            out |= _paths(v, (*prefix, "[]"))
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _line_of(text: str, path: Path) -> int | None:
    """The line of ``path``'s last key, found key by key from the top: the outermost key
    where it is least indented, each next one below and more indented than the last."""
    lines = text.splitlines()
    at, depth = 0, -1
    for n, key in enumerate(k for k in path if k != "[]"):
        q = re.escape(key)
        pattern = re.compile(rf"^\s*(?:-\s*)?[\"']?{q}[\"']?\s*[:=]|^\s*\[+[^\]]*\b{q}\]")
        found = [
            i
            for i in range(at, len(lines))
            if pattern.search(lines[i]) and _indent(lines[i]) > depth
        ]
        if not found:
            return None
        if n == 0:
            least = min(_indent(lines[i]) for i in found)
            found = [i for i in found if _indent(lines[i]) == least]
        at, depth = found[0], _indent(lines[found[0]])
    return at


def _at(value, path: Path):
    for k in path:
        value = value.get(k) if isinstance(value, dict) else None
    return value


def _renamed(p: Path, added: set[Path], before, after) -> bool:
    if "[]" in p:
        return False
    value = _at(before, p)
    return any(q[:-1] == p[:-1] and _at(after, q) == value for q in added if len(q) == len(p))


def _both(old: str, new: str, path: str | None) -> tuple[object, object] | None:
    """Both texts read as ``path``'s config language; None for another language or a text
    that does not parse."""
    lang = language_name(path)
    if lang not in {"json", "toml", "yaml"}:
        return None
    before, after = _load(old, lang), _load(new, lang)
    if before is None or after is None:
        return None
    return before, after


def removed_keys(old: str, new: str, path: str | None) -> list[RemovedKey] | None:
    """The key paths ``old`` has and ``new`` has not (module docstring)."""
    both = _both(old, new, path)
    if both is None:
        return None
    before, after = both
    had, has = _paths(before), _paths(after)
    gone = had - has
    outer = [p for p in gone if p[:-1] not in gone and not _renamed(p, has - had, before, after)]
    found = [RemovedKey(p, _line_of(old, p)) for p in outer]
    return sorted(found, key=lambda k: (k.line is None, k.line or 0, k.path))


@dataclass(frozen=True)
class OtherSection:
    """A key the change set (``changed``) whose twin under another section (``twin``) is the
    one the instruction names: ``named`` are the twin's keys it says, the change's keys none."""

    changed: Path
    line: int | None
    twin: Path
    named: tuple[str, ...]


def _leaves(value, prefix: Path = ()) -> dict[Path, object]:
    """Every scalar by its key path (list items by index: a list of scalars is one value)."""
    out: dict[Path, object] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out |= _leaves(v, (*prefix, str(k)))
    elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        for i, v in enumerate(value):
            out |= _leaves(v, (*prefix, f"[{i}]"))
    else:
        out[prefix] = value
    return out


def _says(instruction: str, key: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", instruction, re.I) is not None


def other_section(old: str, new: str, path: str | None, instruction: str) -> OtherSection | None:
    """The first value the change sets at a key path none of whose own section keys the
    instruction says, where the same key stands under a section it does say (``staging``'s
    ``minReplicas`` set, for an instruction that says ``production``, which has one too).
    None for files of other languages, texts that do not parse or no such value."""
    both = _both(old, new, path)
    if both is None:
        return None
    was, now = _leaves(both[0]), _leaves(both[1])
    twins: dict[tuple[int, str], list[Path]] = {}
    for q in was:
        if q:
            twins.setdefault((len(q), q[-1]), []).append(q)
    for p, v in now.items():
        if not p or (p in was and was[p] == v):
            continue
        for q in twins.get((len(p), p[-1]), ()):
            if q == p:
                continue
            differ = [(a, b) for a, b in zip(p, q, strict=True) if a != b]
            said = tuple(b for _, b in differ if _says(instruction, b))
            if said and not any(_says(instruction, a) for a, _ in differ):
                found = tuple(k for k in p if not k.startswith("["))
                return OtherSection(p, _line_of(new, found), q, said)
    return None
