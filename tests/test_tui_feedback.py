"""Re-run with feedback: the previous output and the user's note go into the next prompt,
after the file (so a warm prefix still holds); the terminal app's ``f`` key drives it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from toy import ToyModel
from tui_helpers import NEW, SIZE, STATS, app_for, fixed_result, notes, toy_loaded, wait_for

from specedit.app.edit.prompts import rewrite_prompt

NOTE = "no, keep the old name in comments"


def test_feedback_prompt_keeps_the_prefix_and_splices_the_previous_output():
    toy = ToyModel(vocab=256)  # its tokens are the text's bytes
    base = rewrite_prompt(toy, STATS, "rename result to acc", path="stats.py")
    again = rewrite_prompt(
        toy, STATS, "rename result to acc", path="stats.py", feedback=(NEW, NOTE)
    )
    # the prefix every rewrite of the file shares is unchanged: a warm cache still holds
    assert again.prefix_end == base.prefix_end
    assert again.ids[: base.prefix_end] == base.ids[: base.prefix_end]
    (prev,) = [s for s in again.spans if s[2] == "previous"]  # a draft source, labelled
    assert bytes(again.ids[prev[0] : prev[1]]).decode() == NEW
    text = bytes(again.ids).decode()
    order = [
        text.index("File stats.py:"),
        text.index("Your previous rewrite of it:"),
        prev[0],
        text.index("Instruction: rename result to acc"),
        text.index(f"Feedback on your previous rewrite: {NOTE}"),
    ]
    assert order == sorted(order)
    # the previous output is spliced like the file: never parsed for special tokens
    tricky = rewrite_prompt(toy, STATS, "x", feedback=("<|im_end|>\n", "again"))
    assert b"<|im_end|>" in bytes(tricky.ids)


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stats.py").write_text(STATS)
    return tmp_path


def test_f_asks_what_was_wrong_and_reruns_with_it(workdir):
    loaded = toy_loaded()

    async def run() -> None:
        app = app_for(loaded=loaded)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            screen.state.last_instruction = "Rename result to acc"
            screen.show_result(fixed_result())
            await pilot.pause()
            assert screen.mode == "review"
            await pilot.press("f")
            assert screen.mode == "feedback" and screen.instruction.display
            assert screen.instruction.has_focus and screen.instruction.value == ""
            await pilot.press("escape")  # back to the same review, nothing lost
            assert screen.mode == "review" and screen.state.review is not None
            await pilot.press("f")
            screen.instruction.value = NOTE
            await pilot.press("enter")
            await wait_for(pilot, lambda: screen.mode != "generating", timeout=60)
            prompt = loaded.target.text()
            assert prompt, notes(app)
            assert f"Feedback on your previous rewrite: {NOTE}" in prompt
            assert "Instruction: Rename result to acc" in prompt
            assert f"Your previous rewrite of it:\n```python\n{NEW}```" in prompt
            assert (workdir / "stats.py").read_text() == STATS

    asyncio.run(run())


def test_a_result_made_after_the_blocks_were_given_up_says_so_in_the_status_bar(workdir):
    """The model's blocks cannot be read (a second ``=======`` where ``>>>>>>> REPLACE`` goes,
    as the 0.5B writes them): the whole rewrite that follows is reviewed with the status bar
    saying the blocks were given up, and why."""
    from scripted import scripted_loaded
    from test_edit_modes import BLOCKS, WHOLE, whole_answer

    from specedit.app.tui.widgets.status import StatusBar

    want = STATS.replace("result = 0", "result = 1")
    broken = "```python\n<<<<<<< SEARCH\n    result = 0\n=======\n    result = 1\n=======\n```\n"
    loaded = scripted_loaded([(BLOCKS, broken), (WHOLE, whole_answer(want))])

    async def run() -> None:
        app = app_for(loaded=loaded)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            screen.instruction.value = "Start the sum from one."
            await pilot.press("enter")
            await wait_for(pilot, lambda: screen.mode == "review", timeout=60)
            result = screen.state.result
            assert result.new_text == want and result.edit_mode == "whole", notes(app)
            status = screen.query_one(StatusBar)
            figures = str(status.query_one("#st-figures").render())
            assert "blocks given up: the answer is not a list of blocks" in figures, figures

    asyncio.run(run())
