"""The review threshold is chosen from records by a rule, and tested on others."""

from specedit.bench.review_bench import budget, choose, effect, reviewed


def _row(score, right, flagged=""):
    return {"right": right, "flagged": flagged, "review": {"score": score}}


def test_the_threshold_flags_at_most_the_share_of_right_runs():
    rows = [_row(s, True) for s in range(40)] + [_row(s - 5.5, False) for s in range(10)]
    t = choose(rows, 2)  # 2 of 40 right runs may fall below it
    assert t == 2 and choose(rows, -1) == float("-inf")
    e = effect(rows, t)
    assert (e["false_alarms"], e["right"]) == (2, 40)
    assert (e["caught"], e["left"]) == (8, 2)  # -5.5 .. 1.5 are below 2; 2.5 and 3.5 are not


def test_the_checks_false_alarms_come_out_of_the_budget():
    runs = [_row(1, True) for _ in range(38)] + [_row(1, True, "outside_named")] * 2
    assert budget(runs, 0.05) == 0  # 5% of 40 is 2, both taken by the checks
    assert budget(runs[:38] + [_row(1, False, "compile")] * 5, 0.10) == 3


def test_only_unflagged_reviewed_runs_count():
    record = {
        "models": [
            {
                "model": "m",
                "runs": [_row(1, True), _row(1, False, "compile"), {"right": True, "flagged": ""}],
            }
        ]
    }
    assert reviewed(record, "m") == [_row(1, True)]
