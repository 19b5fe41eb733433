"""Questions in the terminal app (issue 25): F6 asks about the open file and the context
files, the answer streams in, then shows each quote with its verdict; the file is never
touched. The scripted model writes the answers (``scripted.py``), so what the screen shows
is asserted exactly; the quote guard is on, as in the app, so a misquote here is a quoted
string in the prose (the guard keeps fenced passages verbatim)."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import replace
from pathlib import Path

import pytest

textual = pytest.importorskip("textual")

from scripted import EOS, ScriptedModel, scripted_loaded  # noqa: E402
from tui_helpers import (  # noqa: E402
    SIZE,
    STATS,
    app_for,
    notes,
    send_keys,
    set_instruction,
    wait_for,
)

from specedit.app.answer.quotes import check_citations  # noqa: E402
from specedit.app.store.files import list_backups  # noqa: E402
from specedit.app.tui.answer import answer_rows, summary  # noqa: E402
from specedit.app.tui.config import TuiSettings  # noqa: E402
from specedit.app.tui.widgets.status import StatusBar  # noqa: E402

NOTES = "# Notes\n\nPrices are in cents.\nAn empty list has no average.\n"
ASK_FOUND = "What does total start from?"
FOUND = (
    "total starts from zero and adds each price.\n\n"
    "[stats.py]\n```\n    result = 0\n    for p in prices:\n```"
)
ANSWERED = FOUND.replace(  # the program copies the rest of the passage's paragraph
    "prices:\n```", "prices:\n        result += p\n    return result\n```"
)
ASK_MISQUOTE = "What does average do?"
MISQUOTE = (
    'average returns "total(prices) * len(prices)" [stats.py:L9], and the notes say why.\n\n'
    "[notes.md]\n```\nAn empty list has no average.\n```"
)
ASK_SLOW = "Tell me everything."
_rnd = random.Random(0)
SLOW = " ".join("".join(_rnd.choice("abcdefghij") for _ in range(5)) for _ in range(150))


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    """A working directory with stats.py and a private state dir for backups."""
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stats.py").write_text(STATS)
    return tmp_path


FENCE = 257


class FencedScripted(ScriptedModel):
    """The scripted model writing each fence as one token, as real tokenizers do: the
    quote guard offers the rest of a begun closing fence whole (after a ``` ` ``` only
    ``` `` ```), so a model of bytes alone cannot close a passage. ``delay``: a pause in
    every call (Esc can land mid-answer)."""

    def __init__(self, rules, delay: float = 0.0) -> None:
        super().__init__(rules)
        self.n_vocab = 258
        self.delay = delay

    def detokenize(self, tokens) -> bytes:
        return b"".join(b"```" if t == FENCE else bytes([t]) for t in map(int, tokens) if t != EOS)

    def _next(self, upto: int) -> int:
        hist = self.detokenize(self.cache_tokens[: upto + 1])
        prompt, _, turn = hist.rpartition(b"\x01")
        for key, answer in self.rules:
            if key.encode() in prompt:
                if answer.startswith(turn) and len(turn) < len(answer):
                    rest = answer[len(turn) :]
                    return FENCE if rest.startswith(b"```") else rest[0]
                return EOS
        return EOS

    def eval(self, tokens, pos, want):
        if self.delay:
            time.sleep(self.delay)
        return super().eval(tokens, pos, want)


def fenced_loaded(rules, delay: float = 0.0):
    loaded = scripted_loaded([])
    loaded.target = FencedScripted(rules, delay)
    return loaded


def _untouched(workdir: Path, screen) -> None:
    assert (workdir / "stats.py").read_text() == STATS
    assert screen.editor.text == STATS
    assert list_backups(workdir / "stats.py") == []  # nothing was written
    assert {p.name for p in workdir.iterdir() if p.is_file()} == {"stats.py"}


# ------------------------------------------------------------------ the layout (pure)


def test_rows_put_each_verdict_under_its_quote():
    files = [("stats.py", STATS), ("notes.md", NOTES)]
    cites = check_citations(MISQUOTE, files)
    rows = answer_rows(MISQUOTE, cites)
    kinds = [r.kind for r in rows]
    # the prose line with the misquoted string, its verdict, the tag, the passage, its verdict
    assert kinds == ["prose", "verdict", "prose", "cite", "quote", "quote", "quote", "verdict"]
    assert rows[1].text == "✗ stats.py:L9: not in stats.py" and rows[1].ok is False
    a, b = rows[0].mark
    assert rows[0].text[a:b] == "total(prices) * len(prices)"
    assert rows[-1].text == "✓ notes.md:L4" and rows[-1].ok is True
    assert all(r.ok is True for r in rows if r.kind == "quote")
    assert summary(cites) == "1 of 2 not found"
    assert "".join(r.text + "\n" for r in rows if r.kind != "verdict") == MISQUOTE + "\n"


def test_rows_of_odd_answers_and_the_summary_wording():
    files = [("stats.py", STATS)]
    # a citation that quotes nothing gets its verdict after its tag; an uncited passage
    # is checked against every file and says so
    text = "See [stats.py:L2].\n\n```\ndef total(prices):\n```"
    cites = check_citations(text, files)
    rows = answer_rows(text, cites)
    assert [r.text for r in rows if r.kind == "verdict"] == [
        "✗ stats.py:L2: quotes nothing",
        "✓ stats.py:L1 (uncited)",
    ]
    assert rows[1].kind == "verdict"  # right under the tag's line
    assert cites[1].verdict() == "✓ stats.py:L1 (uncited)"
    assert summary([]).startswith("✗ no quotes")
    assert summary(check_citations(FOUND, files)) == "1 quote, found"
    assert summary(check_citations(FOUND + "\n\n" + FOUND, files)) == "2 quotes, all found"
    assert answer_rows("just words", []) == answer_rows("just words", ())


# ------------------------------------------------------------------ the app


def test_f6_asks_and_a_found_quote_shows_its_check(workdir):
    loaded = fenced_loaded([(ASK_FOUND, FOUND)])

    async def run() -> None:
        app = app_for(loaded=loaded)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            await pilot.press("f6")
            assert screen.state.asking
            assert str(screen.query_one("#scope").render()) == "ask"
            assert "Question" in screen.instruction.placeholder
            set_instruction(screen, ASK_FOUND)
            await pilot.press("enter")
            await wait_for(pilot, lambda: screen.mode == "answer", timeout=60)
            shown = screen.answer_view.plain
            assert f"Q: {ASK_FOUND}" in shown, notes(app)
            assert "1 quote, found" in shown
            assert "✓ stats.py:L2-L5" in shown
            assert "    result = 0" in shown
            assert screen.query_one("#views").current == "answer"
            assert screen.answer_view.has_focus
            # the prompt held the open file under its shown name, and the question
            (prompt,) = loaded.target.prompts
            assert "stats.py" in prompt and STATS in prompt and ASK_FOUND in prompt
            assert screen.state.answer.text == ANSWERED
            assert screen.query_one(StatusBar).text("st-state") == "answered"
            assert "tok/s" in screen.query_one(StatusBar).text("st-tps")
            # the rest of the paragraph the program copied in is beside the rate, not in it
            copied = screen.state.answer.metrics.inserted_tokens
            assert copied > 0
            figures = screen.query_one(StatusBar).text("st-figures")
            assert figures.endswith(f"· {copied} tok copied in")
            # Esc returns to the question line, still asking; the file is untouched
            await pilot.press("escape")
            assert screen.mode == "edit" and screen.state.asking
            assert screen.query_one("#views").current == "editor"
            assert screen.instruction.has_focus
            _untouched(workdir, screen)
            # the question joins the history; F6 goes back to rewrites
            await pilot.press("f6")
            assert not screen.state.asking
            assert str(screen.query_one("#scope").render()) == "file"
            assert app.history[-1] == ASK_FOUND

    asyncio.run(run())


def test_a_misquote_shows_why_and_any_key_goes_back(workdir):
    loaded = fenced_loaded([(ASK_MISQUOTE, MISQUOTE)])

    async def run() -> None:
        app = app_for(loaded=loaded)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            screen.state.context_files.append(("notes.md", NOTES))  # as F4 adds it
            await pilot.press("f6")
            assert str(screen.query_one("#scope").render()) == "ask +1 ctx"
            set_instruction(screen, ASK_MISQUOTE)
            await pilot.press("enter")
            await wait_for(pilot, lambda: screen.mode == "answer", timeout=60)
            shown = screen.answer_view.plain
            assert "1 of 2 not found" in shown, notes(app)
            assert "✗ stats.py:L9: not in stats.py" in shown
            assert "✓ notes.md:L3-L4" in shown
            (prompt,) = loaded.target.prompts
            assert NOTES in prompt and STATS in prompt
            # a letter that is no command here goes back (x rejects hunks only in review)
            await pilot.press("x")
            assert screen.mode == "edit" and screen.instruction.has_focus
            _untouched(workdir, screen)

    asyncio.run(run())


def test_esc_cancels_a_streaming_answer(workdir):
    loaded = fenced_loaded([(ASK_SLOW, SLOW)], delay=0.02)

    async def run() -> None:
        app = app_for(loaded=loaded)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            await pilot.press("f6")
            set_instruction(screen, ASK_SLOW)
            await pilot.press("enter")
            assert screen.mode == "answering"
            # the answer streams into the answer view, the figures into the status bar
            await wait_for(pilot, lambda: len(screen.answer_view.plain) > 80, timeout=60)
            assert screen.query_one("#views").current == "answer"
            assert "answering…" in screen.answer_view.plain
            assert screen.query_one(StatusBar).text("st-state") in ("answering", "reading")
            await send_keys(pilot, "escape")
            await wait_for(pilot, lambda: screen.mode == "answer", timeout=60)
            res = screen.state.answer
            assert res.metrics.stop_reason == "cancelled", notes(app)
            assert len(res.text) < len(SLOW) and SLOW.startswith(res.text)
            shown = screen.answer_view.plain
            assert "Cancelled" in shown and "no quotes" in shown
            await pilot.press("escape")
            assert screen.mode == "edit"
            _untouched(workdir, screen)

    asyncio.run(run())


def test_enter_without_a_model_or_a_question_says_so(workdir):
    async def run() -> None:
        app = app_for(settings=TuiSettings(model="none.gguf"))  # not a catalog model
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            await pilot.press("f6")
            await pilot.press("enter")
            assert "Type a question first." in notes(app)
            set_instruction(screen, ASK_FOUND)
            await pilot.press("enter")
            assert screen.mode == "edit"
            assert "No model" in notes(app)
            _untouched(workdir, screen)

    asyncio.run(run())


@pytest.mark.model
def test_the_real_model_answers_with_its_quotes_checked(workdir, qwen05, monkeypatch):
    """The 0.5B answers in the app: whatever it writes (inexact blocks follow the timing),
    the view shows the summary and one verdict per quote, and the file is untouched. The
    answer is cut at 60 tokens (the app's limit is the engine's 512) to keep it short."""
    options = TuiSettings.options

    def short(self, *args, **kw):
        return replace(options(self, *args, **kw), max_tokens=60)

    monkeypatch.setattr(TuiSettings, "options", short)

    async def run() -> None:
        app = app_for(loaded=qwen05)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            await pilot.press("f6")
            set_instruction(screen, "What does average return? Quote the line.")
            await pilot.press("enter")
            await wait_for(pilot, lambda: screen.mode == "answer", timeout=120)
            res = screen.state.answer
            assert res is not None and res.text, notes(app)
            shown = screen.answer_view.plain
            assert summary(res.citations) in shown
            for c in res.citations:
                assert c.verdict() in shown
            await pilot.press("escape")
            assert screen.mode == "edit"
            _untouched(workdir, screen)

    asyncio.run(run())
