"""What a result lost unasked (app.check.lost): a parameter's use, a definition; and
ShellCheck's new warnings (app.check.compilers): each said with the original's line."""

import pytest

from specedit.app.check.checks import vouch
from specedit.app.check.compilers import _shellcheck_binary, new_errors
from specedit.app.check.intent import read_intent
from specedit.app.check.lost import definition_gone, param_dropped
from specedit.app.code.source import Change, Source

PY = """class Section:
    def get_bool(self, key, default=False):
        value = self._raw(key)
        if value is None:
            return default
        return value == "yes"

    def __str__(self):
        return "Section"


def helper(x):
    return x * 2
"""


def _judge(instruction: str, new: str, check, path: str = "appconfig.py"):
    intent = read_intent(instruction, Source(PY, path))
    return check(Change.of(PY, new, path), intent)


def test_a_parameter_no_longer_read_is_said_with_its_function():
    new = PY.replace("return default", "raise KeyError(key)")
    v = _judge("A missing key should raise KeyError.", new, param_dropped)
    assert v.reason == "param_dropped"
    assert v.message.startswith("Section.get_bool (line 2) still takes the parameter default")
    # named by the instruction, asked to be removed, or still read: nothing to say
    assert _judge("Stop using default in get_bool; raise KeyError.", new, param_dropped) is None
    assert _judge("Remove the fallback; raise KeyError.", new, param_dropped) is None
    kept = PY.replace("return default", "return bool(default)")
    assert _judge("Return a bool.", kept, param_dropped) is None
    # a function made a stub is let be
    stub = PY.replace("        value = self._raw(key)\n", "        raise NotImplementedError\n")
    stub = stub.replace("        if value is None:\n            return default\n", "")
    stub = stub.replace('        return value == "yes"\n', "")
    assert _judge("Make get_bool a stub for now.", stub, param_dropped) is None


def test_a_definition_gone_unasked_is_said_once_per_class():
    repr_only = PY.replace("def __str__(self):", "def __repr__(self):")
    v = _judge("Give Section a repr like Section().", repr_only, definition_gone)
    assert v.reason == "definition_gone"
    assert v.message.startswith("Section.__str__ (line 8) of the original is gone")
    assert _judge("Replace __str__ with a __repr__.", repr_only, definition_gone) is None
    # a class gone is said once, not with each of its methods
    renamed = PY.replace("class Section:", "class Part:")
    v = _judge("Add a docstring to helper.", renamed, definition_gone)
    assert v.message.startswith("Section (line 1) of the original is gone")
    # the asked rename, and a removal, are not lost
    assert _judge("Rename the class Section to Part.", renamed, definition_gone) is None
    dropped = PY.split("\n\ndef helper")[0] + "\n"
    assert _judge("Delete the unused helper function.", dropped, definition_gone) is None
    # a function that moved into the class is not gone
    moved = PY.replace("\n\ndef helper(x):\n    return x * 2\n", "").replace(
        "    def __str__", "    def helper(self, x):\n        return x * 2\n\n    def __str__"
    )
    assert _judge("Make helper a method of Section.", moved, definition_gone) is None


def test_the_lost_checks_are_among_the_verdicts():
    new = PY.replace("return default", "raise KeyError(key)").replace("__str__", "__repr__")
    intent = read_intent("A missing key should raise KeyError.", Source(PY, "appconfig.py"))
    reasons = [v.reason for v in vouch(Change.of(PY, new, "appconfig.py"), intent)]
    assert "param_dropped" in reasons and "definition_gone" in reasons


SH = """#!/usr/bin/env bash
set -euo pipefail
MIN_KB=0
KEEP=5
while getopts ":s:h" opt; do
    case $opt in
        s) MIN_KB=$OPTARG ;;
        *) echo "usage: rotate [-s KB] FILE" >&2; exit 2 ;;
    esac
done
echo "$MIN_KB $KEEP"
"""


@pytest.mark.skipif(_shellcheck_binary() is None, reason="shellcheck is not installed")
def test_shellcheck_says_a_case_getopts_does_not_give():
    # the 1.5B's answer to "add a -k option": a case label, and the option string left as it was
    new = SH.replace("        s) MIN_KB", "        k) KEEP=$OPTARG ;;\n        s) MIN_KB")
    (d,) = new_errors(SH, new, "rotate-logs.sh")
    assert (d.tool, d.line) == ("shellcheck", 7)
    assert d.message == "SC2214: This case is not specified by getopts"
    # the right answer brings no new warning; one the original had does not count
    right = new.replace('":s:h"', '":s:k:h"')
    assert new_errors(SH, right, "rotate-logs.sh") == []
    unused = SH.replace("KEEP=5\n", "KEEP=5\nSPARE=1\n")
    assert new_errors(unused, unused.replace("MIN_KB=0", "MIN_KB=1"), "rotate-logs.sh") == []
