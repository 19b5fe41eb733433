"""The language tools' verdict (app.check.compilers, checks.compile_worse): only errors the
original did not have count, by tool and message, whatever line they moved to."""

import shutil

import pytest

from specedit.app.check.checks import compile_worse, no_change
from specedit.app.check.compilers import new_errors
from specedit.app.check.intent import read_intent
from specedit.app.code.source import Change, Source

PY = "def wrap(body, width=72):\n    return body\n"


def test_python_indentation_the_parse_lets_through():
    # what the 1.5B wrote for "wrap at 80 columns": a line indented under a return
    new = "def wrap(body, width=80):\n    return body\n        body = body.strip()\n"
    (d,) = new_errors(PY, new, "commitmsg.py")
    assert (d.tool, d.line, d.message) == ("python", 3, "IndentationError: unexpected indent")
    v = compile_worse(
        Change.of(PY, new, "commitmsg.py"),
        read_intent("Wrap at 80 columns.", Source(PY, "commitmsg.py")),
    )
    assert v.reason == "compile" and "line 3: IndentationError" in v.message


def test_an_error_the_original_had_does_not_count():
    old = PY + "def broken(:\n    pass\n"
    new = "\n\n" + old.replace("72", "80")
    assert new_errors(old, new, "m.py") == []
    assert new_errors(PY, PY, "m.py") == [] and new_errors(PY, PY + "x = (\n", "m.txt") == []


RS = """pub fn slug(title: &str) -> String {
    title.to_lowercase().replace(' ', "-")
}
"""


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc is not installed")
def test_rust_types_and_names():
    new = RS.replace("(title: &str)", "(title: &str, max_len: usize)").replace(
        "title.to_lowercase()", "let s: usize = title.to_lowercase();\n    s"
    )
    found = new_errors(RS, new, "slug.rs")
    assert found and found[0].tool == "rustc" and found[0].message.startswith("error[E0308]")
    assert found[0].line == 2
    # a crate that is not at hand is an error of both texts: nothing new
    old = "use serde::Serialize;\n" + RS
    assert new_errors(old, old.replace("' '", "'_'"), "slug.rs") == []


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_shell_syntax():
    old = 'if [ -n "$1" ]; then\n  echo "$1"\nfi\n'
    (d,) = new_errors(old, old.replace("fi\n", ""), "run.sh")
    assert d.tool == "bash -n" and "unexpected end of file" in d.message


def test_no_change_is_a_verdict():
    intent = read_intent("Add a docstring to wrap.", Source(PY, "m.py"))
    assert no_change(Change.of(PY, PY, "m.py"), intent).reason == "unchanged"
    # a blank line more is no change either (tests/test_no_change.py); a line more is one
    assert no_change(Change.of(PY, PY + "\n", "m.py"), intent).reason == "unchanged"
    assert no_change(Change.of(PY, PY + "x = 1\n", "m.py"), intent) is None


def test_pylint_errors_a_change_brings():
    # a method the change calls that the class does not have; a call with one argument
    # too many; both absent from the original
    old = (
        "class Ledger:\n    def __init__(self):\n        self.rows = []\n\n"
        "    def add(self, row):\n        self.rows.append(row)\n\n"
        "    def undo(self):\n        self.rows.pop()\n"
    )
    new = old.replace("self.rows.pop()", "self.rollback()\n        self.add(1, 2)")
    found = new_errors(old, new, "ledger.py")
    assert [(d.tool, d.line, d.kind) for d in found] == [
        ("pylint", 9, "E1101"),
        ("pylint", 10, "E1121"),
    ]
    assert "Instance of 'Ledger' has no 'rollback' member" in found[0].message
    # pylint's words name the code's names: a rename changes them, not the errors
    broken = old + "\n\nLedger().missing()\n"
    assert new_errors(broken, broken.replace("Ledger", "Book"), "ledger.py") == []


def test_a_path_that_no_longer_returns_a_value_is_reported():
    """pylint's R1710, the one message past its errors that counts: a function whose last
    ``return []`` is deleted returns None on that path; a function that had it already
    does not count."""
    old = (
        "def problems(rows):\n    for n, row in enumerate(rows):\n        if not row:\n"
        "            return [f'row {n}']\n    return []\n"
    )
    new = old.replace("    return []\n", "")
    (d,) = new_errors(old, new, "importer.py")
    assert (d.tool, d.line, d.kind) == ("pylint", 1, "R1710")
    assert new_errors(new, new.replace("rows", "lines"), "importer.py") == []


def test_a_tool_with_no_answer_on_either_side_gives_no_verdict(monkeypatch):
    """pylint timing out on the original (a big file on a busy machine) must not make the
    result's errors, which the original had too, look new; nor is the silence cached."""
    from specedit.app.check import compilers

    old = "class A:\n    pass\n\n\nA().missing()\n"
    new = old.replace("pass", "x = 1")
    assert [d.kind for d in compilers.errors(new, "python")] == ["E1101"]  # answered, kept
    monkeypatch.setattr(compilers, "TIMEOUT_S", 1e-4)
    assert compilers.errors(old, "python") is None
    assert new_errors(old, new, "a.py") == []
    monkeypatch.setattr(compilers, "TIMEOUT_S", 20.0)
    assert [d.kind for d in compilers.errors(old, "python")] == ["E1101"]
    assert new_errors(old, new, "a.py") == []
