"""The byte-exact edit tasks (bench/edit_tasks.py): the fixtures the checks' tests read
(real answers recorded on them, their right answers for false alarms). Their answers are
checked without a model. The benchmark itself is judged by behaviour
(tests/test_behave_suite.py)."""

from __future__ import annotations

import difflib

import pytest

from specedit.bench.edit_tasks import (
    DATA,
    EDIT_TASKS,
    FEW_LINES,
    HOLDOUT_TASKS,
    KINDS,
    TASK_SETS,
    type_hints_ok,
)


@pytest.mark.parametrize("tasks", [EDIT_TASKS, HOLDOUT_TASKS], ids=["suite", "holdout"])
def test_each_set_covers_every_kind_on_vendored_files(tasks):
    assert len({t.name for t in tasks}) == len(tasks)
    assert {t.kind for t in tasks} == set(KINDS)
    assert (DATA / "LICENSE-PSF.txt").exists() and (DATA / "README.md").exists()
    readme = (DATA / "README.md").read_text()
    for t in tasks:
        assert (DATA / t.file).exists() and f"`{t.file}`" in readme, t.file
        n = t.source().count("\n")
        if t.kind == "big":  # longer than the default context
            assert 1700 <= n <= 3000, t.name
        elif t.file.endswith(".py"):  # the size of a file one edits a few lines of
            assert 100 <= n <= 600, t.name
        else:  # a project's own config file, script or doc
            assert 60 <= n <= 250, t.name
    # the other benchmarks' files are not used here
    from specedit.bench.tasks import COPY_FILES

    assert not {t.file for t in tasks} & set(COPY_FILES)


def test_the_suite_is_big_enough_and_the_held_out_set_apart():
    assert len(EDIT_TASKS) >= 40 and len(HOLDOUT_TASKS) >= 12
    assert sum(t.kind in FEW_LINES for t in EDIT_TASKS) >= 30
    assert sum(t.kind in ("config", "doc") for t in EDIT_TASKS) >= 8
    assert all(2000 <= t.source().count("\n") for t in EDIT_TASKS if t.kind == "big")
    # held out: other names, other files, so a gain tuned on the suite cannot leak in
    assert not {t.name for t in EDIT_TASKS} & {t.name for t in HOLDOUT_TASKS}
    assert not {t.file for t in EDIT_TASKS} & {t.file for t in HOLDOUT_TASKS}
    assert set(TASK_SETS) == {"suite", "holdout"} and TASK_SETS["suite"] is EDIT_TASKS


@pytest.mark.parametrize("task", EDIT_TASKS + HOLDOUT_TASKS, ids=lambda t: t.name)
def test_each_answer_is_right_and_the_source_is_not(task):
    src = task.source()
    assert not task.judge(src) and not task.judge(None)
    want = task.expected()
    if want is None:
        return
    assert task.judge(want)
    assert not task.judge(want + "\n")  # every other byte counts
    if task.bug is not None:
        assert task.bug[1] in src and want == (DATA / task.file).read_text()
    # a few-line task changes a few lines (a method renamed with its calls: a few more)
    ops = difflib.SequenceMatcher(None, src.splitlines(), want.splitlines()).get_opcodes()
    changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")
    if task.kind in FEW_LINES:
        assert 1 <= changed <= 8, (task.name, changed)


def test_type_hints_are_judged_by_what_changed():
    old = "def f(a, b=1):\n    '''Doc.'''\n    return a\n\n\nclass C:\n    def m(self, x):\n        pass\n"
    good = old.replace("f(a, b=1):", "f(a: int, b: int = 1) -> int:").replace(
        "m(self, x):", "m(self, x: str) -> None:"
    )
    assert type_hints_ok(old, good)
    assert not type_hints_ok(old, good.replace("-> None", ""))  # a return left bare
    assert not type_hints_ok(old, good.replace("return a", "return b"))  # the code changed
    assert not type_hints_ok(old, good.replace("'''Doc.'''", "'''Docs.'''"))  # not a signature
    assert not type_hints_ok(old, good.replace("-> int:", "-> int"))  # does not parse


def test_the_wait_is_shared_out_by_stage():
    from specedit.bench.edits_bench import tally, wait_shares

    stats = {
        "stages": [
            {"prefill_s": 1.0, "decode_s": 4.0, "tokens": 60},
            {"prefill_s": 0.5, "decode_s": 2.5, "tokens": 30},
        ],
        "checks_s": 0.75,
    }
    got = wait_shares(stats, 9.0)
    assert got == {
        "generations": 2, "plan_s": 0.0, "first_s": 5.0, "rounds_s": 3.0, "checks_s": 0.75,
        "other_s": 0.25,
    }  # fmt: skip
    # with a plan note (``first`` ``plan``) the first generation is the note's
    planned = wait_shares({**stats, "plan_note": "In f, x."}, 9.0)
    assert (planned["plan_s"], planned["first_s"], planned["rounds_s"]) == (5.0, 3.0, 0.0)
    assert planned["generations"] == 2 and planned["other_s"] == 0.25
    assert wait_shares({}, 2.0)["other_s"] == 2.0  # no generation: all the program's
    row = {"right": True, "wait_s": 9.0, **got}
    t = tally([row, {**row, "first_s": 1.0}])
    assert t["median_first_s"] == 3.0 and t["mean_rounds_s"] == 3.0
