"""The model's plan of a change: what must change, in its words, before it writes any code.

Contract: ``plan_note(run)`` asks the model (``app.edit.prompts.plan_prompt``: the file, the
instruction and ``PLAN_ASK``) for a sentence or two on what must change, greedy, at most
``NOTE_TOKENS`` tokens, stopped at its first blank line or code fence; it returns the note
("" when the prompt and the note do not fit the context, the model wrote nothing, or the
run was cancelled). ``with_note(instruction, note)`` is the instruction the rewrite's prompts
then show: the user's words first, the model's note after them. Only prompts read the note:
the checks read the user's instruction (``app.edit.request``), and the file is changed only
by the answers that follow. ``RewriteOptions.first`` ``plan`` turns it on under ``auto``.
"""

from __future__ import annotations

import logging
import re

from ..runtime.generation import run_prompt
from .prompts import plan_prompt
from .stages import RewriteRun

log = logging.getLogger(__name__)

NOTE_TOKENS = 96
"""The most tokens a note may take (two sentences are about 60)."""


def plan_note(run: RewriteRun) -> str:
    """What the model says must change for ``run``'s instruction (module docstring)."""
    o, target = run.opts, run.loaded.target
    prompt = plan_prompt(
        target, run.text, o.instruction, path=run.path, context_files=o.context_files
    )
    room = prompt.room(target.n_ctx)
    if room < NOTE_TOKENS:
        log.info("plan note: %d prompt tokens leave no room; not asked", len(prompt))
        return ""
    gen = run_prompt(
        run.loaded,
        prompt,
        o,
        NOTE_TOKENS,
        cancel=run.cancel,
        metrics=run.metrics,
        stop_when=_ends,
    )
    note = _first_paragraph(gen.text)
    log.info("plan note (%d tokens): %s", run.metrics.generated_tokens, note)
    return note


def _ends(so_far: str) -> bool:
    """The note is over: a blank line after some text, or a code fence."""
    text = so_far.lstrip()
    return "```" in text or (bool(text) and "\n\n" in text)


def _first_paragraph(text: str) -> str:
    """The note's text up to its first blank line or fence, on one line, without a last
    sentence that does not end (cut by the token limit, or "Here is the code:")."""
    body = text.strip().split("```")[0]
    para = " ".join(body.strip().split("\n\n")[0].split())
    ends = [m.end() for m in _SENTENCE_END.finditer(para)]
    return para[: ends[-1]].strip() if ends else para


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def with_note(instruction: str, note: str) -> str:
    """The instruction the rewrite's prompts show once the model has said ``note``."""
    if not note:
        return instruction
    return f"{instruction}\nWhat must change (your own reading of it): {note}"
