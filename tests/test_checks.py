"""Results that drop lines the instruction did not ask to remove (app/check/checks.py)."""

from __future__ import annotations

import pytest

from specedit.app.check.checks import suspect_deletion
from specedit.app.check.intent import asks_removal, read_intent
from specedit.app.code.source import Change, Source

SHORT = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
LONG = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(20))


def deletion(old: str, new: str, instruction: str):
    """``suspect_deletion`` of ``old`` becoming ``new`` as ``instruction`` asks."""
    return suspect_deletion(Change.of(old, new), read_intent(instruction, Source(old)))


def test_a_block_closed_early_is_flagged_even_in_a_short_file():
    # the 0.5B asked to rename add to plus returned the first function only (issue 12)
    cut = "def plus(a, b):\n    return a + b\n"
    s = deletion(SHORT, cut, "Rename the function add to plus.")
    assert s is not None and s.reason == "drops_tail" and s.deleted_lines == 2
    assert "the end of the file, are deleted (2 non-blank lines)" in s.message


def test_a_trailing_block_of_a_long_file_is_flagged():
    cut = LONG[: LONG.index("def f15")]
    s = deletion(LONG, cut, "Add a docstring to f3.")
    assert s is not None and s.reason == "drops_tail" and s.deleted_lines == 10


def test_a_large_share_deleted_in_the_middle_is_flagged():
    lines = LONG.splitlines(keepends=True)
    new = "".join(lines[:8] + lines[48:])  # f2..f11 gone, the end kept
    s = deletion(LONG, new, "Rename x to value in f0.")
    assert s is not None and s.reason == "drops_share" and s.deleted_lines == 20


def test_an_addition_that_leaves_fewer_lines_is_flagged():
    """md-release-item (held-out): the 1.5B's retry wrote the new item over the four items
    before it. An instruction that only adds leaves no fewer non-blank lines; one that also
    rewords, and one that adds a parameter (a line changed, none lost), pass."""
    from specedit.bench.edit_tasks import HOLDOUT_TASKS

    task = next(t for t in HOLDOUT_TASKS if t.name == "md-release-item")
    src = task.source()
    items = src[src.index("- the release tag") : src.index("\n\nAnnounce")] + "\n"
    new = src.replace(items, "- the on-call operator knows about the deployment\n")
    s = deletion(src, new, task.instruction)
    assert s is not None and s.reason == "drops_on_add" and s.deleted_lines == 3
    assert "from line 22" in s.message  # the first of the four items
    right = src.replace(items, items + "- the on-call operator knows about the deployment\n")
    assert deletion(src, right, task.instruction) is None
    assert deletion(src, new, "Add the item X, replacing the list.") is None
    sig = "def f(a):\n    return a\n"
    assert deletion(sig, sig.replace("(a)", "(a, b=1)"), "Add a parameter b=1.") is None


@pytest.mark.parametrize(
    "instruction",
    ["Remove the function sub.", "delete sub", "Drop the unused helper", "Keep only add."],
)
def test_an_asked_for_removal_is_not_suspect(instruction):
    assert asks_removal(instruction)
    cut = "def add(a, b):\n    return a + b\n"
    assert deletion(SHORT, cut, instruction) is None


def test_ordinary_edits_are_not_suspect():
    renamed = SHORT.replace("add", "plus")
    assert deletion(SHORT, renamed, "Rename add to plus.") is None
    hinted = LONG.replace("(x):", "(x: int) -> int:")
    assert deletion(LONG, hinted, "Add type hints.") is None
    one_line = SHORT.replace("    return a - b\n", "    return a - b  # difference\n")
    assert deletion(SHORT, one_line, "Comment the last line.") is None
    # a trailing blank line dropped is not a block
    assert deletion(SHORT + "\n\n", SHORT, "Tidy up the end.") is None


def test_no_false_alarm_on_the_edit_suites_right_answers():
    """The rule's false alarms on the bench's edit tasks (issue 12): every exact right
    answer of the edit suite (``bench/edit_tasks.py``, vendored files) passes."""
    from specedit.bench.edit_tasks import EDIT_TASKS

    checked = [t for t in EDIT_TASKS if t.expected() is not None]
    assert len(checked) >= 20
    flagged = [t.name for t in checked if deletion(t.source(), t.expected(), t.instruction)]
    assert flagged == []
