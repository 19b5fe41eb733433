"""Checks of what the instruction spells out: the place it opens with, the names it writes as code.

Contract: ``place_missed``, ``name_missing`` and ``section_other`` (each ``(change, intent)``)
return a ``Suspect`` or None, and read only the instruction (``app.check.intent``:
``Intent.place``, ``Intent.spelled``, its words) and the two texts; ``app.check.checks`` runs
them with the other checks.
``place_missed``: the instruction opens with where the change goes ("In `fetch`, …",
"write_many: …") and no hunk changes that definition (``place_missed``). ``name_missing``: a
name it writes as code (`` `getopts` ``, ``Money.__repr__``, ``precision=2``) is in neither
the original nor the result (``name_missing``). ``section_other``: a config value set under a
section the instruction does not say, where the same key stands under one it does
(``app.check.config_keys.other_section``). Each says what it saw, not a guess at intent.
"""

from __future__ import annotations

import re

from ..code.source import Change
from .config_keys import other_section
from .intent import Intent
from .verdict import Suspect, Verdict, lines_said

_WORD = re.compile(r"[A-Za-z_]\w*")


def place_missed(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when nothing changes in the definition the instruction opens with."""
    if not intent.place or not c.hunks or intent.rename is not None or intent.everywhere:
        return None
    if any(c.within(h, d) for h in c.hunks for d in intent.place):
        return None
    read = set().union(*(_code_words(c.old.lines[d.start : d.end]) for d in intent.place))
    if all(_top_level(c, h) and _binds(h.old_text) & read for h in c.hunks):
        return None  # a value the place reads, changed where it is bound (MAX_ATTEMPTS = 3)
    where = " or ".join(d.name for d in intent.place)
    return Suspect(
        Verdict.PLACE_MISSED,
        0,
        f"the instruction opens with {where}, and the result changes nothing in it "
        f"(it changes {lines_said(c.hunks)})",
    )


_BINDS = re.compile(
    r"^\s*(?:(?:export|readonly|declare|const|let|var|static|pub)\s+)*([A-Za-z_]\w*)"
    r"\s*(?::[^=\n]*)?=(?!=)",
    re.M,
)


def _binds(text: str) -> set[str]:
    """Names ``text`` binds at a line's start (``KEEP=7``, ``MAX_ATTEMPTS = 3``, ``const X =``)."""
    return set(_BINDS.findall(text))


def _code_words(lines: list[str]) -> set[str]:
    return set(_WORD.findall("".join(lines)))


def _top_level(c: Change, h) -> bool:
    """True when hunk ``h`` changes lines of no definition."""
    return not any(c.within(h, d) for d in c.old.definitions)


def name_missing(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when a name the instruction writes as code is nowhere in either text."""
    if not intent.spelled or not c.hunks:
        return None
    there = set(_WORD.findall(c.old.text)) | set(_WORD.findall(c.new.text))
    missing = [n for n in intent.spelled if n not in there]
    if not missing:
        return None
    names = ", ".join(missing)
    return Suspect(
        Verdict.NAME_MISSING,
        0,
        f"the instruction writes {names}, and neither the file nor the result has "
        f"{'it' if len(missing) == 1 else 'them'}",
    )


def section_other(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when a config value is set under a section the instruction does not say
    and its twin key under a section it says is left (``other_section``)."""
    if intent.removal or not c.hunks:
        return None
    found = other_section(c.old.text, c.new.text, c.path, intent.instruction)
    if found is None:
        return None
    at = f" (line {found.line + 1})" if found.line is not None else ""
    said = ", ".join(found.named)
    return Suspect(
        Verdict.OTHER_SECTION,
        0,
        f"the result sets {'.'.join(found.changed)}{at}; the instruction says {said}, and "
        f"{'.'.join(found.twin)} is left as it was",
    )
