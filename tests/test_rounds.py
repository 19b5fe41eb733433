"""The repair round (app/edit/rounds.py) and the repairs on a rewrite's answer, with a scripted
model: what the app does when blocks do not place, a site is missed, or a copy is off."""

from __future__ import annotations

from scripted import scripted_loaded
from test_edit_modes import BLOCKS, WHOLE, block, blocks_answer, whole_answer

from specedit.app.edit.rewrite import rewrite
from specedit.app.options import RewriteOptions

REGION = "Rewrite only this part of it and output only the rewritten part:\n```python\n"

TEXT = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12))


def region_rule(name: str, new_body: str) -> tuple[str, str]:
    """The model's answer to a repair round's prompt for definition ``name``."""
    return REGION + f"def {name}(x):", whole_answer(new_body)


def run(rules, instruction, text=TEXT, **opts):
    """The scripted answers as written, without the search guard (``tests/test_edit_modes``'
    ``run``)."""
    loaded = scripted_loaded(rules)
    opts = RewriteOptions(instruction=instruction, **{"verbatim": False, **opts})
    res = rewrite(loaded, text, opts, path="m.py")
    return res, loaded.target.prompts


def test_blocks_that_do_not_place_are_redone_on_the_named_definition_only():
    want = TEXT.replace("return x + 7\n", "return x * 7\n")
    res, prompts = run(
        [
            (BLOCKS, blocks_answer(block("    return x plus 7\n", "    return x * 7\n"))),
            region_rule("f7", "def f7(x):\n    return x * 7\n"),
            (WHOLE, whole_answer(want)),  # never asked
        ],
        "In f7, multiply instead of adding.",
    )
    assert res.status == "ok" and res.new_text == want and res.suspect is None
    s = res.stats.snapshot()
    assert s["edit_mode"] == "blocks" and "cannot be placed" in s["edit_fallback"]
    assert s["edit_repairs"] == ["widen"]
    assert len(prompts) == 2 and REGION in prompts[1] and "def f7(x):" in prompts[1]
    # where the wait went: one generation per prompt, each with its tokens; the answers'
    # reading (repairs, checks) timed apart, the round's included
    assert [st["tokens"] > 0 for st in s["stages"]] == [True, True]
    assert sum(st["tokens"] for st in s["stages"]) == s["generated_tokens"]
    assert s["checks_s"] > 0


def test_a_second_site_the_blocks_missed_gets_a_round_of_its_own():
    want = TEXT.replace("return x + 3\n", "return x * 3\n").replace(
        "return x + 9\n", "return x * 9\n"
    )
    res, prompts = run(
        [
            (BLOCKS, blocks_answer(block("    return x + 3\n", "    return x * 3\n"))),
            region_rule("f9", "def f9(x):\n    return x * 9\n"),
        ],
        "In f3 and in f9, multiply instead of adding.",
    )
    assert res.new_text == want and res.suspect is None
    assert res.stats.snapshot()["edit_repairs"] == ["widen"]
    assert len(prompts) == 2 and "def f9(x):" in prompts[1].split(REGION)[1]


def test_a_round_that_does_no_better_leaves_the_first_answer_flagged():
    """The round on f9 is told what the checks saw; its answer changes nothing, so the
    first answer stays, flagged."""
    one = TEXT.replace("return x + 3\n", "return x * 3\n")
    res, prompts = run(
        [
            (BLOCKS, blocks_answer(block("    return x + 3\n", "    return x * 3\n"))),
            region_rule("f9", "def f9(x):\n    return x + 9\n"),  # no change again
        ],
        "In f3 and in f9, multiply instead of adding.",
    )
    assert res.new_text == one and res.suspect is not None
    assert res.suspect.reason == "site_missed" and "f9 is not changed" in res.suspect.message
    assert res.to_json()["verdicts"][0]["reason"] == "site_missed"
    assert len(prompts) == 2 and "The checks found: f9 is not changed" in prompts[1]


def test_without_a_named_definition_a_failed_answer_is_redone_where_it_points():
    want = TEXT.replace("return x + 5\n", "return x - 5\n")
    res, prompts = run(
        [
            # a paraphrased search side: placed nowhere, but most like f5's line
            (BLOCKS, blocks_answer(block("    return (x + 5)\n", "    return x - 5\n"))),
            region_rule("f5", "def f5(x):\n    return x - 5\n"),
        ],
        "Subtract five instead of adding it.",
    )
    assert res.new_text == want and res.stats.snapshot()["edit_repairs"] == ["widen"]
    assert len(prompts) == 2


def test_nothing_to_point_at_falls_back_to_the_whole_file():
    want = TEXT.replace("return x + 5\n", "return x - 5\n")
    res, prompts = run(
        [
            (BLOCKS, blocks_answer(block("    nothing like the file\n", "    x\n"))),
            (WHOLE, whole_answer(want)),
        ],
        "Subtract five instead of adding it.",
    )
    assert res.new_text == want and res.edit_mode == "whole"
    # no definition to rewrite: the blocks once more, told why, then the whole file
    assert len(prompts) == 3 and REGION not in prompts[1] + prompts[2]
    assert "Your blocks could not be applied" in prompts[1]


LOG = (
    'def open_log(path, mode="a",\n             bufsize=-1):\n    return open(path, mode)\n'
    "\n\ndef close_log(f):\n    f.close()\n\n\ndef flush_log(f):\n    f.flush()\n"
)


def test_a_whole_answer_with_a_collapsed_indent_and_no_tail_is_flagged_not_mended():
    """Forced whole: the mis-copied indent is put back (fidelity), the dropped tail is not
    (the program cannot know it was not asked): the result is flagged."""
    want = LOG.replace('mode="a"', 'mode="w"')
    bad = want.replace("             bufsize", " bufsize")
    bad = bad[: bad.index("def flush_log")]
    res, prompts = run(
        [(WHOLE, whole_answer(bad))],
        'Change the default mode of open_log from "a" to "w".',
        text=LOG,
        edit="whole",
    )
    assert res.new_text == want[: want.index("def flush_log")] and len(prompts) == 1
    assert res.suspect is not None and res.suspect.reason == "drops_tail"
    assert res.stats.snapshot()["edit_repairs"] == ["copies"]
    assert res.first_answer == bad


def test_a_flagged_whole_answer_under_auto_is_asked_again_with_what_the_checks_saw():
    """A broad change written whole under auto drops the file's tail: the model is asked
    once more, told which lines are gone, and its second answer is the result."""
    instr = "Rename open_log to open_file everywhere."
    want = LOG.replace("open_log", "open_file")
    cut = want[: want.index("def flush_log")]
    res, prompts = run(
        [("The checks found:", whole_answer(want)), (WHOLE, whole_answer(cut))],
        instr,
        text=LOG,
    )
    assert res.new_text == want and res.suspect is None and len(prompts) == 2
    assert "lines 10-11, the end of the file, are deleted" in prompts[1]
    assert res.stats.snapshot()["edit_repairs"] == ["again"]
    assert res.first_answer == cut


def test_forced_blocks_get_no_round():
    res, prompts = run(
        [
            (BLOCKS, blocks_answer(block("    return x plus 7\n", "    return x * 7\n"))),
            region_rule("f7", "def f7(x):\n    return x * 7\n"),
        ],
        "In f7, multiply instead of adding.",
        edit="blocks",
    )
    assert res.status == "no_output" and len(prompts) == 1


def test_a_parameter_added_and_not_used_is_redone_in_the_function_that_got_it():
    """Nothing names a definition ("the helper"), so the round goes where the first answer
    changed the code: the function it gave the unused parameter."""
    want = TEXT.replace("def f4(x):\n    return x + 4\n", "def f4(x, k=1):\n    return x + 4 * k\n")
    half = TEXT.replace("def f4(x):\n", "def f4(x, k=1):\n")
    res, prompts = run(
        [
            (BLOCKS, blocks_answer(block("def f4(x):\n", "def f4(x, k=1):\n"))),
            (REGION + "def f4(x):", whole_answer("def f4(x, k=1):\n    return x + 4 * k\n")),
        ],
        "Give the helper that adds 4 a parameter k=1 and multiply the 4 by k.",
    )
    assert res.new_text == want and res.suspect is None, res.suspect
    assert res.stats.snapshot()["edit_repairs"] == ["widen"]
    assert len(prompts) == 2 and "def f4(x):" in prompts[1].split(REGION)[1]
    # the same first answer with no round to run (blocks asked for): flagged, not written
    res, _ = run(
        [(BLOCKS, blocks_answer(block("def f4(x):\n", "def f4(x, k=1):\n")))],
        "Give the helper that adds 4 a parameter k=1 and multiply the 4 by k.",
        edit="blocks",
    )
    assert res.new_text == half and res.suspect.reason == "param_unused"


def test_a_parameter_to_pass_on_is_redone_where_it_was_added_not_where_it_goes():
    """code-interact-filename's shape: "add k to f4 and pass it to f5" names both; the
    first answer added k to f4 only, so the round rewrites f4, not f5 as well (the 1.5B's
    round over both definitions took 55 s, mostly copying the one it did not need)."""
    want = TEXT.replace("def f4(x):\n    return x + 4\n", "def f4(x, k=1):\n    return f5(x * k)\n")
    res, prompts = run(
        [
            (BLOCKS, blocks_answer(block("def f4(x):\n", "def f4(x, k=1):\n"))),
            (REGION + "def f4(x):", whole_answer("def f4(x, k=1):\n    return f5(x * k)\n")),
            # a round on f5 (not asked of it) would bring back a copy that drifted
            (REGION + "def f5(x):", whole_answer("def f5(x):\n    return 5 + x\n")),
        ],
        "Add a parameter k=1 to f4, and pass x times it to f5 in place of its body.",
    )
    # (``f5(k)`` alone would leave x unread: ``param_dropped`` flags that, and the round's
    # result would lose the tie with the first answer's one verdict)
    assert res.new_text == want and res.suspect is None, res.suspect
    assert res.stats.snapshot()["edit_repairs"] == ["widen"]
    assert not any(p.split(REGION)[1].startswith("def f5(x):") for p in prompts if REGION in p)


def test_region_first_rewrites_the_named_definition_as_the_first_answer():
    """``RewriteOptions.first = "region"``: an instruction that names f7 gets f7 rewritten
    whole as the first answer (no blocks asked); one that names nothing gets blocks."""
    want = TEXT.replace("return x + 7\n", "return x * 7\n")
    rules = [
        region_rule("f7", "def f7(x):\n    return x * 7\n"),
        (BLOCKS, blocks_answer(block("    return x + 5\n", "    return x - 5\n"))),
    ]
    res, prompts = run(rules, "In f7, multiply instead of adding.", first="region")
    assert res.new_text == want and res.edit_mode == "region" and res.suspect is None
    assert len(prompts) == 1 and REGION in prompts[0] and BLOCKS not in prompts[0]
    assert res.first_answer == want and res.stats.snapshot()["edit_repairs"] == []
    res, prompts = run(rules, "Subtract five instead of adding it.", first="region")
    assert res.edit_mode == "blocks" and BLOCKS in prompts[0]
    assert res.new_text == TEXT.replace("return x + 5\n", "return x - 5\n")


def test_a_change_made_elsewhere_than_the_place_is_redone_there_and_not_kept():
    """ "f7: …" opens with where; the first answer changes f3 instead (``place_missed``): the
    round rewrites f7, and the result keeps none of the change made in f3."""
    want = TEXT.replace("return x + 7\n", "return x * 7\n")
    res, prompts = run(
        [
            (BLOCKS, blocks_answer(block("    return x + 3\n", "    return x * 3\n"))),
            region_rule("f7", "def f7(x):\n    return x * 7\n"),
        ],
        "f7: multiply instead of adding",
    )
    assert res.status == "ok" and res.new_text == want and res.suspect is None
    assert "the instruction opens with f7, and the result changes nothing in it" in prompts[-1]
