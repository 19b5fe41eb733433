"""One rewrite request is read once (app/edit/request.py, app/code/source.py): however many
stages run (first answer, repair round, whole fallback, a second whole ask), the instruction
is read into an ``Intent`` once, each text, the file and every candidate answer, is
parsed by tree-sitter at most once, and each pair of texts is diffed into hunks once. The readers are wrapped with counters wherever a module
imported them, and real rewrites run on a scripted model."""

from __future__ import annotations

import sys
from collections import Counter

import pytest
from scripted import scripted_loaded
from test_edit_modes import BLOCKS, WHOLE, block, blocks_answer, whole_answer
from test_rounds import LOG, REGION, TEXT, region_rule

from specedit.app.check import intent as intent_mod
from specedit.app.code import diff, syntax
from specedit.app.edit.rewrite import rewrite
from specedit.app.options import RewriteOptions


def _count(monkeypatch, fn, counter: Counter, key) -> None:
    """Replace ``fn`` by a counting wrapper in every loaded specedit module that holds it."""

    def counted(*args, **kwargs):
        counter[key(*args, **kwargs)] += 1
        return fn(*args, **kwargs)

    for name, mod in list(sys.modules.items()):
        if name.startswith("specedit") and getattr(mod, fn.__name__, None) is fn:
            monkeypatch.setattr(mod, fn.__name__, counted)


@pytest.fixture
def counts(monkeypatch):
    """``(reads, parses, diffs)``: instructions read (by text), texts parsed (by text,
    language) and pairs diffed into hunks (by old and new)."""
    reads, parses, diffs = Counter(), Counter(), Counter()
    _count(monkeypatch, intent_mod.read_intent, reads, lambda instruction, source: instruction)
    _count(monkeypatch, syntax.parse, parses, lambda text, lang: (text, lang))
    _count(monkeypatch, diff.compute_hunks, diffs, lambda old, new: (old, new))
    return reads, parses, diffs


def _rewrite(rules, instruction, text=TEXT, **opts):
    loaded = scripted_loaded(rules)
    opts = RewriteOptions(instruction=instruction, **{"verbatim": False, **opts})
    return rewrite(loaded, text, opts, path="m.py"), loaded.target.prompts


SEVEN = TEXT.replace("return x + 7\n", "return x * 7\n")

CASES = {
    # blocks that place and pass the checks: one stage
    "blocks": ([(BLOCKS, blocks_answer(block("    return x + 7\n", "    return x * 7\n")))], 1),
    # blocks that do not place: a repair round rewrites f7 whole, merged, checked again
    "round": (
        [
            (BLOCKS, blocks_answer(block("    return x plus 7\n", "    return x * 7\n"))),
            region_rule("f7", "def f7(x):\n    return x * 7\n"),
        ],
        2,
    ),
    # nothing to point a round at: the blocks asked again, then the whole file written out
    "fallback": (
        [
            (BLOCKS, blocks_answer(block("    return 7 plus x\n", "    return x * 7\n"))),
            (WHOLE, whole_answer(SEVEN)),
        ],
        3,
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_rewrite_reads_its_instruction_once_and_parses_each_text_once(counts, case):
    reads, parses, diffs = counts
    rules, stages = CASES[case]
    instruction = "Make the eighth function multiply." if case == "fallback" else "In f7, multiply."
    res, prompts = _rewrite(rules, instruction)
    assert res.status == "ok" and res.new_text == SEVEN and len(prompts) == stages
    assert reads == {instruction: 1}
    assert parses[(TEXT, "python")] == 1  # the file, however many stages read it
    assert max(parses.values()) == 1  # and each answer the checks read, once
    assert max(diffs.values()) == 1  # one Change per answer, whatever reads it


def test_a_whole_rewrite_asked_twice_still_reads_once(counts):
    """A broad change written whole, flagged, asked again: two whole answers checked."""
    reads, parses, diffs = counts
    instr = "Rename open_log to open_file everywhere."
    want = LOG.replace("open_log", "open_file")
    cut = want[: want.index("def flush_log")]
    res, prompts = _rewrite(
        [("The checks found:", whole_answer(want)), (WHOLE, whole_answer(cut))], instr, text=LOG
    )
    assert res.new_text == want and len(prompts) == 2
    assert reads == {instr: 1}
    assert parses[(LOG, "python")] == 1 and max(parses.values()) == 1
    assert max(diffs.values()) == 1


def test_a_round_shares_the_runs_lists_without_a_clone():
    """The repair round rewrites a definition on the run itself: the repairs it makes land
    in the result's labels once, and its stages in the figures."""
    res, prompts = _rewrite(
        [
            (BLOCKS, blocks_answer(block("    return x plus 7\n", "    return x * 7\n"))),
            region_rule("f7", "def f7(x):\n    return x * 7\n"),
        ],
        "In f7, multiply.",
    )
    s = res.stats.snapshot()
    assert REGION in prompts[1] and s["edit_repairs"] == ["widen"]
    assert len(s["stages"]) == 2 and res.first_answer is None
