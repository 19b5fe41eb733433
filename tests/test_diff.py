"""Tests for specedit.app.code.diff: hunks, applying subsets, unified diffs, streaming previews."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specedit.app.code.diff import (
    Hunk,
    apply_hunks,
    complete_lines,
    compute_hunks,
    preview_hunks,
    split_lines,
    unified_diff,
)

# Few distinct lines so that texts share lines and diffs are interesting; includes a
# missing final newline, blank lines and characters str.splitlines() would split on.
LINE = st.sampled_from(["a", "b", "c", "", "x\x0cy", "d\u2028e", "  f"])
TEXT = st.builds(
    lambda lines, end: "\n".join(lines) + end,
    st.lists(LINE, max_size=12),
    st.sampled_from(["", "\n"]),
)
FAST = settings(max_examples=150, deadline=None, database=None)


def test_split_lines() -> None:
    assert split_lines("") == []
    assert split_lines("a") == ["a"]
    assert split_lines("a\n") == ["a\n"]
    assert split_lines("a\n\nb") == ["a\n", "\n", "b"]
    assert split_lines("f\x0cg\r\n") == ["f\x0cg\r\n"]


def test_compute_hunks_shapes() -> None:
    old = "1\n2\n3\n4\n5\n"
    new = "1\nTWO\n3\n4\n4.5\n5\n"
    hunks = compute_hunks(old, new)
    assert hunks == [
        Hunk(id=0, start_line=1, end_line=2, old_text="2\n", new_text="TWO\n"),
        Hunk(id=1, start_line=4, end_line=4, old_text="", new_text="4.5\n"),
    ]
    assert hunks[1].to_json() == {
        "id": 1,
        "startLine": 4,
        "endLine": 4,
        "oldText": "",
        "newText": "4.5\n",
    }


def test_compute_hunks_deletion_and_equal() -> None:
    assert compute_hunks("a\nb\nc\n", "a\nc\n") == [Hunk(0, 1, 2, "b\n", "")]
    assert compute_hunks("same\n", "same\n") == []
    assert compute_hunks("", "") == []
    assert compute_hunks("", "new\n") == [Hunk(0, 0, 0, "", "new\n")]


def test_adjacent_changes_form_one_hunk() -> None:
    hunks = compute_hunks("a\nb\nc\n", "A\nB\nc\nd\n")
    assert [(h.start_line, h.end_line) for h in hunks] == [(0, 2), (3, 3)]


def test_missing_trailing_newline() -> None:
    old, new = "a\nb", "a\nb\n"
    hunks = compute_hunks(old, new)
    assert hunks == [Hunk(0, 1, 2, "b", "b\n")]
    assert apply_hunks(old, hunks) == new


def test_apply_subset() -> None:
    old = "1\n2\n3\n4\n5\n"
    new = "1\nTWO\n3\n4\nFIVE\n"
    h0, h1 = compute_hunks(old, new)
    assert apply_hunks(old, [h0]) == "1\nTWO\n3\n4\n5\n"
    assert apply_hunks(old, [h1]) == "1\n2\n3\n4\nFIVE\n"
    assert apply_hunks(old, [h1, h0]) == new
    assert apply_hunks(old, []) == old


def test_apply_rejects_stale_and_overlapping() -> None:
    with pytest.raises(ValueError, match="does not match"):
        apply_hunks("a\nb\n", [Hunk(0, 0, 1, "zzz\n", "y\n")])
    with pytest.raises(ValueError, match="out of range"):
        apply_hunks("a\n", [Hunk(0, 3, 4, "q\n", "")])
    with pytest.raises(ValueError, match="overlap"):
        apply_hunks("a\nb\nc\n", [Hunk(0, 0, 2, "a\nb\n", ""), Hunk(1, 1, 3, "b\nc\n", "")])
    with pytest.raises(ValueError, match="overlap"):
        apply_hunks("a\n", [Hunk(0, 1, 1, "", "x\n"), Hunk(1, 1, 1, "", "y\n")])


@FAST
@given(old=TEXT, new=TEXT)
def test_apply_all_reproduces_new(old: str, new: str) -> None:
    hunks = compute_hunks(old, new)
    assert apply_hunks(old, hunks) == new
    assert apply_hunks(old, []) == old
    assert [h.id for h in hunks] == list(range(len(hunks)))
    for h in hunks:
        assert h.old_text != h.new_text
        assert "".join(split_lines(old)[h.start_line : h.end_line]) == h.old_text
    # Hunks are ordered, disjoint and separated by at least one equal line.
    for prev, cur in zip(hunks, hunks[1:], strict=False):
        assert prev.end_line < cur.start_line


@FAST
@given(old=TEXT, new=TEXT, data=st.data())
def test_apply_any_subset(old: str, new: str, data: st.DataObject) -> None:
    hunks = compute_hunks(old, new)
    chosen = data.draw(st.lists(st.sampled_from(hunks), unique=True) if hunks else st.just([]))
    result = apply_hunks(old, chosen)
    rest = [h for h in hunks if h not in chosen]
    # Applying the remaining hunks (re-diffed against the result) reaches new.
    assert apply_hunks(result, compute_hunks(result, new)) == new
    # Chosen hunks' new text is present; each unchosen hunk keeps its old region.
    if len(chosen) == len(hunks):
        assert result == new
    if not chosen:
        assert result == old
    assert len(split_lines(result)) == len(split_lines(old)) + sum(
        len(split_lines(h.new_text)) - (h.end_line - h.start_line) for h in chosen
    )
    assert len(rest) + len(chosen) == len(hunks)


def test_unified_diff_basic() -> None:
    diff = unified_diff("a\nb\nc\n", "a\nB\nc\n", path="src/x.py")
    assert diff == ("--- a/src/x.py\n+++ b/src/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
    assert unified_diff("same\n", "same\n") == ""


def test_unified_diff_no_newline_at_eof() -> None:
    diff = unified_diff("a\nb", "a\nb\n")
    assert diff == (
        "--- a/file\n+++ b/file\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
    )
    diff = unified_diff("a\n", "a\nz", context=0)
    assert diff.endswith("+z\n\\ No newline at end of file\n")


def test_unified_diff_context() -> None:
    old = "".join(f"{i}\n" for i in range(20))
    new = old.replace("10\n", "ten\n")
    diff = unified_diff(old, new, context=1)
    assert "@@ -10,3 +10,3 @@\n 9\n-10\n+ten\n 11\n" in diff


@FAST
@given(old=TEXT, new=TEXT)
def test_unified_diff_lines_are_terminated(old: str, new: str) -> None:
    diff = unified_diff(old, new)
    assert diff == "" or diff.endswith("\n")
    assert (diff == "") == (old == new)
    # Stripping the markers gives back difflib's own lines.
    body = [ln for ln in split_lines(diff) if not ln.startswith("\\")]
    plain = list(difflib.unified_diff(split_lines(old), split_lines(new), "a/file", "b/file"))
    assert len(body) == len(plain)


def test_complete_lines() -> None:
    assert complete_lines("") == ""
    assert complete_lines("partial") == ""
    assert complete_lines("a\nb") == "a\n"
    assert complete_lines("a\nb\n") == "a\nb\n"


def test_preview_does_not_delete_ungenerated_tail() -> None:
    old = "1\n2\n3\n4\n5\n"
    assert preview_hunks(old, "") == []
    assert preview_hunks(old, "1\n2\n3") == []
    assert preview_hunks(old, "1\nTWO\n3\n4") == [Hunk(0, 1, 2, "2\n", "TWO\n")]


def test_preview_changed_last_line_replaces_one_line() -> None:
    old = "1\n2\n3\n4\n5\n"
    hunks = preview_hunks(old, "1\n2\nTHREE\n")
    assert hunks == [Hunk(0, 2, 3, "3\n", "THREE\n")]
    assert apply_hunks(old, hunks) == "1\n2\nTHREE\n4\n5\n"


def test_preview_insertion_then_tail() -> None:
    old = "1\n2\n3\n"
    hunks = preview_hunks(old, "0\n1\n")
    assert hunks == [Hunk(0, 0, 0, "", "0\n")]


def test_preview_of_complete_text_matches_compute_when_tail_kept() -> None:
    old = "a\nb\nc\nd\n"
    new = "a\nB\nc\nd\ne\n"
    assert preview_hunks(old, new) == compute_hunks(old, new)


@FAST
@given(old=TEXT, cut=st.integers(min_value=0, max_value=40))
def test_preview_of_old_prefix_is_empty(old: str, cut: int) -> None:
    assert preview_hunks(old, old[:cut]) == []


@FAST
@given(old=TEXT, new=TEXT, cut=st.integers(min_value=0, max_value=60))
def test_preview_hunks_apply_cleanly(old: str, new: str, cut: int) -> None:
    partial = new[:cut]
    hunks = preview_hunks(old, partial)
    merged = apply_hunks(old, hunks)
    assert merged.startswith(complete_lines(partial))
    assert [h.id for h in hunks] == list(range(len(hunks)))
