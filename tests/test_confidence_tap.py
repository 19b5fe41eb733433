"""The edit bench's confidence tap (bench/confidence.py): each line a diff adds gets the lowest
probability the target gave a token of it, from the latest generation that wrote it; the tap
changes no answer and leaves the model as it found it."""

from __future__ import annotations

import math

import numpy as np
from scripted import ScriptedModel, scripted_loaded
from test_edit_modes import BLOCKS, TEXT, WANT, block, blocks_answer

from specedit.app.edit.rewrite import rewrite
from specedit.app.options import RewriteOptions
from specedit.app.runtime import local_runner
from specedit.bench.confidence import Generation, added_lines, line_scores, tapped, top_probability


def test_top_probability_is_the_softmax_of_the_largest_logit():
    rows = np.array([[0.0, 0.0, 0.0, 0.0], [math.log(3.0), 0.0, -1e9, -1e9]], dtype=np.float32)
    assert np.allclose(top_probability(rows), [0.25, 0.75])


def test_a_lines_score_is_its_least_sure_token_and_blanks_do_not_count():
    g = Generation(
        ["def f(x):", "\n   ", " return", " x", " *", " 7", "\n"],
        [0.9, 0.2, 0.99, 0.95, 0.4, 0.8, 0.7],
    )
    got = line_scores(g)
    low, n, logp = got["return x * 7"]
    assert low == 0.4 and n == 4  # the indent's newline token writes no character of it
    assert math.isclose(logp, sum(map(math.log, (0.99, 0.95, 0.4, 0.8))))
    assert got["def f(x):"][0] == 0.9


def test_added_lines_come_from_the_latest_generation_that_wrote_them():
    first = Generation(["    return x * 7\n"], [0.3])
    second = Generation(["    return x * 7\n"], [0.9])
    diff = "--- a\n+++ b\n@@ -1 +1 @@\n-    return x + 7\n+    return x * 7\n+\n+    pass\n"
    assert added_lines([first, second], diff) == [
        ["return x * 7", 0.9, 1, math.log(0.9)],
        ["pass", None, 0, 0.0],  # no generation wrote it: the program placed it
    ]


def test_the_tap_records_a_rewrite_and_changes_nothing():
    loaded = scripted_loaded(
        [(BLOCKS, blocks_answer(block("    return x + 7\n", "    return x * 7\n")))]
    )
    opts = RewriteOptions(instruction="In f7, multiply instead of adding.", verbatim=False)
    plain_generate = local_runner.generate
    with tapped(loaded) as tap:
        res = rewrite(loaded, TEXT, opts, path="m.py")
    assert res.status == "ok" and res.new_text == WANT
    assert len(tap.generations) == 1
    (row,) = added_lines(tap.generations, res.diff)
    # a byte a token: the line's non-blank bytes
    assert row[0] == "return x * 7" and row[1] > 0.999 and row[2] == len("returnx*7")
    # the model and the runner are as they were
    assert local_runner.generate is plain_generate
    assert loaded.target.eval.__func__ is ScriptedModel.eval
