"""The model as a reviewer (app.edit.review): its prompt shares the file's prefix, its "no"
flags a change only for a model with a measured threshold, and a flagged change is not
written."""

import pytest
from scripted import scripted_loaded
from toy import ToyModel

from specedit.app.edit import review as review_mod
from specedit.app.edit.edits import FORMAT
from specedit.app.edit.prompts import review_prompt, rewrite_prompt
from specedit.app.edit.review import Review, verdict
from specedit.app.edit.rewrite import rewrite
from specedit.app.options import RewriteOptions

TEXT = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x\n"
WANT = TEXT.replace("x + 1", "x + 2")
BLOCKS = FORMAT.splitlines()[0]
ASK = "Does this change do what the instruction asks"


def _blocks():
    return "```python\n<<<<<<< SEARCH\n    return x + 1\n=======\n    return x + 2\n>>>>>>> REPLACE\n```\n"


def test_the_review_prompt_shares_the_files_prefix():
    t = ToyModel(256)
    edit = rewrite_prompt(t, TEXT, "Make f add 2.", path="m.py", edit="blocks")
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x + 1\n+    return x + 2\n"
    rev = review_prompt(t, TEXT, "Make f add 2.", diff, path="m.py")
    assert rev.prefix_end == edit.prefix_end > 0
    assert rev.ids[: rev.prefix_end] == edit.ids[: edit.prefix_end]
    assert rev.marks == (rev.prefix_end,)


def test_a_verdict_needs_a_threshold_and_a_score_below_it(monkeypatch):
    low, high = Review(0.2, 0.7, 0.1, 100, 10), Review(0.8, 0.1, 0.1, 100, 10)
    assert verdict(low, "m") is None  # no threshold measured for m
    monkeypatch.setitem(review_mod.THRESHOLDS, "m", 0.5)
    v = verdict(low, "m")
    assert v.reason == "review" and "p(yes) 0.20, p(no) 0.70" in v.message
    assert verdict(high, "m") is None


@pytest.mark.parametrize("answer, flagged", [("no", True), ("yes", False)])
def test_rewrite_reviews_the_finished_change(monkeypatch, answer, flagged):
    monkeypatch.setitem(review_mod.THRESHOLDS, "scripted", 0.0)
    loaded = scripted_loaded([(ASK, answer), (BLOCKS, _blocks())])
    opts = RewriteOptions(instruction="Make f add 2.", verbatim=False)
    res = rewrite(loaded, TEXT, opts, path="m.py")
    assert res.status == "ok" and res.new_text == WANT and res.review is not None
    assert (res.review.p_no > 0.9) == flagged
    assert (res.suspect is not None and res.suspect.reason == "review") == flagged
    assert res.to_json()["review"]["score"] == pytest.approx(res.review.score, abs=1e-3)
    # the review read only the instruction, the diff and the question: the file was cached
    assert res.review.read_tokens < res.review.prompt_tokens - len(TEXT)


def test_off_and_an_unmeasured_model_are_not_reviewed():
    loaded = scripted_loaded([(ASK, "no"), (BLOCKS, _blocks())])
    for how in ("auto", "off"):
        opts = RewriteOptions(instruction="Make f add 2.", verbatim=False, review=how)
        res = rewrite(loaded, TEXT, opts, path="m.py")
        assert res.review is None and res.suspect is None and res.new_text == WANT
    on = RewriteOptions(instruction="Make f add 2.", verbatim=False, review="on")
    res = rewrite(loaded, TEXT, on, path="m.py")
    assert res.review is not None and res.review.p_no > 0.9 and res.suspect is None
