"""The terminal app: pure parts, Pilot-driven flows (one with the real 0.5B model) and
snapshots of the main screens.

Snapshots are deterministic: they feed a fixed ``Metrics`` object and fixed results
through the app's real display path instead of live timings.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from specedit.app.code.diff import apply_hunks

textual = pytest.importorskip("textual")

from tui_helpers import (  # noqa: E402
    HISTORY,
    NEW,
    SIZE,
    STATS,
    app_for,
    fixed_metrics,
    fixed_result,
    no_blink,
    notes,
    set_instruction,
    suspect_result,
    toy_loaded,
    truncated_result,
    wait_for,
)

from specedit.app.tui.app import Loading  # noqa: E402
from specedit.app.tui.config import TuiSettings  # noqa: E402
from specedit.app.tui.live import LiveRun, live_preview  # noqa: E402
from specedit.app.tui.review import Review, diff_rows, row_of_new_line  # noqa: E402
from specedit.app.tui.screens.confirm import ConfirmScreen  # noqa: E402
from specedit.app.tui.screens.editor import EditorScreen  # noqa: E402
from specedit.app.tui.screens.picker import FilePickerScreen  # noqa: E402
from specedit.app.tui.widgets.status import (  # noqa: E402
    StatusBar,
    format_figures,
    format_flags,
    format_loading,
    format_reading,
    format_sources,
    format_where,
    live_rate,
)

# the 0.5B in an exact run, for tests that assert what it wrote (inexact blocks follow the
# timing, so the text could change on a loaded machine)
EXACT = TuiSettings(model="qwen2.5-coder-0.5b", exact=True)


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    """A working directory with stats.py and a private state dir for backups."""
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stats.py").write_text(STATS)
    return tmp_path


# ------------------------------------------------------------------ pure parts


def test_live_preview_whole_file_and_region():
    partial = "def total(prices):\n    acc = 0\n    for p"
    p = live_preview(STATS, partial, None)
    assert [(h.start_line, h.end_line) for h in p.hunks] == [(1, 2)]
    assert p.frontier == 2
    # a repeated opening fence is not part of the text
    assert live_preview(STATS, "```python\n" + partial, None).hunks == p.hunks
    region = live_preview(STATS, "def mean(prices):\n", (7, 9))
    assert [(h.start_line, h.new_text) for h in region.hunks] == [(7, "def mean(prices):\n")]
    assert region.frontier == 8


def test_live_run_caches_until_new_text():
    run = LiveRun(STATS)
    run.append("def total(prices):\n")
    first = run.preview()
    assert run.preview() is first
    run.append("    acc = 0\n")
    assert run.preview() is not first
    assert run.text().endswith("acc = 0\n")


def test_review_decisions_and_rows():
    res = fixed_result()
    review = Review(res.original, res.hunks)
    assert len(review) == 3
    review.accept()
    assert review.current == 1
    review.reject()
    assert review.current == 2
    review.prev()
    review.prev()
    review.prev()
    assert review.current == 0
    assert review.counts() == (1, 1, 1)
    assert review.result_text() == apply_hunks(STATS, [res.hunks[0]])
    assert review.accept_all()
    assert review.result_text() == NEW
    # every decision can be taken back, the last first
    assert review.undo() and review.counts() == (1, 1, 1)
    review.reject_all()
    assert review.counts() == (0, 3, 0) and review.result_text() == STATS
    assert review.undo() and review.undo() and review.undo()
    assert review.counts() == (0, 0, 3) and review.current == 0
    assert not review.undo()
    # a partial review (a cut output) keeps hunks one by one, never all at once
    partial = Review(res.original, res.hunks, partial=True)
    assert not partial.accept_all() and partial.counts() == (0, 0, 3)
    partial.accept()
    assert partial.result_text() == apply_hunks(STATS, [res.hunks[0]])
    rows = diff_rows(STATS, res.hunks)
    assert [r.kind for r in rows].count("+") == sum(h.new_text.count("\n") for h in res.hunks)
    assert rows[row_of_new_line(rows, 1)].text == "    acc = 0"


def test_settings_to_options_and_status_text():
    opts = TuiSettings(speculation=False, k=4, temperature=0.5, exact=True).options(
        "do it", region=(1, 3)
    )
    assert (opts.draft, opts.k, opts.sampling.temperature, opts.exact, opts.region) == (
        "none",
        4,
        0.5,
        True,
        (1, 3),
    )
    assert TuiSettings().options("x").draft == "auto"  # lookup, plus a draft model if loaded
    assert TuiSettings().options("x", feedback=("old", "no")).feedback == ("old", "no")
    snap = fixed_metrics().snapshot()
    assert format_figures(snap) == "acc 68% · 6.26 tok/call · k 8"
    # an answer's passage the program copied in: beside the rate, never in it
    copied = fixed_metrics(inserted_tokens=1059)
    assert (
        format_figures(copied.snapshot()) == "acc 68% · 6.26 tok/call · k 8 · 1,059 tok copied in"
    )
    assert live_rate(copied) == live_rate(fixed_metrics()) == pytest.approx(186 / 0.6)
    assert format_flags(snap["speculation"], snap["exact"]) == "spec on · exact no"
    assert format_flags(True, True, paused=True) == "spec paused · exact yes"
    assert format_sources(snap) == "drafts: file 92% (acc 70%) · out 8% (acc 40%)"
    reading = fixed_metrics(read_total=1700, read_tokens=1234, prompt_tokens=1234)
    reading.prefill_s = 1234 / 98
    assert format_reading(reading) == "file 1,234/1,700 tokens, 98 tok/s"
    assert format_reading(reading, 12.4) == "file 1,234/1,700 tokens, 98 tok/s · 12 s"
    assert format_reading(fixed_metrics(read_total=0)) == "preparing the prompt"
    # no call ended in the recent window (a slow machine): the run's rate, never 0.0
    assert live_rate(fixed_metrics()) == pytest.approx(186 / 0.6)
    assert format_where("llama.cpp", "CPU") == "llama.cpp on CPU"
    assert format_where("torch", "cuda:0", "triton") == "torch on cuda:0 · verifier triton"
    assert (
        format_loading("exactness", 42.4)
        == "checking batched logits (first load of this model) · 42 s"
    )


# ------------------------------------------------------------------ flows without a model


def test_bad_inputs_get_messages_not_crashes(workdir, monkeypatch):
    (workdir / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (workdir / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(workdir / "no-models"))

    async def run() -> None:
        app = app_for("blob.bin", load_on_start=True)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            # binary -> a clear message and the file picker, no crash
            await wait_for(pilot, lambda: isinstance(app.screen, (FilePickerScreen, ConfirmScreen)))
            assert "looks binary" in notes(app)
            # the model is not installed -> the app offers to pull it
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            assert "not installed" in str(app.screen.question)
            await pilot.press("n")
            assert isinstance(app.screen, FilePickerScreen)
            # a non-UTF-8 file picked from the tree keeps the picker open with the reason
            app.screen.query_one("#tree").post_message(
                textual.widgets.DirectoryTree.FileSelected(None, workdir / "latin1.txt")
            )
            await pilot.pause(0.2)
            assert isinstance(app.screen, FilePickerScreen)
            assert "not valid UTF-8" in notes(app)

    asyncio.run(run())


def test_directory_argument_opens_the_picker_there(workdir):
    (workdir / "src").mkdir()
    (workdir / "src" / "mod.py").write_text("x = 1\n")

    async def run() -> None:
        app = app_for("src")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, FilePickerScreen)
            assert app.screen.root == Path("src")

    asyncio.run(run())


def test_picker_opens_file_and_model_load_failure(workdir):
    (workdir / "broken.gguf").write_bytes(b"not a gguf file at all")

    async def run() -> None:
        app = app_for(None, load_on_start=True, settings=TuiSettings(model="broken.gguf"))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            assert isinstance(app.screen, FilePickerScreen)
            tree = app.screen.query_one("#tree")
            tree.post_message(
                textual.widgets.DirectoryTree.FileSelected(None, workdir / "stats.py")
            )
            await wait_for(pilot, lambda: isinstance(app.screen, EditorScreen))
            assert app.screen.editor.text == STATS
            await wait_for(
                pilot, lambda: "Model load failed" in str([n.title for n in app._notifications])
            )
            assert app.loaded is None
            # a rewrite without a model explains itself
            app.screen.query_one("#instruction").value = "x"
            await pilot.press("enter")
            assert app.screen.mode == "edit"

    asyncio.run(run())


def test_review_write_syntax_warning_write_failure_and_undo(workdir, monkeypatch):
    broken = NEW.replace("def mean(prices):", "def mean(prices:")

    async def run() -> None:
        app = app_for()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            screen.show_result(fixed_result(STATS, broken))
            await pilot.pause()
            assert screen.mode == "review"
            assert "syntax error" in str(screen.query_one("#banner").render())
            await pilot.press("A", "ctrl+s")
            assert isinstance(app.screen, ConfirmScreen)  # worse syntax: asks first
            await pilot.press("y", "enter")  # neither a letter nor Enter (on No) says yes
            assert isinstance(app.screen, EditorScreen)
            assert (workdir / "stats.py").read_text() == STATS
            # a write that fails (the backup dir cannot be created) keeps the review
            monkeypatch.setenv("SPECEDIT_STATE_DIR", str(workdir / "stats.py" / "state"))
            await pilot.press("ctrl+s", "ctrl+s")
            assert "Write failed" in str([n.title for n in app._notifications])
            assert screen.mode == "review" and (workdir / "stats.py").read_text() == STATS
            monkeypatch.setenv("SPECEDIT_STATE_DIR", str(workdir / "state"))
            await pilot.press("ctrl+s", "ctrl+s")
            assert (workdir / "stats.py").read_text() == broken
            (backup,) = (workdir / "state").rglob("*.bak")
            assert f"(backup {os.path.relpath(backup)})" in notes(app)  # with its folder
            assert screen.mode == "edit" and screen.editor.text == broken
            await pilot.press("ctrl+b")
            assert (workdir / "stats.py").read_text() == STATS
            assert screen.editor.text == STATS

    asyncio.run(run())


def test_idle_reload_on_rename_save(workdir):
    async def run() -> None:
        app = app_for()
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await pilot.pause(0.2)
            tmp = workdir / ".stats.py.swp"
            tmp.write_text(NEW)
            os.replace(tmp, workdir / "stats.py")  # how editors save
            await wait_for(pilot, lambda: screen.editor.text == NEW, timeout=10)
            assert screen.state.conflict is None

    asyncio.run(run())


# ------------------------------------------------------------------ the real model


def _slowed(target, monkeypatch, seconds: float = 0.08) -> None:
    """Stretch each real target call a little, so a test can act while generation runs
    (the 0.5B model rewrites these small files in well under a second)."""
    orig = target.eval

    def eval_(*a, **kw):
        time.sleep(seconds)
        return orig(*a, **kw)

    monkeypatch.setattr(target, "eval", eval_)


@pytest.mark.model
def test_end_to_end_rewrite_review_write_undo(workdir, qwen05, monkeypatch):
    _slowed(qwen05.target, monkeypatch)

    async def run() -> None:
        # the whole file rewritten: the live diff follows the generation front
        app = app_for(loaded=qwen05, settings=replace(EXACT, edit="whole"))
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await pilot.press(*"Rename the function average to mean.")
            await pilot.press("enter")
            assert screen.mode == "generating"
            fronts = []  # where the live diff's generation front was at each poll
            await wait_for(
                pilot,
                lambda: fronts.append(screen.diff.frontier or 0) or screen.mode != "generating",
            )
            assert screen.mode == "review", notes(app)
            m = screen.state.live.metrics
            # the live diff moved while the file was written out (edit blocks arrive whole)
            blocks = screen.state.result.edit_mode == "blocks"
            assert m.generated_tokens > 0 and (max(fronts) > 0 or blocks)
            status = screen.query_one(StatusBar)
            assert "tok/call" in str(status.query_one("#st-figures").render())
            review = screen.state.review
            hunks = list(review.hunks)
            assert hunks and review.original == STATS
            await pilot.press("n", "p", "a")
            keep = [hunks[0]]
            if len(hunks) > 1:
                await pilot.press("x")
            assert review.decisions[0] is True
            await pilot.press("ctrl+s")
            if isinstance(app.screen, ConfirmScreen):
                await pilot.press("ctrl+s")
            assert (workdir / "stats.py").read_text() == apply_hunks(STATS, keep)
            assert screen.mode == "edit"
            await pilot.press("ctrl+b")
            assert (workdir / "stats.py").read_text() == STATS

    asyncio.run(run())


@pytest.mark.model
def test_typing_the_instruction_warms_the_model_up(workdir, qwen05):
    async def run() -> None:
        qwen05.target.rollback(0)
        # a whole rewrite: only the instruction comes after the file (blocks add their format)
        app = app_for(loaded=qwen05, settings=TuiSettings(edit="whole"))
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await pilot.press("R")
            await wait_for(pilot, lambda: screen.state.warm_result is not None, timeout=60)
            w = screen.state.warm_result
            assert w.status == "done" and w.evaluated_tokens == w.prefix_tokens
            await pilot.press(*"ename the function average to mean.", "enter")
            await wait_for(pilot, lambda: screen.mode != "generating")
            assert screen.mode == "review", notes(app)
            # only the instruction was left to prefill
            assert screen.state.live.metrics.cached_tokens >= w.prefix_tokens
            assert screen.state.live.metrics.prompt_tokens < 40

    asyncio.run(run())


@pytest.mark.model
def test_conflict_during_generation_then_rerun_and_cancel(workdir, qwen05, monkeypatch):
    changed = STATS.replace("prices", "values")
    _slowed(qwen05.target, monkeypatch)

    async def run() -> None:
        app = app_for(loaded=qwen05)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            screen.query_one("#instruction").value = "Rename the variable result to acc."
            await pilot.press("enter")
            assert screen.mode == "generating"
            tmp = workdir / ".stats.py.new"
            tmp.write_text(changed)
            os.replace(tmp, workdir / "stats.py")
            await wait_for(pilot, lambda: screen.state.conflict is not None, timeout=20)
            await wait_for(pilot, lambda: screen.mode != "generating")
            assert "CONFLICT" in str(screen.query_one("#banner").render())
            if screen.mode == "review":
                await pilot.press("A", "ctrl+s")
            assert (workdir / "stats.py").read_text() == changed  # never overwritten
            # re-run against the new text, then cancel it: the file stays untouched
            await pilot.press("ctrl+r")
            assert screen.mode == "generating"
            assert screen.state.live.original == changed and screen.editor.text == changed
            await pilot.press("escape")
            await wait_for(pilot, lambda: screen.mode != "generating")
            assert screen.mode == "stopped"
            assert screen.diff.rows  # what was generated stays visible
            assert (workdir / "stats.py").read_text() == changed

    asyncio.run(run())


# ------------------------------------------------------------------ snapshots
# Each feeds fixed figures and results through the app's real display path (the figures
# are fixtures, not a measurement), so the pictures are the same on every machine.


def _fixed_rate(metrics) -> None:
    """The live rate is a function of the clock; a snapshot shows the run's decode rate."""
    metrics.recent_tps = lambda window_s=2.0: metrics.decode_tps


def _with_model(app, name: str = "qwen2.5-coder-0.5b"):
    app.loaded = toy_loaded(name=name)
    return app


def test_snapshot_editor(workdir, snap_compare):
    async def before(pilot) -> None:
        no_blink(pilot)
        await pilot.pause()

    assert snap_compare(app_for(), terminal_size=SIZE, run_before=before)


def test_snapshot_loading_with_a_queued_instruction(workdir, snap_compare):
    """The load in the status bar from the first frame; an instruction waits for it."""

    async def before(pilot) -> None:
        app, screen = pilot.app, pilot.app.screen
        no_blink(pilot)
        screen.ui_timer.pause()
        app.load = Loading("qwen2.5-coder-1.5b", "llama.cpp on CPU", "exactness")
        set_instruction(screen, "Rename result to acc and average to mean")
        await pilot.press("enter")
        app.clear_notifications()
        screen.refresh_status()
        screen.query_one(StatusBar).show_loading("exactness", 42.0, note="1 instruction queued")
        await pilot.pause()

    assert snap_compare(app_for(), terminal_size=SIZE, run_before=before)


def test_snapshot_reading_the_prompt(workdir, snap_compare):
    """The prefill has its own progress and rate, never 0.0 tok/s."""

    async def before(pilot) -> None:
        screen = pilot.app.screen
        no_blink(pilot)
        screen.ui_timer.pause()
        set_instruction(screen, "Rename result to acc and average to mean")
        m = fixed_metrics(
            decode_start=None,
            generated_tokens=0,
            target_calls=0,
            drafted_tokens=0,
            accepted_tokens=0,
            emitted_tokens=0,
            decode_s=0.0,
            read_total=1700,
            read_tokens=1234,
            prompt_tokens=1234,
            prefill_s=1234 / 98,
        )
        m.by_source.clear()
        screen.state.live = LiveRun(STATS, metrics=m)
        screen.mode = "generating"
        screen._render_live()
        screen.refresh_status()
        screen.query_one(StatusBar).show(m, state="generating", seconds=12.0)
        await pilot.pause()

    assert snap_compare(_with_model(app_for()), terminal_size=SIZE, run_before=before)


def test_snapshot_live_diff_with_metrics(workdir, snap_compare):
    async def before(pilot) -> None:
        screen = pilot.app.screen
        no_blink(pilot)
        screen.ui_timer.pause()
        set_instruction(screen, "Rename result to acc and average to mean")
        screen.state.live = LiveRun(STATS, metrics=fixed_metrics())
        _fixed_rate(screen.state.live.metrics)
        screen.state.live.append(
            "def total(prices):\n    acc = 0\n    for p in prices:\n        acc"
        )
        screen.mode = "generating"
        screen._render_live()
        screen.query_one(StatusBar).history.extend(HISTORY)
        screen.refresh_status()
        await pilot.pause()

    assert snap_compare(_with_model(app_for()), terminal_size=SIZE, run_before=before)


def test_docs_image_is_the_live_diff_snapshot():
    """README's picture of the app is this snapshot (refresh both together)."""
    root = Path(__file__).resolve().parent
    snap = root / "__snapshots__" / "test_tui" / "test_snapshot_live_diff_with_metrics.svg"
    assert (root.parent / "docs" / "tui.svg").read_bytes() == snap.read_bytes()


def test_snapshot_review(workdir, snap_compare):
    async def before(pilot) -> None:
        screen = pilot.app.screen
        no_blink(pilot)
        set_instruction(screen, "Rename result to acc and average to mean")
        screen.show_result(fixed_result())
        await pilot.press("a")
        screen.query_one(StatusBar).history.extend(HISTORY)
        screen.refresh_status()
        await pilot.pause()

    assert snap_compare(_with_model(app_for()), terminal_size=SIZE, run_before=before)


def test_snapshot_truncated_review(workdir, snap_compare):
    """A cut output: its message in red, only the completed hunks, no accept-all."""

    async def before(pilot) -> None:
        screen = pilot.app.screen
        no_blink(pilot)
        screen.show_result(truncated_result())
        screen.refresh_status()
        await pilot.pause()

    assert snap_compare(_with_model(app_for()), terminal_size=SIZE, run_before=before)


def test_snapshot_suspect_review_after_typing(workdir, snap_compare):
    """A suspect result's warning in red; letters typed as if into a text field are
    commands (none writes) and the first one that is not says how to get back."""

    async def before(pilot) -> None:
        screen = pilot.app.screen
        no_blink(pilot)
        screen.show_result(suspect_result())
        await pilot.press("o", "k")
        screen.refresh_status()
        await pilot.pause()

    assert snap_compare(_with_model(app_for()), terminal_size=SIZE, run_before=before)


def test_snapshot_settings(workdir, snap_compare, monkeypatch):
    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(workdir / "no-models"))  # fixed marks
    assert snap_compare(app_for(), terminal_size=SIZE, press=["f2"])


def test_snapshot_help(workdir, snap_compare):
    assert snap_compare(app_for(), terminal_size=SIZE, press=["f1"])


def test_region_context_speculation_and_settings(workdir):
    (workdir / "notes.md").write_text("Use acc for accumulators.\n")

    async def run() -> None:
        app = app_for()
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            screen.editor.cursor_location = (8, 4)  # inside average()
            await pilot.press("f3")
            assert screen._region(screen.editor.text) == (7, 9)
            assert str(screen.query_one("#scope").render()) == "L8-9"
            # a context file from the picker becomes a draft source of the next rewrite
            await pilot.press("f4")
            assert isinstance(app.screen, FilePickerScreen)
            app.screen.query_one("#tree").post_message(
                textual.widgets.DirectoryTree.FileSelected(None, workdir / "notes.md")
            )
            await wait_for(pilot, lambda: app.screen is screen)
            assert screen.state.context_files == [("notes.md", "Use acc for accumulators.\n")]
            assert str(screen.query_one("#scope").render()) == "L8-9 +1 ctx"
            await pilot.press("f5")
            assert app.settings.speculation is False
            assert app.settings.options("x").draft == "none"
            # settings: a bad number is refused inline, a good one applied
            await pilot.press("f2")
            settings = app.screen
            settings.query_one("#temperature").value = "hot"
            settings.query_one("#apply").press()
            await pilot.pause()
            assert "temperature" in str(settings.query_one("#settings-error").render())
            settings.query_one("#temperature").value = "0.5"
            settings.query_one("#k").value = "6"
            settings.query_one("#apply").press()
            await wait_for(pilot, lambda: app.screen is screen)
            assert (app.settings.temperature, app.settings.k) == (0.5, 6)

    asyncio.run(run())


def test_pull_progress_reaches_the_settings_bar(workdir, monkeypatch):
    from specedit.app.tui.messages import PullFinished, PullProgress

    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(workdir / "no-models"))

    async def run() -> None:
        app = app_for()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await pilot.press("f2")
            app.post_message(PullProgress("qwen2.5-coder-0.5b [2/6] unpacking", 150, 491))
            await pilot.pause(0.1)
            bar = app.screen.query_one("#pull-bar")
            assert (bar.progress, bar.total) == (150, 491) and bar.display
            assert "unpacking" in str(app.screen.query_one("#pull-label").render())
            app.post_message(PullFinished("qwen2.5-coder-0.5b", "pip could not download"))
            await pilot.pause(0.1)
            assert "Pull failed" in str([n.title for n in app._notifications])

    asyncio.run(run())


@pytest.mark.model
def test_region_rewrite_keeps_the_rest_byte_identical(workdir, qwen05):
    async def run() -> None:
        app = app_for(loaded=qwen05, settings=EXACT)  # the new name is asserted
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            screen.editor.cursor_location = (8, 4)
            await pilot.press("f3")
            screen.query_one("#instruction").value = "Rename the function average to mean."
            await pilot.press("enter")
            assert screen.state.live.region == (7, 9)
            await wait_for(pilot, lambda: screen.mode != "generating")
            assert screen.mode == "review", notes(app)
            review = screen.state.review
            assert all(7 <= h.start_line and h.end_line <= 9 for h in review.hunks)
            review.accept_all()
            head = "".join(STATS.splitlines(keepends=True)[:7])
            assert review.result_text().startswith(head)
            assert "def mean(prices):" in review.result_text()

    asyncio.run(run())


@pytest.mark.model
def test_too_long_file_gets_a_message(workdir, qwen05):
    (workdir / "big.py").write_text("".join(f"value_{i} = {i} * 2\n" for i in range(1200)))

    async def run() -> None:
        # a whole rewrite (the default edit mode writes blocks for a big file's outline)
        app = app_for("big.py", loaded=qwen05, settings=TuiSettings(edit="whole"))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            screen.query_one("#instruction").value = "Double every value."
            await pilot.press("enter")
            await wait_for(pilot, lambda: screen.mode != "generating", timeout=60)
            assert screen.mode == "edit"
            assert "Rewrite failed" in str([n.title for n in app._notifications])
            assert "F3" in notes(app)  # points to region mode

    asyncio.run(run())
