"""The edit modes of ``app.edit.rewrite`` with a scripted model: what the app does with answers.

The model does not matter here: ``ScriptedModel`` writes a given answer for each kind
of prompt, so each test pins down one path (blocks applied, fallback, no half-apply, a
big file's outline and windows).
"""

from __future__ import annotations

import pytest
from scripted import scripted_loaded

from specedit.app.edit import review as review_mod
from specedit.app.edit.edits import FORMAT
from specedit.app.edit.prompts import LOCATE
from specedit.app.edit.request import BROAD_LINES, read_request
from specedit.app.edit.rewrite import first_prompt, rewrite, warm
from specedit.app.edit.stages import BLOCKS_MARGIN, BLOCKS_SHARE
from specedit.app.options import RewriteOptions
from specedit.app.store.files import DoesNotFit
from specedit.bench.edit_tasks import EDIT_TASKS, FEW_LINES

BLOCKS = FORMAT.splitlines()[0]  # a line only a blocks prompt has
WHOLE = "Instruction:"  # every rewrite prompt has it: the rule after the others

TEXT = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12))
WANT = TEXT.replace("return x + 7\n", "return x * 7\n")


def block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def blocks_answer(*blocks: str) -> str:
    body = "".join(blocks)
    assert body.startswith("<<<<<<< SEARCH\n")
    return "```python\n" + body + "```\n"


def whole_answer(text: str) -> str:
    return "```python\n" + text + "```\n"


# names no definition: no repair round (app/edit/rounds.py) comes before the whole rewrite
UNNAMED = "Make the eighth function multiply."


def run(rules, text=TEXT, n_ctx=1 << 16, on_text=None, **opts):
    """Rewrite ``text`` with a model scripted by ``rules``. The answers are taken as written:
    without the search guard (``app.edit.search_guard``, on by default), as a remote engine or
    ``--no-verbatim`` takes them; ``tests/test_search_guard.py`` runs the guard."""
    loaded = scripted_loaded(rules, n_ctx)
    opts.setdefault("instruction", "Make f7 multiply.")
    opts.setdefault("verbatim", False)
    res = rewrite(loaded, text, RewriteOptions(**opts), path="m.py", on_text=on_text)
    return res, loaded.target.prompts


def test_blocks_change_only_the_lines_they_name():
    streamed = []
    res, prompts = run(
        [(BLOCKS, blocks_answer(block("    return x + 7\n", "    return x * 7\n")))],
        on_text=streamed.append,
    )
    assert res.status == "ok" and res.new_text == WANT and res.edit_mode == "blocks"
    assert [(h.start_line, h.end_line) for h in res.hunks] == [(29, 30)]
    s = res.stats.snapshot()
    assert s["edit_mode"] == "blocks" and not s["edit_fallback"] and s["given_up"] == ""
    assert s["file_tokens"] == len(TEXT) and s["generated_tokens"] < 80
    assert len(prompts) == 1 and BLOCKS in prompts[0]
    # live views get the stream a whole rewrite would have sent: the new text, then the fence
    assert "".join(streamed) == WANT + "```\n"


def test_the_blocks_prompt_shares_the_whole_prompts_prefix_through_the_file():
    loaded = scripted_loaded([])
    t = loaded.target
    opts = RewriteOptions(instruction="x")
    prompt, keep = first_prompt(loaded, TEXT, opts, "m.py")
    text = bytes(prompt.ids[:keep]).decode()
    assert text.endswith(TEXT) and FORMAT not in text
    warm(loaded, TEXT, path="m.py")
    assert t.cache_tokens == list(prompt.ids[:keep])
    res = rewrite(loaded, TEXT, opts, path="m.py")  # no rule: EOS, then the fallback
    assert res.metrics.cached_tokens >= 2 * keep  # both stages read the file from the cache


def test_blocks_that_do_not_apply_fall_back_to_the_whole_file_and_count_both_stages():
    res, prompts = run(
        [
            (BLOCKS, blocks_answer(block("    yield from nowhere\n", "    return x * 7\n"))),
            (WHOLE, whole_answer(WANT)),
        ],
        instruction=UNNAMED,
    )
    assert res.status == "ok" and res.new_text == WANT and res.edit_mode == "whole"
    s = res.stats.snapshot()
    assert "not in the file" in s["edit_fallback"]
    assert s["given_up"] == f"blocks given up: {s['edit_fallback']}"  # what displays show
    # the blocks, the blocks again told why (the same wrong answer), then the whole file
    assert len(prompts) == 3 and BLOCKS in prompts[0] and BLOCKS not in prompts[2]
    assert "Your blocks could not be applied: block 1 of 1 cannot be placed" in prompts[1]
    assert "yield from nowhere" in prompts[1].split("Instruction:")[0]  # the first answer
    assert s["edit_repairs"] == []
    # every answer counts: both blocks answers and the whole file
    assert s["generated_tokens"] > len(WANT) + 80 and s["target_calls"] >= 3


def test_blocks_asked_again_with_why_they_failed_apply_without_a_whole_rewrite():
    """No definition named, none like the failed SEARCH side: the blocks once more, with
    the first answer and the reason; the second answer places, so no whole rewrite."""
    res, prompts = run(
        [
            (
                "Your blocks could not be applied",
                blocks_answer(block("    return x + 7\n", "    return x * 7\n")),
            ),
            (BLOCKS, blocks_answer(block("    yield from nowhere\n", "    return x * 7\n"))),
            (WHOLE, whole_answer(TEXT)),  # never asked
        ],
        instruction=UNNAMED,
    )
    assert res.status == "ok" and res.new_text == WANT and res.edit_mode == "blocks"
    s = res.stats.snapshot()
    assert s["edit_repairs"] == ["retry"] and "not in the file" in s["edit_fallback"]
    assert len(prompts) == 2 and "Copy the SEARCH lines exactly" in prompts[1]
    # the retry read only what follows the file: the file came from the cache
    assert s["cached_tokens"] >= len(TEXT)
    # "--edit blocks" asks once and says why
    res, prompts = run(
        [(BLOCKS, blocks_answer(block("    yield from nowhere\n", "    return x * 7\n")))],
        instruction=UNNAMED,
        edit="blocks",
    )
    assert res.status == "no_output" and len(prompts) == 1


def test_an_addition_written_on_both_sides_is_asked_again_with_how_to_add():
    """The 1.5B's answers to md-release-item and sh-no-privileges (held-out): the new line
    on both sides of the block, which is not in the file; the retry says how to add."""
    added = "GREETING = 'hello, world'\n"
    last = "def f11(x):\n    return x + 11\n"
    want = TEXT.replace(last, last + "\n\n" + added)
    res, prompts = run(
        [
            ("Your blocks could not be applied", blocks_answer(block(last, last + "\n\n" + added))),
            (BLOCKS, blocks_answer(block(added, "\n" + added))),
        ],
        instruction="Add a constant GREETING at the end.",
    )
    assert res.status == "ok" and res.new_text == want and len(prompts) == 2
    assert "To add lines, the SEARCH side is the line of the file just before" in prompts[-1]
    assert res.stats.snapshot()["edit_repairs"] == ["retry"]


@pytest.mark.parametrize(
    "answer, why",
    [
        (block("    return x + 7\n", "    return x * 7\n")[:-20], "stopped"),  # no end
        (block("    return x +\n", "x\n") + "Done.\n", "outside a block"),
        (block("\n", "x\n"), "SEARCH side is empty"),
        (block("    return x + 7\n", "    return x + 7\n"), "change nothing"),
    ],
)
def test_forced_blocks_never_half_apply_and_say_why(answer, why):
    if why == "stopped":
        text = "```python\n" + answer  # the model stops (EOS) inside a block
    else:
        text = "```python\n" + answer + "```\n"
    res, _ = run([(BLOCKS, text)], edit="blocks")
    if why == "change nothing":
        assert res.status == "ok" and res.new_text == TEXT and res.suspect.reason == "unchanged"
        assert res.message == "the answer changes nothing in the file"
        return
    assert res.new_text is None and res.diff == "" and res.status in ("no_output", "truncated")
    assert why in res.message or res.status == "truncated"


def test_one_good_and_one_bad_block_apply_nothing():
    answer = blocks_answer(
        block("    return x + 7\n", "    return x * 7\n"), block("nowhere\n", "x\n")
    )
    res, _ = run([(BLOCKS, answer)], edit="blocks")
    assert res.status == "no_output" and res.new_text is None and not res.hunks
    assert "block 2 of 2" in res.message and "--edit whole" in res.message


def test_edit_whole_and_a_region_write_the_text_out():
    res, prompts = run([(BLOCKS, "x"), (WHOLE, whole_answer(WANT))], edit="whole")
    assert res.new_text == WANT and res.edit_mode == "whole" and BLOCKS not in prompts[0]
    region_answer = whole_answer("def f7(x):\n    return x * 7\n")
    res, prompts = run([(WHOLE, region_answer)], region=(28, 30))
    assert res.new_text == WANT and res.edit_mode == "whole" and len(prompts) == 1


def test_a_file_with_marker_lines_is_rewritten_whole():
    text = TEXT + "# =======\n=======\n"
    res, prompts = run([(WHOLE, whole_answer(text.replace("x + 7", "x * 7")))], text=text)
    assert res.edit_mode == "whole" and res.status == "ok" and BLOCKS not in prompts[0]


# ---- broad changes: a whole rewrite at once ---------------------------------------------


def broad(instruction: str, text: str, path: str) -> str:
    """Why ``auto`` writes ``text`` whole at once as ``instruction`` asks (``Request.broad``)."""
    return read_request(RewriteOptions(instruction=instruction), text, path).broad


USES = "".join(f"def g{i}(total):\n    return total + {i}\n\n\n" for i in range(6))


@pytest.mark.parametrize(
    "instruction, why",
    [
        ("Rename the class Chunk to RiffChunk everywhere.", "'everywhere'"),
        ("Rename the parameter dir_fd to dirfd in every function.", "'every function'"),
        ("Use f-strings throughout.", "'throughout'"),
        ("Replace all the calls to print with log.info.", "'all the calls'"),
        ("Reformat the whole file.", "'whole file'"),
        ("rename total to acc", "on 12 lines"),
        ("add type hints", "type hints"),
        ("Add docstrings.", "docstrings"),
        # a few places: blocks
        ("In g3, rename total to acc.", ""),  # it names a definition
        ("Add type hints to g2.", ""),
        ("rename g4 to h4", ""),  # on 1 line
        ("Fix the bug: g1 must return all items.", ""),  # "all" without what
        ("Change the default of g0 from 1 to 2.", ""),
    ],
)
def test_broad_names_changes_that_reach_across_the_file(instruction, why):
    assert USES.count("total") == 2 * 6 >= BROAD_LINES  # on 12 lines
    got = broad(instruction, USES, "m.py")
    assert (why in got and got) if why else got == ""


def test_the_edit_suite_routes_its_broad_tasks_whole_and_its_few_line_tasks_to_blocks():
    for t in EDIT_TASKS:
        if t.kind == "broad":
            assert broad(t.instruction, t.source(), t.file), t.name
        elif t.kind in FEW_LINES:
            assert broad(t.instruction, t.source(), t.file) == "", t.name


def test_a_broad_change_is_written_whole_at_once_under_auto_and_says_why():
    want = USES.replace("total", "acc")
    more = "Rename total to acc everywhere and make g0 return 0."
    res, prompts = run([(BLOCKS, "x"), (WHOLE, whole_answer(want))], text=USES, instruction=more)
    assert res.status == "ok" and res.new_text == want and res.edit_mode == "whole"
    s = res.stats.snapshot()
    assert "'everywhere'" in s["edit_reason"] and not s["edit_fallback"]
    assert len(prompts) == 1 and BLOCKS not in prompts[0]
    # --edit blocks still writes blocks; --edit whole says no reason
    b = block("def g0(total):\n    return total + 0\n", "def g0(acc):\n    return acc + 0\n")
    res, prompts = run(
        [(BLOCKS, blocks_answer(b))],
        text=USES,
        edit="blocks",
        instruction="Rename total to acc everywhere.",
    )
    assert res.edit_mode == "blocks" and BLOCKS in prompts[0]
    res, _ = run(
        [(WHOLE, whole_answer(want))],
        text=USES,
        edit="whole",
        instruction="Rename total to acc everywhere.",
    )
    assert res.stats.snapshot()["edit_reason"] == ""


@pytest.mark.parametrize(
    "instruction",
    [
        "Rename total to acc everywhere.",
        "In g3, rename the local variable total to acc.",
        "In g3, change 3 from 3 to 30.",
        "Add x = 1 after def g3(total):",
    ],
)
def test_every_edit_under_auto_is_the_models_answer(instruction):
    """Renames, values and additions stated in full go to the model like any instruction:
    the result is its answer, placed and checked, never one the program wrote from the
    words (a rename, a value or a line the answer did not make is not made for it)."""
    want = USES.replace("return total + 3", "return total + 4")
    answer = blocks_answer(block("    return total + 3\n", "    return total + 4\n"))
    rules = [(BLOCKS, answer), (WHOLE, whole_answer(want))]
    res, prompts = run(rules, text=USES, instruction=instruction)
    assert prompts and res.new_text == want
    assert res.stats.snapshot()["generated_tokens"] > 0


def test_a_rename_the_answer_left_half_done_is_flagged_not_finished():
    """The answer renamed total on one line of g3 only: the result is that answer, and the
    check says where the old name is still used; under auto the round asks the model
    again with that note (here it answers the same)."""
    half = USES.replace("def g3(total):", "def g3(acc):")
    res, prompts = run(
        [
            (BLOCKS, blocks_answer(block("def g3(total):\n", "def g3(acc):\n"))),
            (WHOLE, whole_answer("def g3(acc):\n    return total + 3\n")),
        ],
        text=USES,
        instruction="In g3, rename the local variable total to acc.",
    )
    assert res.new_text == half and res.suspect is not None
    assert res.suspect.reason in ("rename_left", "unbound")
    assert "The checks found:" in prompts[-1] and "total" in prompts[-1]


def test_a_blocks_answer_under_auto_stops_at_half_the_file_then_falls_back():
    # a model that copies the whole file into one block: cut at its share, then whole
    endless = "```python\n<<<<<<< SEARCH\n" + TEXT * 3
    res, prompts = run([(BLOCKS, endless), (WHOLE, whole_answer(WANT))], instruction=UNNAMED)
    assert res.status == "ok" and res.new_text == WANT and len(prompts) == 2
    first = res.stats.snapshot()["generated_tokens"] - len(whole_answer(WANT))
    assert first <= int(len(TEXT) * BLOCKS_SHARE) + BLOCKS_MARGIN + 8
    assert "output limit" in res.stats.snapshot()["edit_fallback"]


def test_a_blocks_answer_that_cannot_be_mended_stops_at_once_then_falls_back():
    # the 0.5B's loop: a new ======= where >>>>>>> REPLACE belongs, over and over
    loop = "    return x + 7\n=======\n\n    return x * 7\n" * 200
    opening = "```python\n<<<<<<< SEARCH\n"
    res, prompts = run([(BLOCKS, opening + loop), (WHOLE, whole_answer(WANT))], instruction=UNNAMED)
    assert res.status == "ok" and res.new_text == WANT and len(prompts) == 2
    s = res.stats.snapshot()
    assert "without its >>>>>>> REPLACE line" in s["edit_fallback"]
    assert s["generated_tokens"] - len(whole_answer(WANT)) < 120  # stopped at the second =======
    res, _ = run([(BLOCKS, opening + loop)], edit="blocks")
    assert res.status == "no_output" and "without its >>>>>>> REPLACE line" in res.message


# ---- a file too long for the context ----------------------------------------------------

BIG = "".join(
    f"def f{i}(x):\n    '''Add {i}.'''\n    y = x + {i}\n    return y\n\n\n" for i in range(200)
)
BIG_WANT = BIG.replace("    y = x + 77\n", "    y = x + 78\n")
BIG_CTX = 12288  # the outline fits; the whole file does not, even for a region
F77 = BIG.index("def f77(")
F77_LINE = BIG[:F77].count("\n")  # 0-based


def test_a_big_file_is_located_then_edited_inside_the_window():
    n_ctx = BIG_CTX
    assert 2 * len(BIG) > n_ctx  # the whole file and its copy do not fit
    located = f"```\n{F77_LINE + 1}-{F77_LINE + 4}: def f77(x):\n```\n"
    # "    y = x + 77" also reads as the prefix of nothing else, but "    return y" is
    # everywhere: only the window around f77 may take it
    b = block("    y = x + 77\n    return y\n", "    y = x + 78\n    return y\n")
    res, prompts = run(
        [(LOCATE, located), (BLOCKS, blocks_answer(b))],
        text=BIG,
        n_ctx=n_ctx,
        instruction="In f77 add 78 instead of 77.",
    )
    assert res.status == "ok" and res.new_text == BIG_WANT, res.message
    assert res.edit_mode == "locate+blocks"
    assert len(prompts) == 2 and LOCATE in prompts[0]
    # both prompts show the outline, not the file; the second one shows f77's lines
    assert "def f199(x):" in prompts[0] and "'''Add 199.'''" not in prompts[0]
    assert "'''Add 77.'''" in prompts[1] and "'''Add 76.'''" not in prompts[1]
    s = res.stats.snapshot()
    assert s["file_tokens"] == len(BIG) and s["generated_tokens"] < 200


F77_RIGHT = "def f77(x):\n    '''Add 77.'''\n    y = x + 78\n    return y\n"
F77_AS_IS = "def f77(x):\n    '''Add 77.'''\n    y = x + 77\n    return y\n"


def test_a_big_file_is_not_reviewed_and_keeps_its_result(monkeypatch):
    """The review shows the whole file: one that does not fit is not reviewed, and the
    result stands (it once raised "context full" and lost the edit)."""
    monkeypatch.setitem(review_mod.THRESHOLDS, "scripted", 0.0)
    located = f"```\n{F77_LINE + 1}-{F77_LINE + 4}: def f77(x):\n```\n"
    b = block("    y = x + 77\n    return y\n", "    y = x + 78\n    return y\n")
    res, _ = run(
        [("Does this change do", "no"), (LOCATE, located), (BLOCKS, blocks_answer(b))],
        text=BIG,
        n_ctx=BIG_CTX,
        instruction="In f77 add 78 instead of 77.",
    )
    assert res.status == "ok" and res.new_text == BIG_WANT and res.review is None
    assert res.suspect is None


def test_a_big_file_falls_back_to_rewriting_the_located_lines():
    located = f"```\n{F77_LINE + 1}-{F77_LINE + 4}: def f77(x):\n```\n"
    res, prompts = run(
        [
            (LOCATE, located),
            (BLOCKS, blocks_answer(block("    y = x + 1000\n", "    y = 0\n"))),
            ("Rewrite only lines", whole_answer(F77_RIGHT)),
        ],
        text=BIG,
        n_ctx=BIG_CTX,
        instruction="In f77 add 78 instead of 77.",
    )
    assert res.status == "ok" and res.new_text == BIG_WANT and res.edit_mode == "locate+whole"
    s = res.stats.snapshot()
    assert "not in the file" in s["edit_fallback"] and len(prompts) == 3
    assert "Add 76." not in prompts[2]  # the located definition alone, no window
    assert s["file_tokens"] == len(BIG) and s["edit_repairs"] == []


def test_a_region_written_back_unchanged_is_flagged_not_changed():
    """The model writes a region of a big file back unchanged: the result changes nothing,
    which is the first verdict, and the value check says that no line that held 77 holds 78
    (the program does not set it)."""
    region = (F77_LINE, F77_LINE + 4)
    res, prompts = run(
        [("Rewrite only lines", whole_answer(F77_AS_IS))],
        text=BIG,
        n_ctx=BIG_CTX,
        region=region,
        instruction="In f77 change 77 to 78.",
    )
    assert res.status == "ok" and res.new_text == BIG and len(prompts) == 1
    assert [v.reason for v in res.verdicts] == ["unchanged", "value_missed"]
    assert res.stats.snapshot()["edit_repairs"] == []


def test_a_big_file_never_rewrites_a_long_located_span_whole():
    f150 = BIG[: BIG.index("def f150(")].count("\n")
    located = f"```\n{F77_LINE + 1}-{F77_LINE + 4}: x\n{f150 + 1}-{f150 + 4}: y\n```\n"
    res, prompts = run(
        [
            (LOCATE, located),
            (BLOCKS, blocks_answer(block("    y = x + 1000\n", "    y = 0\n"))),
            ("Rewrite only lines", whole_answer("never asked for\n")),
        ],
        text=BIG,
        n_ctx=BIG_CTX,
    )
    assert res.status == "no_output" and res.new_text is None and len(prompts) == 2
    assert f"lines {F77_LINE + 1}:{f150 + 4} of m.py" in res.message and "--lines" in res.message


def test_a_region_of_a_big_file_fits_with_a_window_and_the_outline():
    region = (F77_LINE, F77_LINE + 4)
    new_f77 = "def f77(x):\n    '''Add 77.'''\n    y = x + 78\n    return y\n"
    res, prompts = run(
        [("Rewrite only lines", whole_answer(new_f77))],
        text=BIG,
        n_ctx=BIG_CTX,
        region=region,
    )
    assert res.status == "ok" and res.new_text == BIG_WANT and res.edit_mode == "whole"
    p = prompts[0]
    assert "def f0(x):" in p and "def f199(x):" in p  # the outline
    assert "'''Add 73.'''" in p and "'''Add 81.'''" in p  # the window around the region
    assert "'''Add 10.'''" not in p and len(p) < BIG_CTX


def test_a_big_file_names_the_real_numbers_and_the_fix():
    with pytest.raises(DoesNotFit) as e:
        run([], text=BIG, n_ctx=BIG_CTX, edit="whole")
    msg = str(e.value)
    assert f"m.py is {len(BIG):,} tokens" in msg and "12,288-token context" in msg
    assert "--edit auto" in msg and "--lines" in msg
    # a region too big for the context: the region's own numbers, and what to do
    with pytest.raises(DoesNotFit) as e:
        run([], text=BIG, n_ctx=BIG_CTX, region=(0, 1000))
    msg = str(e.value)
    assert "lines 1:1000 of m.py is" in msg and "smaller region" in msg


def test_nothing_located_changes_nothing():
    res, _ = run([(LOCATE, "```\nno idea\n```\n")], text=BIG, n_ctx=BIG_CTX)
    assert res.status == "no_output" and res.new_text is None
    assert "could not tell where" in res.message


def test_a_warm_up_of_a_big_file_reads_its_outline():
    loaded = scripted_loaded([], BIG_CTX)
    w = warm(loaded, BIG, path="m.py")
    assert w.status == "done" and w.prefix_tokens < BIG_CTX
    held = bytes(t for t in loaded.target.cache_tokens if t < 256).decode()
    assert "def f199(x):" in held and "Add 199." not in held


def test_a_broad_change_to_a_big_file_is_located_not_refused():
    res, prompts = run(
        [(LOCATE, "```\nno idea\n```\n")],
        text=BIG,
        n_ctx=BIG_CTX,
        instruction="Rename x to value everywhere and make f0 return 0.",
    )
    assert res.status == "no_output" and LOCATE in prompts[0]
    assert res.stats.snapshot()["edit_reason"] == ""
