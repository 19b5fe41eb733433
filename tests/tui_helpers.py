"""Shared pieces of the terminal app's tests: a sample file, fixed figures and results, a
``LoadedModel`` around the numpy toy model, and Pilot helpers.

Pilot's ``press`` waits until the process looks idle, so while a thread worker computes
each key costs up to a second: tests that type while the model works set the instruction
line's value and press only Enter, or post key events themselves (:func:`send_keys`).
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from toy import ToyModel

from specedit.app.check.verdict import Suspect
from specedit.app.code.diff import compute_hunks, preview_in_file, unified_diff
from specedit.app.edit.result import RewriteStats
from specedit.app.edit.rewrite import RewriteResult
from specedit.app.runtime.loaded_model import LoadedModel
from specedit.app.tui.app import SpecEditApp
from specedit.app.tui.config import TuiSettings
from specedit.engine.metrics import Metrics, StopReason

STATS = """\
def total(prices):
    result = 0
    for p in prices:
        result += p
    return result


def average(prices):
    return total(prices) / len(prices)
"""
NEW = STATS.replace("result", "acc").replace("def average", "def mean")
SIZE = (100, 30)
HISTORY = [40, 90, 160, 210, 260, 280, 300, 310, 290, 305, 312, 318, 300, 296, 310, 315]


def fixed_metrics(**changes) -> Metrics:
    """A finished run's figures, fixed so that snapshots are deterministic."""
    m = Metrics(
        prompt_tokens=412,
        generated_tokens=187,
        target_calls=31,
        drafted_tokens=240,
        accepted_tokens=163,
        emitted_tokens=194,
        prefill_s=0.9,
        decode_s=0.6,
        exact=False,
        speculation=True,
        k=8,
        stop_reason=StopReason.STOP,
        backend="llama.cpp",
        device="CPU",
        decode_start=1.0,
    )
    m.by_source = Counter({"file": 220, "output": 20})
    m.accepted_by_source = Counter({"file": 155, "output": 8})
    for key, value in changes.items():
        setattr(m, key, value)
    return m


def fixed_result(original: str = STATS, new: str = NEW, **changes) -> RewriteResult:
    """An ``ok`` result of ``original`` -> ``new`` with fixed figures."""
    hunks = compute_hunks(original, new)
    res = RewriteResult(
        original, new, new, hunks, unified_diff(original, new), RewriteStats(fixed_metrics()), "ok"
    )
    for key, value in changes.items():
        setattr(res, key, value)
    return res


def truncated_result(original: str = STATS, partial_body: str | None = None) -> RewriteResult:
    """A cut result: only the hunks of the lines completed before the cut."""
    body = partial_body if partial_body is not None else "".join(NEW.splitlines(True)[:4])
    hunks = preview_in_file(original, body)
    msg = (
        "the output stopped at the 60-token output limit, before the end of the file; "
        "nothing was written: raise --max-tokens (options.maxTokens)"
    )
    return RewriteResult(
        original,
        None,
        "```python\n" + body,
        hunks,
        "",
        RewriteStats(fixed_metrics()),
        "truncated",
        msg,
    )


def suspect_result() -> RewriteResult:
    """An ``ok`` result that renames and drops the last function (a suspect deletion)."""
    new = NEW.split("\n\n\ndef mean")[0] + "\n"
    suspect = Suspect(
        "drops_tail",
        2,
        "the result deletes the last 2 non-blank lines, which the instruction did not ask "
        "to remove (the model may have stopped early)",
    )
    return fixed_result(STATS, new, suspect=suspect, message=suspect.message)


class SlowToy(ToyModel):
    """The toy model with a pause in every call (so a test can act while it works)."""

    def __init__(self, delay: float = 0.0, **kw) -> None:
        super().__init__(vocab=256, **kw)
        self.delay = delay

    def eval(self, tokens, pos, want):
        if self.delay:
            time.sleep(self.delay)
        return super().eval(tokens, pos, want)

    def close(self) -> None:
        self.closed = True

    def text(self) -> str:
        """Everything evaluated so far (the toy's tokens are bytes)."""
        return bytes(self.toks).decode("utf-8", "replace")


def toy_loaded(delay: float = 0.0, name: str = "toy") -> LoadedModel:
    """A ``LoadedModel`` around the numpy toy model: no weights, no load time
    (``name`` is what the status bar calls it)."""
    costs = {1: 0.001, 4: 0.0015, 16: 0.003, 32: 0.005, 64: 0.009, 128: 0.017}
    return LoadedModel(
        target=SlowToy(delay, n_ctx=8192),
        model_name=name,
        model_path=Path("toy.gguf"),
        exact_block=1,
        exact_deltas={},
        costs=costs,
        load_s=0.0,
    )


def app_for(path: str | None = "stats.py", **kw) -> SpecEditApp:
    kw.setdefault("settings", TuiSettings(model="qwen2.5-coder-0.5b"))
    kw.setdefault("load_on_start", False)
    kw.setdefault("save_config", False)
    return SpecEditApp(path, **kw)


async def wait_for(pilot, cond, timeout: float = 180.0, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(step)


async def send_keys(pilot, *keys: str) -> None:
    """Post key events straight to the app (no wait for idle between them), then let the
    app handle them."""
    from textual import events

    app = pilot.app
    for key in keys:
        char = key if len(key) == 1 else {"space": " "}.get(key)
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)
    await pilot.pause(0.1)


def typed(sentence: str) -> list[str]:
    """Keys for typing ``sentence`` (Pilot names for punctuation and spaces)."""
    names = {" ": "space", ",": "comma", ".": "full_stop", "'": "apostrophe"}
    return [names.get(c, c) for c in sentence]


def notes(app) -> str:
    return " | ".join(str(n.message) for n in app._notifications)


def set_instruction(screen, text: str) -> None:
    """Put ``text`` in the instruction line as if typed (cursor at its end, nothing
    selected)."""
    screen.instruction.value = text
    screen.instruction.selection = (len(text), len(text))


def no_blink(pilot) -> None:
    for widget in pilot.app.screen.query("Input, TextArea"):
        widget.cursor_blink = False
