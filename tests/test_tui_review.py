"""Review in the terminal app: typing never writes (issue 12 item 3), cut and cancelled
outputs keep their completed hunks one by one, a suspect result asks first, and every
decision can be undone."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from tui_helpers import (
    NEW,
    SIZE,
    STATS,
    app_for,
    fixed_result,
    notes,
    send_keys,
    suspect_result,
    truncated_result,
    typed,
    wait_for,
)

from specedit.app.code.diff import apply_hunks
from specedit.app.edit.result import RewriteStats
from specedit.app.edit.rewrite import RewriteResult
from specedit.app.tui.config import TuiSettings
from specedit.app.tui.live import LiveRun
from specedit.app.tui.messages import RewriteFinished
from specedit.app.tui.screens.confirm import ConfirmScreen
from specedit.app.tui.screens.editor import EditorScreen
from specedit.engine.metrics import Metrics, StopReason


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stats.py").write_text(STATS)
    return tmp_path


def banner(screen) -> str:
    return str(screen.query_one("#banner").render())


@pytest.mark.parametrize("result", [fixed_result, suspect_result])
def test_typing_a_sentence_in_review_never_writes(workdir, result):
    """Someone who believes they are in a text field types their next instruction."""

    async def run() -> None:
        app = app_for()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            screen.show_result(result())
            await pilot.pause()
            assert screen.mode == "review"
            assert not screen.instruction.display  # no text field to believe in
            assert screen.query_one("#review-keys").display
            await pilot.press("a", "d")
            assert "letters here are commands" in notes(app)  # said at the first non-command
            await pilot.press(*typed("docs, then show it"), "enter")
            await pilot.press(*typed("Add docs. Write it all, yes: W A y w"), "enter")
            assert (workdir / "stats.py").read_text() == STATS
            assert isinstance(app.screen, (EditorScreen, ConfirmScreen))
            if isinstance(app.screen, ConfirmScreen):  # a suspect accept-all asks; no write
                await pilot.press("escape")
            assert (workdir / "stats.py").read_text() == STATS
            assert notes(app).count("letters here are commands") <= 1  # said once
            await pilot.press("escape")  # back to typing
            assert screen.mode == "edit" and screen.instruction.has_focus
            assert (workdir / "stats.py").read_text() == STATS

    asyncio.run(run())


def test_truncated_result_keeps_its_completed_hunks_one_by_one(workdir):
    res = truncated_result()
    assert res.new_text is None and len(res.hunks) == 2

    async def run() -> None:
        app = app_for()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            screen.show_result(res)
            await pilot.pause()
            assert screen.mode == "review" and screen.state.review.partial
            assert "TRUNCATED" in banner(screen) and "60-token output limit" in banner(screen)
            assert screen.query_one("#banner").has_class("-error")
            assert not screen.check_action("accept_all", ())  # no accept-all, not in the footer
            await pilot.press("A")
            assert screen.state.review.counts() == (0, 0, 2)
            await pilot.press("a", "ctrl+s")  # keep the first hunk only
            want = apply_hunks(STATS, [res.hunks[0]])
            assert (workdir / "stats.py").read_text() == want
            assert want.endswith("return total(prices) / len(prices)\n")  # nothing cut

    asyncio.run(run())


def test_cancelled_run_keeps_the_hunks_finished_before_esc(workdir):
    """Esc mid-rewrite: the hunks of the lines already generated can still be kept."""
    partial = "".join(NEW.splitlines(True)[:5]) + "\n\ndef me"

    async def run() -> None:
        app = app_for()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            screen.state.live = LiveRun(STATS)
            screen.state.live.append("```python\n" + partial)
            screen.mode = "generating"
            metrics = Metrics(stop_reason=StopReason.CANCELLED)
            screen.state.live.metrics = metrics
            cancelled = RewriteResult(
                STATS,
                None,
                screen.state.live.text(),
                [],
                "",
                RewriteStats(metrics),
                "cancelled",
                "cancelled",
            )
            screen.post_message(RewriteFinished(cancelled))
            await wait_for(pilot, lambda: screen.mode != "generating", timeout=10)
            assert screen.mode == "review" and screen.state.review.partial
            assert len(screen.state.review) == 2  # lines 2 and 4-5; the def line was not finished
            assert "Cancelled" in banner(screen)
            await pilot.press("x", "a", "ctrl+s")
            want = STATS.replace(
                "        result += p\n    return result", "        acc += p\n    return acc"
            )
            assert (workdir / "stats.py").read_text() == want

    asyncio.run(run())


def test_suspect_result_asks_before_accept_all_and_write(workdir):
    res = suspect_result()

    async def run() -> None:
        app = app_for()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            screen.show_result(res)
            await pilot.pause()
            assert "SUSPECT" in banner(screen) and "deletes the last 2" in banner(screen)
            assert screen.query_one("#banner").has_class("-error")
            await pilot.press("A")
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("n")
            assert screen.state.review.counts() == (0, 0, 2)
            await pilot.press("A", "y")
            assert screen.state.review.counts() == (2, 0, 0)
            await pilot.press("ctrl+s")
            assert isinstance(app.screen, ConfirmScreen)  # the write asks too
            assert "deletes the last 2" in app.screen.question
            await pilot.press("y", "w", "enter")  # letters and Enter (on No) never say yes
            assert isinstance(app.screen, EditorScreen)
            assert (workdir / "stats.py").read_text() == STATS
            await pilot.press("ctrl+s", "ctrl+s")  # the modifier, twice: deliberate
            assert (workdir / "stats.py").read_text() == res.new_text

    asyncio.run(run())


def test_decisions_undo_and_reject_all(workdir):
    async def run() -> None:
        app = app_for()
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            screen.show_result(fixed_result())
            await pilot.pause()
            review = screen.state.review
            await pilot.press("a", "x")
            assert review.decisions == [True, False, None] and review.current == 2
            await pilot.press("u")
            assert review.decisions == [True, None, None] and review.current == 1
            await pilot.press("X")
            assert review.decisions == [False, False, False]
            assert "0 accepted, 3 rejected" in str(screen.query_one("#scope").render())
            await pilot.press("u", "u")
            assert review.decisions == [None, None, None] and review.current == 0
            await pilot.press("A", "u", "a", "ctrl+s")
            assert (workdir / "stats.py").read_text() == apply_hunks(STATS, [review.hunks[0]])

    asyncio.run(run())


# ------------------------------------------------------------------ the real model


@pytest.mark.model
def test_esc_mid_rewrite_then_keep_a_finished_hunk_real_model(workdir, qwen05, monkeypatch):
    """The 0.5B renames the first function; Esc once that hunk is done; keep it."""
    long = STATS + "".join(
        f"\n\ndef f{i}(prices):\n    return sum(prices) * {i}\n" for i in range(12)
    )
    (workdir / "stats.py").write_text(long)
    orig = qwen05.target.eval

    def slow(*a, **kw):
        time.sleep(0.15)
        return orig(*a, **kw)

    monkeypatch.setattr(qwen05.target, "eval", slow)

    async def run() -> None:
        # short blocks (k=4), so that the rest of the file takes many calls after the hunk
        # a whole rewrite streams the file (a rename asked alone is the program's under auto)
        settings = TuiSettings(model=qwen05.model_name, k=4, exact=True, edit="whole")
        app = app_for(loaded=qwen05, settings=settings)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            screen.instruction.value = "Rename the function total to sum_prices."
            await pilot.press("enter")

            def past_first_hunk() -> bool:
                p = screen.state.live.preview()
                return screen.mode != "generating" or (
                    bool(p.hunks) and p.frontier >= p.hunks[0].end_line + 2
                )

            await wait_for(pilot, past_first_hunk)
            assert screen.mode == "generating", "the rewrite ended before Esc: slow it more"
            await send_keys(pilot, "escape")  # at once (Pilot's press waits for an idle app)
            await wait_for(pilot, lambda: screen.mode != "generating")
            assert screen.mode == "review" and screen.state.review.partial, notes(app)
            first = screen.state.review.hunks[0]
            assert "def sum_prices(" in first.new_text and "def total(" in first.old_text
            await pilot.press("a", "ctrl+s")
            assert (workdir / "stats.py").read_text() == apply_hunks(long, [first])

    asyncio.run(run())
