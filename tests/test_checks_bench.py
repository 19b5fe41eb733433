"""The checks' false alarms on the suite's right answers stay under issue 45's bar."""

from specedit.bench.behave_tasks import load
from specedit.bench.checks_bench import alarms, report


def test_right_answers_are_rarely_flagged():
    found = alarms("suite")
    assert len(found) == 3 * len(load("suite"))
    flagged = sum(bool(v) for v in found.values())
    assert flagged <= 0.05 * len(found), report(found, names=True)
    # a tool's error or no change at all is never said of a right answer
    assert not any({"compile", "unchanged", "syntax"} & set(v) for v in found.values())


def test_a_record_is_judged_again_from_its_diffs():
    from specedit.app.code.diff import unified_diff
    from specedit.bench.checks_bench import apply_diff, rejudge, rejudge_report

    old = "a\nb\nc\nd\ne\nf\ng\nh\ni\n"
    for new in (old.replace("b\n", "B\nB2\n"), old.replace("i\n", "i"), "x\n" + old[2:], ""):
        assert apply_diff(old, unified_diff(old, new, "f.txt")) == new
    assert apply_diff(old, "") == old
    task = load("suite")[0]
    src, ref = task.source(), task.reference()
    row = {"task": task.name, "phrasing": "suite", "status": "ok", "right": False, "flagged": ""}
    record = {
        "set": "suite",
        "models": [
            {
                "runs": [
                    {**row, "diff": unified_diff(src, src, task.file)},  # changed nothing
                    {**row, "diff": unified_diff(src, ref, task.file), "right": True},
                    {**row, "status": "truncated", "flagged": "truncated", "diff": ""},
                ]
            }
        ],
    }
    rows = rejudge(record)
    assert [r["now"] for r in rows] == [["unchanged"], [], ["truncated"]]
    report = rejudge_report(rows)
    assert "newly flagged by unchanged: 1" in report
