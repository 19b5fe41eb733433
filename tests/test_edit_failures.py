"""Why an edit result is wrong (bench/edit_failures.py): each class on constructed results.

The wrong results are made from the tasks' own files, after the ways the models went
wrong in the edit suite (bench/README.md): a local renamed on its first line only, one
of two functions changed, a copy whose continuation indent shrank to one space, a whole
rewrite that stopped early, blocks that could not be placed. No model runs here.
"""

from __future__ import annotations

import pytest

from specedit.bench.edit_failures import (
    CLASSES,
    CORRUPTED,
    EXTRA,
    FALLBACK,
    MALFORMED,
    NOT_MADE,
    ONE_SITE,
    WRONG_CHANGE,
    WRONG_PLACE,
    classify,
    failure_table,
)
from specedit.bench.edit_tasks import EDIT_TASKS, HOLDOUT_TASKS

TASKS = {t.name: t for t in EDIT_TASKS + HOLDOUT_TASKS}
OK = {"status": "ok", "message": "", "edit_mode": "blocks", "edit_fallback": ""}
WHOLE = {**OK, "edit_mode": "whole"}


def check(name: str, result: str | None, stats: dict, want: str) -> None:
    got = classify(TASKS[name], result, stats)
    assert got == want, (name, got)


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_a_right_result_has_no_class():
    for t in (TASKS["hmac-key-length"], TASKS["md-checklist-item"], TASKS["shelve-get-bug"]):
        assert classify(t, t.expected(), OK) == ""


def test_nothing_made_or_nothing_back():
    t = TASKS["quopri-maxline"]
    check(t.name, t.source(), OK, NOT_MADE)  # the blocks changed nothing
    cut = {**WHOLE, "status": "truncated", "message": "the output stopped at the limit"}
    check(t.name, None, cut, NOT_MADE)
    # a mode that could not run (a whole rewrite of a file longer than the context)
    check("argparse-position", None, {"mode": "whole", "error": "too long"}, NOT_MADE)
    check("difflib-autojunk", None, {"status": "no_output", "edit_mode": "locate"}, NOT_MADE)


def test_blocks_that_could_not_be_read_or_placed_are_a_malformed_answer():
    msg = "the edit blocks cannot be applied (block 1 is not in the file); nothing changed"
    check("quopri-maxline", None, {**OK, "status": "no_output", "message": msg}, MALFORMED)
    big = {**OK, "status": "no_output", "edit_mode": "locate+blocks", "message": msg}
    check("argparse-abbrev", None, big, MALFORMED)
    cut = {**OK, "status": "truncated", "message": "the output stopped"}
    check("json-cache-pool", None, cut, MALFORMED)


def test_a_wrong_whole_rewrite_after_blocks_were_given_up_is_the_fallback():
    t = TASKS["timeit-reindent"]
    fell = {**WHOLE, "edit_fallback": "the answer is not a list of blocks: a second ======="}
    check(t.name, t.source(), fell, FALLBACK)
    check(t.name, None, {**fell, "status": "truncated"}, FALLBACK)
    # first in the precedence: even a rewrite that also dropped the file's tail
    short = "".join(t.expected().splitlines(keepends=True)[:100])
    check(t.name, short, fell, FALLBACK)
    assert classify(t, t.expected(), fell) == ""  # a right rewrite is right


def test_one_site_of_several():
    t = TASKS["hmac-key-length"]
    one = edit(t.source(), "        if len(key) > blocksize:", "        if len(key) >= blocksize:")
    check(t.name, one, OK, ONE_SITE)
    # a local renamed on its first line only (the 1.5B, README)
    t = TASKS["rlcompleter-seen"]
    first = edit(t.source(), '        seen = {"__builtins__"}', '        known = {"__builtins__"}')
    check(t.name, first, OK, ONE_SITE)
    # a method renamed where it is defined, not where it is called
    t = TASKS["tabnanny-longest-run"]
    check(
        t.name, edit(t.source(), "def longest_run_of_spaces", "def longest_space_run"), OK, ONE_SITE
    )
    # a parameter added, not passed on
    t = TASKS["code-interact-filename"]
    one = edit(
        t.source(), "local=None, exitmsg=None):", 'local=None, exitmsg=None, filename="<console>"):'
    )
    check(t.name, one, OK, ONE_SITE)


def test_the_change_made_in_the_wrong_place():
    # unix_dialect has the same line as excel: the twin changed
    t = TASKS["csv-excel-skipspace"]
    twin = edit(
        t.source(),
        "    skipinitialspace = False\n    lineterminator = '\\n'",
        "    skipinitialspace = True\n    lineterminator = '\\n'",
    )
    check(t.name, twin, OK, WRONG_PLACE)
    t = TASKS["md-checklist-item"]
    item = "- the API documentation is updated for API changes\n"
    early = edit(
        t.source(),
        "- `make lint test` passes locally\n",
        f"- `make lint test` passes locally\n{item}",
    )
    check(t.name, early, OK, WRONG_PLACE)
    t = TASKS["toml-erp-timeout"]
    check(t.name, edit(t.source(), "timeout_s = 60\n", "timeout_s = 45\n"), OK, WRONG_PLACE)


def test_the_right_lines_changed_into_the_wrong_text():
    t = TASKS["quopri-maxline"]
    check(t.name, edit(t.source(), "MAXLINESIZE = 76\n", "MAXLINESIZE = 74\n"), OK, WRONG_CHANGE)
    t = TASKS["json-audit-flag"]
    bad = edit(t.source(), '    "webhooks": true,\n', '    "webhooks": true,\n    "audit": true,\n')
    check(t.name, bad, OK, WRONG_CHANGE)


def test_the_change_made_plus_hunks_nobody_asked_for():
    t = TASKS["filecmp-cache-limit"]
    more = edit(t.expected(), "BUFSIZE = 8*1024\n", "BUFSIZE = 16*1024\n")
    check(t.name, more, OK, EXTRA)
    t = TASKS["sh-coverage"]
    check(t.name, edit(t.expected(), "\nset -eu\n", "\nset -euo pipefail\n"), OK, EXTRA)


def test_a_copied_line_corrupted():
    # the change made, a long continuation indent re-emitted as one space (the 1.5B)
    t = TASKS["hmac-key-length"]
    one_space = edit(
        t.expected(),
        "                               RuntimeWarning, 2)\n                blocksize",
        " RuntimeWarning, 2)\n                blocksize",
    )
    check(t.name, one_space, WHOLE, CORRUPTED)
    # a comment that was copied differs, the change made
    t = TASKS["queue-timeouts"]
    check(t.name, edit(t.expected(), "# Note: while", "# Note : while"), WHOLE, CORRUPTED)
    # a whole rewrite that stopped early: the file's tail is dropped
    t = TASKS["cmd-columnize"]
    short = "".join(t.expected().splitlines(keepends=True)[:300])
    check(t.name, short, WHOLE, CORRUPTED)
    # the change not made, but a line's white space differs: not "nothing changed"
    t = TASKS["md-release-item"]
    check(t.name, edit(t.source(), "## Rolling back\n", "## Rolling back \n"), WHOLE, CORRUPTED)
    # a Markdown item added where it belongs, and a blank line lost elsewhere
    t = TASKS["md-error-rate"]
    gone = edit(t.expected(), "## Rolling back\n\n", "## Rolling back\n")
    check(t.name, gone, WHOLE, CORRUPTED)


def test_type_hints_are_classified_from_the_source():
    t = TASKS["linecache-hints"]
    src = t.source()
    one = edit(
        src,
        "def getline(filename, lineno, module_globals=None):",
        "def getline(filename: str, lineno: int, module_globals: dict | None = None) -> str:",
    )
    check(t.name, one, WHOLE, ONE_SITE)  # one signature of several
    check(
        t.name,
        edit(src, "        return lines[lineno - 1]\n", "        return lines[lineno]\n"),
        WHOLE,
        WRONG_PLACE,
    )
    check(
        t.name,
        edit(one, "        return lines[lineno - 1]\n", "        return lines[lineno]\n"),
        WHOLE,
        EXTRA,
    )
    check(t.name, "".join(src.splitlines(keepends=True)[:90]), WHOLE, CORRUPTED)


def test_one_example_of_each_class_in_the_order_of_precedence():
    t = TASKS["hmac-key-length"]
    src, want = t.source(), t.expected()
    one = edit(src, "        if len(key) > blocksize:", "        if len(key) >= blocksize:")
    examples = {
        MALFORMED: (None, {**OK, "status": "no_output"}),
        FALLBACK: (one, {**WHOLE, "edit_fallback": "block 2 is not in the file"}),
        NOT_MADE: (src, OK),
        CORRUPTED: ("".join(want.splitlines(keepends=True)[:-20]), WHOLE),
        WRONG_PLACE: (edit(src, "if blocksize < 16:", "if blocksize <= 16:"), OK),
        ONE_SITE: (one, OK),
        WRONG_CHANGE: (
            edit(want, "(key) >= blocksize:\n            key", "(key) > 0:\n            key"),
            OK,
        ),
        EXTRA: (edit(want, "if blocksize < 16:", "if blocksize <= 16:"), OK),
    }
    assert list(examples) == list(CLASSES)
    for cls, (result, stats) in examples.items():
        assert classify(t, result, stats) == cls


def test_the_failure_table_counts_wrong_rows_by_mode():
    rows = [
        {"mode": "auto", "right": True},
        {"mode": "auto", "right": False, "failure": ONE_SITE},
        {"mode": "auto", "right": False, "failure": ONE_SITE},
        {"mode": "whole", "right": False, "failure": CORRUPTED},
        {"mode": "whole", "right": False},
    ]
    assert failure_table(rows) == {
        "auto": {ONE_SITE: 2},
        "whole": {CORRUPTED: 1, "unclassified": 1},
    }
    # order of CLASSES: the precedence
    table = failure_table([{"mode": "a", "right": False, "failure": c} for c in CLASSES[::-1]])
    assert list(table["a"]) == list(CLASSES)


def test_the_bench_summary_and_report_carry_the_failure_classes():
    from specedit.bench.edits_bench import summarise, table

    runs = [
        {"task": "a", "kind": "line", "mode": "auto", "right": False, "failure": WRONG_PLACE},
        {"task": "b", "kind": "config", "mode": "auto", "right": True},
        {"task": "a", "kind": "line", "mode": "whole", "right": False, "failure": CORRUPTED},
        {"task": "b", "kind": "config", "mode": "whole", "right": False, "failure": CORRUPTED},
    ]
    for r in runs:
        r.update(wait_s=1.0, generated_tokens=10, file_tokens=100, load=1.0)
    s = summarise(runs, ["auto", "whole"])
    assert s["auto"]["all"]["failures"] == {WRONG_PLACE: 1}
    assert s["whole"]["conf/doc"]["failures"] == {CORRUPTED: 1}
    assert s["whole"]["all"]["failures"] == {CORRUPTED: 2}
    rec = {"models": [{"model": "m", "load_range": [1.0, 1.0], "summary": s}]}
    out = table(rec)
    assert "conf/doc" in out and "failure class" in out
    line = next(x for x in out.splitlines() if x.strip().startswith(CORRUPTED))
    assert line.split()[-2:] == ["0", "2"]  # auto, whole


@pytest.mark.parametrize("task", EDIT_TASKS + HOLDOUT_TASKS, ids=lambda t: t.name)
def test_each_task_unchanged_is_not_made_and_its_answer_is_right(task):
    assert classify(task, task.source(), OK) == NOT_MADE
    if task.expected() is not None:
        assert classify(task, task.expected(), OK) == ""


def test_the_runner_records_the_class_of_a_wrong_row(monkeypatch):
    """``run_task`` with the product's rewrite replaced by a canned wrong answer: the row
    says why it is wrong, and what the whole rewrite did after a fall-back."""
    from types import SimpleNamespace

    from specedit.app import rewrite as app_rewrite
    from specedit.bench.edits_bench import run_task

    t = TASKS["hmac-key-length"]
    one = edit(t.source(), "        if len(key) > blocksize:", "        if len(key) >= blocksize:")
    stats = {
        "generated_tokens": 9,
        "file_tokens": 2000,
        "prompt_tokens": 30,
        "cached_tokens": 2000,
        "prefill_s": 0.1,
        "decode_s": 0.2,
        "edit_mode": "whole",
        "edit_reason": "",
        "edit_fallback": "block 2 is not in the file",
    }
    res = SimpleNamespace(
        new_text=one,
        status="ok",
        message="",
        raw="<<<<<<< SEARCH",
        diff="",
        suspect=None,
        stats=SimpleNamespace(snapshot=lambda: stats),
    )
    warm = SimpleNamespace(prefix_tokens=2100, seconds=0.5)
    monkeypatch.setattr(app_rewrite, "warm", lambda *a, **k: warm)
    monkeypatch.setattr(app_rewrite, "rewrite", lambda *a, **k: res)
    loaded = SimpleNamespace(target=SimpleNamespace(rollback=lambda pos: None))
    (row,) = run_task(loaded, t, ["auto"], 0)
    assert not row["right"] and row["failure"] == FALLBACK
    assert row["failure_after_fallback"] == ONE_SITE and row["raw"] == res.raw
