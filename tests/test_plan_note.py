"""The model's plan of a change (app/edit/plan_note.py, ``RewriteOptions.first = "plan"``), with
a scripted model: the note is asked first, goes into the prompts beside the instruction,
never into the file, and the checks read the user's words alone."""

from __future__ import annotations

from scripted import scripted_loaded
from test_edit_modes import BLOCKS, block, blocks_answer
from toy import ToyModel

from specedit.app.edit.plan_note import _first_paragraph, with_note
from specedit.app.edit.prompts import PLAN_ASK, plan_prompt, rewrite_prompt
from specedit.app.edit.rewrite import rewrite
from specedit.app.options import RewriteOptions

TEXT = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12))
ASKED = PLAN_ASK.split(":")[0]  # a line only the plan prompt has


def run(rules, instruction, **opts):
    loaded = scripted_loaded(rules)
    opts = RewriteOptions(instruction=instruction, verbatim=False, first="plan", **opts)
    return rewrite(loaded, TEXT, opts, path="m.py"), loaded.target.prompts


def test_the_plan_prompt_shares_the_files_prefix():
    t = ToyModel(256)
    edit = rewrite_prompt(t, TEXT, "In f7, multiply.", path="m.py", edit="blocks")
    note = plan_prompt(t, TEXT, "In f7, multiply.", path="m.py")
    assert note.prefix_end == edit.prefix_end > 0
    assert note.ids[: note.prefix_end] == edit.ids[: edit.prefix_end]
    assert note.fence is None and PLAN_ASK in note.chat.messages[-1][1]


def test_the_note_is_its_first_paragraph_of_whole_sentences():
    assert _first_paragraph("In f7, use x * 7. Here's the updated code:\n```python\n") == (
        "In f7, use x * 7."
    )
    assert _first_paragraph("Return 0.0 when empty.\n\nThen g") == "Return 0.0 when empty."
    assert _first_paragraph("  cut by the token\nlimit") == "cut by the token limit"
    assert with_note("Do it.", "") == "Do it."
    assert with_note("Do it.", "In f, x.").endswith("(your own reading of it): In f, x.")


def test_the_note_goes_into_the_prompts_and_the_model_writes_the_change():
    want = TEXT.replace("return x + 7\n", "return x * 7\n")
    rules = [
        (ASKED, "In f7, return x * 7 instead of x + 7. Here is the code:\n"),
        (BLOCKS, blocks_answer(block("    return x + 7\n", "    return x * 7\n"))),
    ]
    res, prompts = run(rules, "f7 should multiply")
    assert res.status == "ok" and res.new_text == want and res.suspect is None
    assert len(prompts) == 2 and ASKED in prompts[0] and BLOCKS in prompts[1]
    note = "In f7, return x * 7 instead of x + 7."
    assert res.stats.snapshot()["plan_note"] == note
    assert "Instruction: f7 should multiply\nWhat must change" in prompts[1]
    assert note in prompts[1] and res.first_answer == want
    assert len(res.stats.stages) == 2  # the note is a stage of its own


def test_the_checks_read_the_users_instruction_not_the_note():
    """The note names f8 as well; a change to f8 is still outside what the user named."""
    rules = [
        (ASKED, "Change f7 and f8 to multiply."),
        (
            BLOCKS,
            blocks_answer(
                block("    return x + 7\n", "    return x * 7\n"),
                block("    return x + 8\n", "    return x * 8\n"),
            ),
        ),
    ]
    res, _ = run(rules, "In f7, multiply instead of adding.")
    assert res.suspect is not None and res.suspect.reason == "outside_named", res.suspect


def test_no_note_when_the_model_says_nothing():
    want = TEXT.replace("return x + 7\n", "return x * 7\n")
    res, prompts = run(
        [(BLOCKS, blocks_answer(block("    return x + 7\n", "    return x * 7\n")))],
        "In f7, multiply instead of adding.",
    )
    assert res.new_text == want and res.stats.snapshot()["plan_note"] == ""
    assert "What must change" not in prompts[-1]
