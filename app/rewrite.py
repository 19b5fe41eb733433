"""Rewrite a text (or a region of it) with a loaded model: the one path every front end uses.

Contract: ``rewrite(session, text, opts, path=..., on_text=..., cancel=...)``
builds the prompt (``app.prompt.rewrite_prompt``), checks that it fits the context,
runs it (``app.generation.run_prompt``: prompt lookup or plain, streaming decoded
text to ``on_text``, stopping at the closing fence) and returns a ``RewriteResult``
with the new full text, hunks, unified diff and the live ``Metrics`` object. Its
``status`` is
  * ``ok``: the output reached its closing fence; ``suspect`` is set when it deletes
    lines the instruction did not ask to remove (``app.checks``): front ends show it
    and write it only when forced;
  * ``truncated``: the output stopped before its closing fence (the token limit, the
    context, or the model ended early): ``new_text`` is None, and ``hunks`` are only
    those of the lines completed before the cut (never a deletion of the rest). It is
    never written or applied as a whole;
  * ``cancelled``, ``no_output``: nothing usable; nothing changed.
It never touches the file on disk: writing is ``app.files.write_atomic``'s job.
``answer`` does the same for a question grounded in context files (RAG quoting) and
returns an ``AnswerResult``: the text, the ``Metrics`` and the answer's citations, each
checked against the files (``app.quotes``).
``warm(session, text, path=...)`` prefills the prompt prefix every rewrite of a file
shares (the file comes before the region and the instruction), so an editor can have
it done while the user types the instruction; a rewrite or another warm-up interrupts
it.

Errors a user can fix come out as ``engine.backend.UserError`` (too long, empty).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..engine.backend import UserError, cached_tokens, shared_prefix
from ..engine.metrics import Metrics
from .checks import Suspect, suspect_deletion
from .diff import Hunk, compute_hunks, preview_in_file, split_lines, unified_diff
from .files import FileError
from .generation import run_prompt
from .options import RewriteOptions
from .prompt import Prompt, answer_prompt, feedback_note, rewrite_prompt
from .quotes import Citation, all_found, check_citations
from .session import ModelSession

log = logging.getLogger(__name__)

__all__ = ["AnswerResult", "RewriteResult", "WarmResult", "answer", "rewrite", "warm"]


@dataclass
class RewriteResult:
    original: str
    new_text: str | None
    raw: str
    hunks: list[Hunk]
    diff: str
    metrics: Metrics
    status: str  # ok | truncated | cancelled | no_output
    message: str = ""
    suspect: Suspect | None = None
    """Set on an ``ok`` result that drops lines the instruction did not ask to remove."""

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "message": self.message,
            "output": self.new_text,
            "diff": self.diff,
            "hunks": [h.to_json() for h in self.hunks],
            "suspect": self.suspect.to_json() if self.suspect else None,
            "stats": self.metrics.snapshot(),
        }


def _check_fits(session: ModelSession, prompt: Prompt, what: str) -> None:
    n_ctx, n_prompt, n_out = session.target.n_ctx, len(prompt), prompt.part_tokens
    if n_prompt + n_out + 8 > n_ctx:
        fits = max(0, (n_ctx - (n_prompt - n_out) - 8) // 2)
        raise FileError(
            f"{what} is {n_out:,} tokens; with the prompt and the rewritten copy that needs "
            f"{n_prompt + n_out:,} of the {n_ctx:,}-token context, so about {fits:,} tokens "
            "fit: rewrite a region (--lines) or raise --ctx"
        )


def _prompt(session: ModelSession, text: str, opts: RewriteOptions, lines, path) -> Prompt:
    prompt = rewrite_prompt(
        session.target,
        text,
        opts.instruction,
        lines=lines,
        path=path,
        context=opts.context,
        region=opts.region,
        feedback=opts.feedback,
    )
    _check_fits(session, prompt, path or "the text")
    return prompt


def _cut_message(stop_reason: str, max_tokens: int, region: bool) -> str:
    what = "the region" if region else "the file"
    if stop_reason == "max_tokens":
        why = f"at the {max_tokens:,}-token output limit"
        fix = "raise --max-tokens (options.maxTokens)"
    elif stop_reason == "context_full":
        why = "when the context was full"
        fix = "raise --ctx or rewrite a region (--lines)"
    else:
        why = "before the model closed its block"
        fix = "try again or rewrite a region (--lines)"
    return f"the output stopped {why}, before the end of {what}; nothing was written: {fix}"


def rewrite(
    session: ModelSession,
    text: str,
    opts: RewriteOptions,
    *,
    path: str | None = None,
    on_text: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    metrics: Metrics | None = None,
) -> RewriteResult:
    """Rewrite ``text`` (or ``opts.region`` of it) as instructed (see module docstring)."""
    if not opts.instruction.strip():
        raise UserError("no instruction given")
    lines = split_lines(text)
    prompt = _prompt(session, text, opts, lines, path)
    room = session.target.n_ctx - len(prompt) - 1
    max_tokens = min(opts.max_tokens or int(prompt.part_tokens * 1.3) + 128, room)
    run = run_prompt(
        session, prompt, opts, max_tokens, on_text=on_text, cancel=cancel, metrics=metrics
    )
    m, raw, fenced = run.metrics, run.text, run.fenced
    assert fenced is not None
    if m.stop_reason == "cancelled":
        return RewriteResult(text, None, raw, [], "", m, "cancelled", "cancelled; nothing changed")
    if not fenced.closed:
        hunks = preview_in_file(text, fenced.partial_body(), opts.region)
        msg = _cut_message(m.stop_reason, max_tokens, opts.region is not None)
        return RewriteResult(text, None, raw, hunks, "", m, "truncated", msg)
    body = fenced.body()
    if body is None:
        msg = "the model returned no usable output; nothing changed"
        return RewriteResult(text, None, raw, [], "", m, "no_output", msg)
    part = prompt.part
    if part.endswith("\n") and not body.endswith("\n"):
        body += "\n"
    if opts.region is not None:
        a, b = opts.region
        new_text = "".join(lines[:a]) + body + "".join(lines[b:])
    else:
        new_text = body if text.endswith("\n") or not body.endswith("\n") else body[:-1]
    hunks = compute_hunks(text, new_text)
    asked = " ".join(filter(None, (opts.instruction, feedback_note(opts.feedback))))
    suspect = suspect_deletion(part, body, asked)
    msg = suspect.message if suspect else ("" if hunks else "no changes")
    diff = unified_diff(text, new_text, path or "text")
    return RewriteResult(text, new_text, raw, hunks, diff, m, "ok", msg, suspect)


WARM_CHUNK = 128
"""Tokens per call of a warm-up: how long a rewrite that arrives meanwhile may wait
(about 0.6 s on the 0.5B model and 1.3 s on the 1.5B on 2 CPU cores)."""


@dataclass
class WarmResult:
    status: str  # done | cached | interrupted
    prefix_tokens: int
    """Length of the prompt prefix every rewrite of the file starts with."""
    cached_tokens: int
    """How much of it the KV cache held already (the system text, or all of it)."""
    evaluated_tokens: int
    seconds: float

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "prefixTokens": self.prefix_tokens,
            "cachedTokens": self.cached_tokens,
            "evaluatedTokens": self.evaluated_tokens,
            "ms": round(self.seconds * 1000),
        }


def warm(
    session: ModelSession,
    text: str,
    *,
    path: str | None = None,
    context: tuple[tuple[str, str], ...] = (),
    region: tuple[int, int] | None = None,
    interrupt: threading.Event | None = None,
) -> WarmResult:
    """Prefill the prompt prefix every rewrite of ``text`` shares (system text, context
    files, the whole file), so that the next rewrite of it, whole or a region, prefills
    only its instruction. With ``region`` the prefix goes on through that region's lines,
    for a rewrite of that region. Runs in calls of :data:`WARM_CHUNK` tokens and stops
    between two when ``interrupt`` is set (what was done stays cached)."""
    t = time.perf_counter()
    opts = RewriteOptions(instruction="-", context=tuple(context), region=region)
    prompt = _prompt(session, text, opts, split_lines(text), path)
    # with a region, its lines come right after the whole file: warm through them too
    keep = prompt.part_end if region is not None else prompt.prefix_end
    ids = list(prompt.ids)
    with session.lock:
        target = session.target
        have = shared_prefix(cached_tokens(target), ids[:keep])
        pos, status = have, "cached" if have >= keep else "done"
        while pos < keep:
            if interrupt is not None and interrupt.is_set():
                status = "interrupted"
                break
            n = min(WARM_CHUNK, keep - pos)
            target.eval(ids[pos : pos + n], pos, [])
            pos += n
    res = WarmResult(status, keep, min(have, keep), pos - min(have, keep), time.perf_counter() - t)
    log.info("warm %s: %s", path or "text", res.to_json())
    return res


@dataclass
class AnswerResult:
    text: str
    metrics: Metrics
    citations: list[Citation]
    """The answer's quotes, each checked against the context files (``app.quotes``)."""

    def to_json(self) -> dict:
        return {
            "output": self.text,
            "citations": [c.to_json() for c in self.citations],
            "quotes_found": all_found(self.citations),
            "stats": self.metrics.snapshot(),
        }


def answer(
    session: ModelSession,
    question: str,
    context: list[tuple[str, str]],
    opts: RewriteOptions,
    *,
    on_text: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    style: str = "quote",
) -> AnswerResult:
    """Answer ``question`` from ``context`` files, which are the lookup's draft sources, and
    check the answer's quotes against them (``style``: ``app.prompt.answer_messages``)."""
    prompt = answer_prompt(session.target, question, context, style)
    room = session.target.n_ctx - len(prompt) - 1
    if room < 16:
        raise FileError(
            f"the context files are {len(prompt):,} tokens; the {session.target.n_ctx:,}-token "
            "context has no room left for an answer"
        )
    max_tokens = min(opts.max_tokens or 512, room)
    run = run_prompt(session, prompt, opts, max_tokens, on_text=on_text, cancel=cancel)
    return AnswerResult(run.text, run.metrics, check_citations(run.text, context))
