"""``no_change`` (app/check/checks.py): an answer that changes nothing, or only blank lines and
trailing spaces where they mean nothing, is no change, unless the instruction is about layout."""

from __future__ import annotations

import pytest

from specedit.app.check.checks import Verdict, no_change
from specedit.app.check.intent import read_intent
from specedit.app.code.source import Change, Source

PY = "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n"
TOML = (
    '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n\n[tool.coverage.run]\nbranch = true\n'
)


def verdict(old: str, new: str, instruction: str, path: str):
    return no_change(Change.of(old, new, path), read_intent(instruction, Source(old, path)))


@pytest.mark.parametrize(
    "old, new, path",
    [
        (PY, PY, "m.py"),
        (PY, PY.replace("\n\n\n", "\n\n"), "m.py"),  # a blank line less
        (PY, PY.replace("x + 1\n", "x + 1   \n"), "m.py"),  # trailing spaces
        (TOML, TOML.replace('"]\n\n[', '"]\n['), "pyproject.toml"),
    ],
)
def test_nothing_but_blank_lines_changed_is_no_change(old, new, path):
    s = verdict(old, new, "Set testpaths to tests.", path)
    assert s is not None and s.reason == Verdict.UNCHANGED
    if old != new:
        assert s.message == "the answer changes only blank lines or trailing spaces in the file"


@pytest.mark.parametrize(
    "new, instruction, path",
    [
        (PY.replace("\n\n\n", "\n\n"), "Use one blank line between functions.", "m.py"),
        (PY.replace("x + 1\n", "x + 1   \n"), "Fix the formatting of f.", "m.py"),
        (PY.replace("\n\n\n", "\n\n"), "Merge the two paragraphs.", "notes.md"),
        (PY.replace("\n\n\n", "\n\n"), "Tidy it.", "notes.txt"),  # no grammar: lines may matter
        (PY.replace("    return x", "        return x"), "Add one.", "m.py"),  # indentation counts
        (PY.replace("x + 1", "x + 2"), "Add two.", "m.py"),
    ],
)
def test_layout_asked_or_meaningful_or_a_real_change_passes(new, instruction, path):
    assert verdict(PY, new, instruction, path) is None
