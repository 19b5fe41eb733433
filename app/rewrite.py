"""Rewrite a text (or a region of it) with a loaded model: the one path every front end uses.

Contract: ``rewrite(session, text, opts, path=..., on_text=..., cancel=...)``
builds the prompt (file and context pieces tokenized on their own, so the
lookup drafter knows their spans), checks that it fits the context, runs the
engine with prompt lookup (or plainly), streams decoded text to ``on_text``,
stops at the closing fence, extracts the block and returns a
``RewriteResult`` with the new full text, hunks, unified diff and the live
``Metrics`` object. It never touches the file on disk: writing is
``app.files.write_atomic``'s job. ``answer`` does the same for a question
grounded in context files (RAG quoting). ``warm(session, text, path=...)``
prefills the prompt prefix every rewrite of a file shares (the file comes before
the region and the instruction), so an editor can have it done while the user
types the instruction; a rewrite or another warm-up interrupts it.

Errors a user can fix come out as ``app.files.FileError`` (too long, empty).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..engine import prefill
from ..engine.combined import CombinedDrafter
from ..engine.decode import GenConfig, generate
from ..engine.draft_model import ModelDrafter
from ..engine.lookup import LookupDrafter
from ..engine.metrics import Metrics
from ..engine.policy import PolicyConfig
from ..engine.sampling import SamplingParams
from ..models.base import ModelError, StreamDecoder
from . import prompt_cache
from .diff import Hunk, compute_hunks, split_lines, unified_diff
from .files import FileError
from .prompt import (
    CTX_MARK,
    FILE_MARK,
    FULL_MARK,
    answer_messages,
    closing_fence_at,
    extract_block,
    rewrite_messages,
)
from .session import ModelSession

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RewriteOptions:
    """What to do and how to decode; one place for the defaults of every front end."""

    instruction: str = ""
    """The edit to make, in the user's words."""
    draft: str = "lookup"
    """'lookup' (prompt lookup from file, context and output), 'none' (plain decoding),
    'model' (the session's draft model) or 'auto' (lookup, plus the draft model if loaded)."""
    k: int | None = None
    """Draft length; None adapts k to measured cost and acceptance."""
    sampling: SamplingParams = field(default_factory=SamplingParams)
    """Temperature (0 = greedy), top-k, top-p, seed."""
    exact: bool = False
    """Verify in sub-blocks whose numerics equal 1-token decoding."""
    max_tokens: int | None = None
    """Cap on generated tokens; None allows the file's length plus a margin."""
    context: tuple[tuple[str, str], ...] = ()
    """(name, text) of context files: shown to the model and used as draft sources."""
    region: tuple[int, int] | None = None
    """0-based [start, end) lines to rewrite; the rest stays byte-identical."""
    prompt_cache: bool = False
    """Keep the KV state of the prompt's file prefix on disk for the next process
    (``app.prompt_cache``); for one-shot front ends such as ``specedit rewrite``."""


@dataclass
class RewriteResult:
    original: str
    new_text: str | None
    raw: str
    hunks: list[Hunk]
    diff: str
    metrics: Metrics
    status: str  # ok | cancelled | no_output
    message: str = ""

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "message": self.message,
            "output": self.new_text,
            "diff": self.diff,
            "hunks": [h.to_json() for h in self.hunks],
            "stats": self.metrics.snapshot(),
        }


_LABELS = {FILE_MARK: "file", FULL_MARK: "whole"}


def build_prompt(session: ModelSession, messages, prefix: str, pieces: dict[str, str]):
    """Render ``messages``, splice tokenized ``pieces`` at their marks; return ids and spans."""
    target = session.target
    rendered = target.chat_prompt(messages) + prefix
    ids: list[int] = []
    spans: list[tuple[int, int, str]] = []
    rest = rendered
    while rest:
        hits = [(rest.find(mark), mark) for mark in pieces if mark in rest]
        if not hits:
            ids += target.tokenize(rest, special=True)
            break
        at, mark = min(hits)
        if at:
            ids += target.tokenize(rest[:at], special=True)
        body = pieces[mark]
        start = len(ids)
        # the user's text is never parsed for special tokens
        ids += target.tokenize(body, special=False) if body else []
        spans.append((start, len(ids), _LABELS.get(mark, "context")))
        rest = rest[at + len(mark) :]
    return ids, spans


def _newline_ids(target) -> list[int]:
    return sorted(
        {t for s in ("\n", "\n\n", "\n    ", "\n        ") for t in target.tokenize(s)[-1:]}
    )


def lookup_drafter(target, spans, prompt_len: int) -> LookupDrafter:
    """The prompt-lookup drafter over ``target``'s vocabulary (byte pieces for resync)."""

    def encode(b: bytes) -> list[int]:
        try:
            return target.tokenize(b.decode("utf-8"), special=False)
        except UnicodeDecodeError:  # the tail of a split character: no clean re-encoding
            return []

    return LookupDrafter(
        spans=spans,
        prompt_len=prompt_len,
        newline_ids=_newline_ids(target),
        piece=lambda t: target.detokenize([t]),
        encode=encode,
    )


def _check_fits(session: ModelSession, n_prompt: int, n_out: int, what: str) -> None:
    n_ctx = session.target.n_ctx
    if n_prompt + n_out + 8 > n_ctx:
        fits = max(0, (n_ctx - (n_prompt - n_out) - 8) // 2)
        raise FileError(
            f"{what} is {n_out:,} tokens; with the prompt and the rewritten copy that needs "
            f"{n_prompt + n_out:,} of the {n_ctx:,}-token context, so about {fits:,} tokens "
            "fit: rewrite a region (--lines) or raise --ctx"
        )


def _drafter(session, opts, spans, prompt, policy):
    """The proposer ``opts.draft`` asks for (None for plain decoding)."""
    if opts.draft == "none":
        return None
    lookup = lookup_drafter(session.target, spans, len(prompt))
    if opts.draft == "lookup" or (opts.draft == "auto" and session.draft is None):
        return lookup
    if session.draft is None:
        raise ModelError("--draft model needs a draft model: --draft model:NAME|PATH")
    model = ModelDrafter(
        session.draft,
        opts.sampling,
        target=session.target,
        policy=policy,
        costs=session.draft_costs,
    )
    return model if opts.draft == "model" else CombinedDrafter(lookup, model, policy)


def _run(session, prompt, spans, opts, max_tokens, fence, on_text, cancel, metrics):
    target = session.target
    cfg = GenConfig(
        max_tokens=max_tokens,
        sampling=opts.sampling,
        policy=PolicyConfig(fixed_k=opts.k),
        speculate=opts.draft != "none",
        exact_block=session.exact_block if opts.exact else None,
    )
    dec = StreamDecoder(target)
    parts: list[str] = []
    state = {"scan": 0}

    def on_tokens(toks: list[int]) -> bool:
        piece = dec.feed(toks)
        if not piece:
            return True
        parts.append(piece)
        if on_text is not None:
            on_text(piece)
        if fence is None:
            return True
        text = "".join(parts)
        at = closing_fence_at(text[max(0, state["scan"] - len(fence) - 2) :], fence)
        state["scan"] = len(text)
        return at < 0

    with session.lock:
        # the engine reuses what the cache holds of the prompt, evaluated in the batches a
        # cold run uses (engine.prefill); the disk cache can only add such a prefix
        marks = _marks(spans)
        disk = opts.prompt_cache and bool(session.cache_key)
        key = f"{session.cache_key}|{prefill.SCHEME}"
        if disk:
            have = prefill.reusable(target, prompt, marks)
            if (got := prompt_cache.restore(target, prompt, key, have=have)) > have:
                prefill.adopt(target, got)  # saved below from a run whose first mark it was
        policy = session.policy(cfg.policy)
        drafter = _drafter(session, opts, spans, prompt, policy)  # owns the draft's cache
        res = generate(
            target,
            prompt,
            cfg,
            drafter,
            on_tokens=on_tokens,
            cancel=cancel,
            metrics=metrics,
            policy=policy,
            cached_prefix=len(prompt),
            prefix_marks=marks,
        )
        if disk and res.metrics.stop_reason != "cancelled":
            # only a prefix evaluated in the batches ``adopt`` records is worth a file
            keep = _prefix_end(spans)
            if prefill.reusable(target, prompt, (keep,), keep) == keep:
                prompt_cache.store(target, prompt, keep, key)
    parts.append(dec.flush())
    text = "".join(parts)
    if fence is not None:  # tokens past the closing fence arrive in the same accepted batch
        at = closing_fence_at(text, fence)
        if at >= 0:
            text = text[: at + len(fence)]
    return text, res.metrics


def _prefix_end(spans) -> int:
    """End of the prompt prefix every rewrite of the file shares: system text, context
    files and the whole file (``app.prompt``), before the region and the instruction."""
    whole = [end for _, end, lab in spans if lab == "whole"]
    return whole[0] if whole else max((end for _, end, _ in spans), default=0)


def _marks(spans) -> list[int]:
    """Where prompts of one file part ways (``engine.prefill``): after the prefix every
    rewrite of the file shares and, in a region rewrite, after the region's lines (where a
    warm-up given the region stops). Every front end derives them from the prompt alone."""
    return sorted({_prefix_end(spans), *(end for _, end, lab in spans if lab == "file")})


def _rewrite_prompt(session, text: str, lines: list[str], opts: RewriteOptions, path):
    """Prompt ids, spans, fence and the text to rewrite (``opts.region`` of ``text``)."""
    if opts.region is not None:
        a, b = opts.region
        if not (0 <= a < b <= max(len(lines), 1)):
            raise FileError(f"region {a}:{b} is outside the text's {len(lines)} lines")
        part = "".join(lines[a:b])
        full = text
    else:
        part, full = text, None
    messages, prefix = rewrite_messages(part, opts.instruction, path, list(opts.context), full)
    fence = prefix.split("\n", 1)[0].rstrip("abcdefghijklmnopqrstuvwxyz+-.")
    pieces = {FILE_MARK: _with_nl(part)}
    if full is not None:
        pieces[FULL_MARK] = _with_nl(full)
    for i, (_, ctext) in enumerate(opts.context):
        pieces[CTX_MARK.format(i)] = _with_nl(ctext)
    prompt, spans = build_prompt(session, messages, prefix, pieces)
    return prompt, spans, fence, part


def _with_nl(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


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
        raise FileError("no instruction given")
    lines = split_lines(text)
    prompt, spans, fence, part = _rewrite_prompt(session, text, lines, opts, path)
    n_part = sum(e - s for s, e, lab in spans if lab == "file")
    _check_fits(session, len(prompt), n_part, path or "the text")
    room = session.target.n_ctx - len(prompt) - 1
    max_tokens = min(opts.max_tokens or int(n_part * 1.3) + 128, room)
    m = metrics or Metrics()
    raw, m = _run(session, prompt, spans, opts, max_tokens, fence, on_text, cancel, m)
    if m.stop_reason == "cancelled":
        return RewriteResult(text, None, raw, [], "", m, "cancelled", "cancelled; nothing changed")
    body = extract_block(raw, fence, prefilled=True)
    if body is None:
        return RewriteResult(
            text,
            None,
            raw,
            [],
            "",
            m,
            "no_output",
            "the model returned no usable output; nothing changed",
        )
    if part.endswith("\n") and not body.endswith("\n"):
        body += "\n"
    if opts.region is not None:
        a, b = opts.region
        new_text = "".join(lines[:a]) + body + "".join(lines[b:])
    else:
        if not text.endswith("\n") and body.endswith("\n") and not raw.endswith("\n" + fence):
            body = body[:-1]
        new_text = body if text.endswith("\n") or not body.endswith("\n") else body[:-1]
    hunks = compute_hunks(text, new_text)
    msg = "" if hunks else "no changes"
    if m.stop_reason in ("max_tokens", "context_full"):
        msg = f"generation stopped at {m.stop_reason.replace('_', ' ')}; the output may be cut"
    diff = unified_diff(text, new_text, path or "text")
    return RewriteResult(text, new_text, raw, hunks, diff, m, "ok", msg)


WARM_CHUNK = prefill.CHUNK
"""Tokens per call of a warm-up (the prefill's batches): how long a rewrite that arrives
meanwhile may wait (about 0.6 s on the 0.5B model and 1.3 s on the 1.5B on 2 CPU cores)."""


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
    prompt, spans, _, _ = _rewrite_prompt(session, text, split_lines(text), opts, path)
    n_part = sum(e - s for s, e, lab in spans if lab == "file")
    _check_fits(session, len(prompt), n_part, path or "the text")
    # the file's end, or with a region the region's end (its lines come after the whole file)
    marks = _marks(spans)
    keep = marks[-1]
    with session.lock:
        # in the batches a rewrite's prefill uses, so that it keeps all of them
        have, pos = prefill.extend(session.target, prompt, keep, marks, interrupt)
    status = "cached" if have >= keep else "done" if pos >= keep else "interrupted"
    res = WarmResult(status, keep, min(have, keep), pos - min(have, keep), time.perf_counter() - t)
    log.info("warm %s: %s", path or "text", res.to_json())
    return res


def answer(
    session: ModelSession,
    question: str,
    context: list[tuple[str, str]],
    opts: RewriteOptions,
    *,
    on_text: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> tuple[str, Metrics]:
    """Answer ``question`` from ``context`` files, which are the lookup's draft sources."""
    messages = answer_messages(question, context)
    pieces = {CTX_MARK.format(i): c for i, (_, c) in enumerate(context)}
    prompt, spans = build_prompt(session, messages, "", pieces)
    room = session.target.n_ctx - len(prompt) - 1
    if room < 16:
        raise FileError(
            f"the context files are {len(prompt):,} tokens; the {session.target.n_ctx:,}-token "
            "context has no room left for an answer"
        )
    max_tokens = min(opts.max_tokens or 512, room)
    text, m = _run(session, prompt, spans, opts, max_tokens, None, on_text, cancel, Metrics())
    return text, m
