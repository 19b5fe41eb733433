"""The review threshold is chosen from records by a rule, and tested on others."""

from specedit.bench.review_bench import choose, effect, reviewed


def _row(score, right, flagged=""):
    return {"right": right, "flagged": flagged, "review": {"score": score}}


def test_the_threshold_flags_at_most_the_share_of_right_runs():
    rows = [_row(s, True) for s in range(40)] + [_row(s - 5.5, False) for s in range(10)]
    t = choose(rows, 0.05)  # 2 of 40 right runs may fall below it
    assert t == 2
    e = effect(rows, t)
    assert (e["false_alarms"], e["right"]) == (2, 40)
    assert (e["caught"], e["left"]) == (8, 2)  # -5.5 .. 1.5 are below 2; 2.5 and 3.5 are not


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
