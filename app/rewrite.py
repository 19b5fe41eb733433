"""Rewrite a text (or a region of it) with a loaded model: the one path every front end uses.

Contract: ``rewrite(session, text, opts, path=..., on_text=..., cancel=...)`` runs the
edit mode ``opts.edit`` asks for (``edit_mode``) and returns a ``RewriteResult``
(``app.stages``) with the new full text, hunks, unified diff and the live ``Metrics``
object, whose stats say which mode ran (``edit_mode``), why ``auto`` chose a whole
rewrite (``edit_reason``), why it fell back to one (``edit_fallback``) and how long the
text a whole rewrite re-emits is (``file_tokens``):
  * ``blocks`` (``auto``, the default, on a file that fits the context): the model writes
    only the lines that change, as search/replace blocks (``app.edits``) after a prompt
    whose prefix (system text and file) every rewrite of the file shares; when they do
    not apply or the checks flag them, ``auto`` runs a repair round (``app.rounds``: the
    definitions the change goes to rewritten whole, else the blocks asked again with
    why they failed), and when that brings nothing, rewrites the whole file, reusing
    that prefix;
  * ``whole`` (``--edit whole``, a region, or, under ``auto``, a ``broad`` change that
    reaches across the file): the model writes the whole text, or the region, out in
    full (``app.prompt.rewrite_prompt``);
  * a file whose whole rewrite does not fit the context is shown as its outline
    (``app.outline``) plus windows of its lines (``app.prompt.outline_prompt``): a region
    is rewritten with a window around it (``locate+whole``); without a region a short
    first answer locates the definitions the change goes to, and blocks are written for
    them (``locate+blocks``; ``auto`` falls back to rewriting the located lines whole,
    ``locate+whole``, when they are at most ``FALLBACK_TOKENS`` long).
The result's ``status`` is
  * ``ok``: a complete answer; ``suspect`` is set when it deletes lines the instruction
    did not ask to remove (``app.checks``): front ends show it and write it only when
    forced;
  * ``truncated``: the output stopped before its closing fence (the token limit, the
    context, or the model ended early): ``new_text`` is None, and ``hunks`` are only
    those of the lines completed before the cut (never a deletion of the rest). It is
    never written or applied as a whole;
  * ``cancelled``, ``no_output``: nothing usable; nothing changed.
A block that cannot be placed is never half-applied. It never touches the file on disk:
writing is ``app.files.write_atomic``'s job.
``answer`` does the same for a question grounded in context files (RAG quoting) and
returns an ``AnswerResult``: the text, the ``Metrics`` and the answer's citations, each
checked against the files (``app.quotes``).
``warm(session, text, path=...)`` prefills the prompt prefix every rewrite of a file
shares (the file, or a big file's outline, comes before the region and the
instruction), so an editor can have it done while the user types the instruction; a
rewrite or another warm-up interrupts it.

Errors a user can fix come out as ``engine.backend.UserError`` (too long, empty).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..engine import prefill
from ..engine.backend import UserError
from ..engine.metrics import Metrics
from . import edits
from .diff import split_lines
from .files import FileError
from .generation import run_prompt
from .intent import EVERYWHERE, read_intent
from .loaded_model import LoadedModel
from .names import whole_word
from .options import EDIT_MODES, RewriteOptions
from .outline import Outline, outline, widen
from .prompt import Prompt, answer_prompt, outline_prompt, rewrite_prompt
from .quotes import Citation, all_found, check_citations
from .rounds import redo_definitions, retry_blocks, round_targets
from .stages import (
    Context,
    Fallback,
    RewriteResult,
    check_fits,
    run_blocks,
    run_locate,
    run_whole,
)
from .syntax import definitions, language_for_path

log = logging.getLogger(__name__)

__all__ = ["AnswerResult", "RewriteResult", "WarmResult", "answer", "edit_mode", "rewrite", "warm"]

WINDOW_TOKENS = 768
"""Tokens of the lines around a region that a big file's prompt shows with it."""
OUTLINE_SHARE = 0.4
"""At most this share of the context goes to a big file's outline."""
FALLBACK_TOKENS = 1024
"""A big file's located lines are rewritten whole, when blocks fail, up to this length."""


BROAD_LINES = 10
"""A rename of a name that is on at least this many lines of the file is a broad edit."""

_ACROSS = re.compile(r"\b(type\s+hints?|(?:type\s+)?annotations?|docstrings?)\b", re.I)
_WORD = re.compile(r"[A-Za-z_]\w*")


def broad(instruction: str, text: str, path: str | None = None) -> str:
    """Why ``instruction`` changes ``text`` across the file ("" when it names a few places):
    it says so (``everywhere``, ``throughout``, ``every …``, ``all the calls``, ``the whole
    file``); it renames a name that is on ``BROAD_LINES`` lines or more; or it asks for
    type hints or docstrings. The last two only when it names no definition of the file
    (besides the renamed name): ``In Repr.repr_dict, rename pieces to parts`` is local.
    Search/replace blocks for such a change repeat most of the file twice, so ``auto``
    writes the whole file at once instead."""
    said = EVERYWHERE.search(instruction)
    if said:
        return f"the instruction asks for a change across the file ({said.group(0)!r})"
    rename, across = read_intent(instruction, text, path).rename, _ACROSS.search(instruction)
    if not rename and not across:
        return ""
    old = rename[0] if rename else ""
    names = {d.name.rsplit(".", 1)[-1] for d in definitions(text, language_for_path(path))}
    if (set(_WORD.findall(instruction)) - {old}) & names:
        return ""
    if rename:
        pattern = whole_word(old)
        n = sum(1 for line in text.splitlines() if pattern.search(line))
        if n >= BROAD_LINES:
            return f"the instruction renames {old!r}, which is on {n} lines of the file"
        return ""
    return f"the instruction asks for {across.group(0)} and names no definition of the file"


def edit_mode(opts: RewriteOptions, text: str, path: str | None = None) -> tuple[str, str]:
    """The edit mode a rewrite of ``text`` runs first, ``whole`` (the text or the region is
    written out in full) or ``blocks`` (search/replace blocks, ``app.edits``), and why
    ``auto`` chose ``whole`` ("" otherwise): the change is ``broad``."""
    if opts.edit not in EDIT_MODES:
        raise UserError(f"unknown edit mode {opts.edit!r}: {', '.join(EDIT_MODES)}")
    if opts.edit == "whole" or opts.region is not None or edits.has_markers(text):
        return "whole", ""
    why = broad(opts.instruction, text, path) if opts.edit == "auto" else ""
    return ("whole", why) if why else ("blocks", "")


def _whole_prompt(ctx: Context, edit: str = "whole") -> Prompt:
    o = ctx.opts
    return rewrite_prompt(
        ctx.session.target,
        ctx.text,
        o.instruction,
        lines=ctx.lines,
        path=ctx.path,
        context=o.context,
        region=o.region,
        feedback=o.feedback,
        edit=edit,
    )


def rewrite(
    session: LoadedModel,
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
    mode, why = edit_mode(opts, text, path)
    m = metrics if metrics is not None else Metrics()
    ctx = Context(session, text, split_lines(text), opts, path, on_text, cancel, m)
    ctx.edit_reason = why
    prompt = _whole_prompt(ctx)
    ctx.file_tokens = prompt.part_tokens
    # a broad change too: the whole file cannot be written
    if not prompt.fits(ctx.session.target.n_ctx):
        ctx.edit_reason = ""
        return _big(ctx, prompt, "blocks" if why else mode)
    if mode == "blocks":
        res = run_blocks(ctx, _whole_prompt(ctx, "blocks"))
        if isinstance(res, RewriteResult):
            return ctx.close(_mend(ctx, res) or res, "blocks")
        mended = _mend(ctx, res)
        if mended is not None:
            return ctx.close(mended, "blocks", res.why)
        log.info("edit blocks given up (%s): rewriting the whole file", res.why)
        ctx.next_stage()
        return ctx.close(run_whole(ctx, prompt), "whole", res.why)
    return ctx.close(run_whole(ctx, prompt), "whole")


def _mend(ctx: Context, first: RewriteResult | Fallback) -> RewriteResult | None:
    """Under ``auto``, the repair rounds (``app.rounds``) for a blocks answer that could not
    be placed or that the checks flag: the definitions it goes to rewritten whole, the
    better result of the two (fewer verdicts; the first on a tie); for blocks that did not
    place and no definition that came back, the blocks asked once more. None when no
    round ran or it brought nothing back."""
    if ctx.opts.edit != "auto" or ctx.metrics.stop_reason == "cancelled":
        return None
    res = None
    defs = round_targets(ctx, first, ctx.intent)
    if defs:
        log.info("repair round: rewriting %s whole", ", ".join(d.name for d in defs))
        res = redo_definitions(ctx, first, defs)
    if res is not None and res.status == "cancelled":
        return res
    if isinstance(first, RewriteResult):
        return None if res is None or len(res.verdicts) >= len(first.verdicts) else res
    return res if res is not None else retry_blocks(ctx, first)


# ---- files too long to show whole -------------------------------------------------------


def _count(ctx: Context):
    tok = ctx.session.target.tokenize
    return lambda s: len(tok(s, special=False)) if s else 0


def _outline(ctx: Context) -> Outline:
    """The file's outline, cut to its top-level entries when it would crowd the context."""
    out = outline(ctx.text, ctx.path)
    count = _count(ctx)
    budget = int(ctx.session.target.n_ctx * OUTLINE_SHARE)
    if count(out.text) > budget:
        top = tuple(e for e in out.entries if not e.shown[:1].isspace())
        out = Outline(top, out.n_lines)
    while count(out.text) > budget and len(out.entries) > 1:
        out = Outline(out.entries[::2], out.n_lines)
    return out


def _big_prompt(ctx: Context, out: Outline, **kw) -> Prompt:
    """A big file's prompt (``app.prompt.outline_prompt``) for ``ctx``: its outline ``out``,
    and ``kw``'s windows, region and what to ask."""
    o = ctx.opts
    return outline_prompt(
        ctx.session.target,
        ctx.text,
        o.instruction,
        out.text,
        lines=ctx.lines,
        path=ctx.path,
        context=o.context,
        **kw,
    )


def _region_name(ctx: Context, region: tuple[int, int]) -> str:
    return f"lines {region[0] + 1}:{region[1]} of {ctx.path or 'the text'}"


def _big(ctx: Context, whole: Prompt, mode: str) -> RewriteResult:
    """A file whose whole rewrite does not fit the context (module docstring)."""
    opts, n_ctx = ctx.opts, ctx.session.target.n_ctx
    name = ctx.path or "the text"
    if opts.region is None and mode == "whole":
        raise FileError(
            f"{name} is {whole.part_tokens:,} tokens; a whole rewrite needs "
            f"{len(whole) + whole.part_tokens:,} of the {n_ctx:,}-token context: let the "
            "model write only the lines that change (--edit auto, the default), rewrite a "
            "region (--lines) or raise --ctx"
        )
    out = _outline(ctx)
    if opts.region is not None:
        return _big_region(ctx, out, opts.region, fallback="")
    locate = _big_prompt(ctx, out, ask="locate")
    ranges = run_locate(ctx, locate, out)
    if ctx.metrics.stop_reason == "cancelled":
        return ctx.close(ctx.result("cancelled", "cancelled; nothing changed"), "locate")
    if not ranges:
        msg = (
            f"the model could not tell where in {name} the change goes; nothing changed: "
            "name the definition in the instruction or rewrite a region (--lines)"
        )
        return ctx.close(ctx.result("no_output", msg), "locate")
    ctx.next_stage()
    shown = sum(_count(ctx)("".join(ctx.lines[a:b])) for a, b in ranges)
    prompt = _big_prompt(ctx, out, windows=ranges, ask="blocks")
    if not prompt.fits(n_ctx, min(shown, 64)):
        raise FileError(
            f"the change goes to lines {', '.join(f'{a + 1}:{b}' for a, b in ranges)} of "
            f"{name}, {shown:,} tokens; with the outline that needs {len(prompt):,} of the "
            f"{n_ctx:,}-token context: rewrite a smaller region (--lines) or raise --ctx"
        )
    res = run_blocks(ctx, prompt, within=ranges)
    if isinstance(res, RewriteResult):
        return ctx.close(res, "locate+blocks")
    why = res.why
    span = (ranges[0][0], ranges[-1][1])
    if _count(ctx)("".join(ctx.lines[span[0] : span[1]])) > FALLBACK_TOKENS:
        where = _region_name(ctx, span)
        msg = (
            f"the edit blocks cannot be applied ({why}); nothing changed: {where} are too "
            "long to rewrite whole here; rewrite them, or fewer, with --lines"
        )
        return ctx.close(ctx.result("no_output", msg), "locate+blocks", why)
    log.info("edit blocks given up (%s): rewriting the located lines", why)
    ctx.next_stage()
    return _big_region(ctx, out, span, fallback=why)


def _region_prompt(ctx: Context, out: Outline, region: tuple[int, int]) -> Prompt:
    """A big file's prompt to rewrite ``region`` whole: the outline, a window of lines
    around the region the user chose (dropped when it does not fit: the region is what
    must fit; located lines are whole definitions and go without), the region."""
    opts = ctx.opts
    part = "".join(ctx.lines[region[0] : region[1]])
    count = _count(ctx)
    window = widen(region, ctx.lines, count, count(part) + WINDOW_TOKENS)
    for windows in ([window], []) if opts.region is not None else ([],):
        prompt = _big_prompt(ctx, out, windows=windows, region=region, ask="whole")
        if prompt.fits(ctx.session.target.n_ctx):
            break
    return prompt


def _big_region(ctx: Context, out: Outline, region: tuple[int, int], fallback: str):
    """Rewrite ``region`` of a big file whole (``_region_prompt``)."""
    prompt = _region_prompt(ctx, out, region)
    check_fits(
        ctx.session,
        prompt,
        _region_name(ctx, region),
        "rewrite a smaller region (--lines) or raise --ctx",
    )
    mode = "whole" if ctx.opts.region is not None else "locate+whole"
    return ctx.close(run_whole(ctx, prompt), mode, fallback)


def first_prompt(
    session: LoadedModel, text: str, opts: RewriteOptions, path: str | None
) -> tuple[Prompt, int]:
    """The prompt a rewrite of ``text`` starts with and how much of it every such rewrite
    shares (through the region when there is one): what a warm-up prefills."""
    ctx = Context(session, text, split_lines(text), opts, path, None, None, Metrics())
    prompt = _whole_prompt(ctx)
    if not prompt.fits(ctx.session.target.n_ctx):
        out = _outline(ctx)
        if opts.region is not None:
            prompt = _region_prompt(ctx, out, opts.region)
        else:
            prompt = _big_prompt(ctx, out)
    return prompt, prompt.part_end if opts.region is not None else prompt.prefix_end


@dataclass
class WarmResult:
    status: str  # done | cached | interrupted | remote (the engine keeps its own cache)
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
    session: LoadedModel,
    text: str,
    *,
    path: str | None = None,
    context: tuple[tuple[str, str], ...] = (),
    region: tuple[int, int] | None = None,
    interrupt: threading.Event | None = None,
) -> WarmResult:
    """Prefill the prompt prefix every rewrite of ``text`` shares (system text, context
    files, the whole file or a big file's outline), so that the next rewrite of it, whole
    or a region, prefills only its instruction. With ``region`` the prefix goes on through that region's lines,
    for a rewrite of that region. Runs in the prefill's batches (``engine.prefill``: a
    rewrite that arrives meanwhile waits for one at most) and stops between two when
    ``interrupt`` is set (what was done stays cached). On a remote engine
    (``--engine``) nothing is read here: the status is ``remote`` (the server's own
    prefix cache, if it has one, keeps what the rewrite sends)."""
    t = time.perf_counter()
    opts = RewriteOptions(instruction="-", context=tuple(context), region=region)
    # with a region, its lines come right after the file: warm through them too
    prompt, keep = first_prompt(session, text, opts, path)
    if session.remote is not None:
        return WarmResult("remote", keep, 0, 0, time.perf_counter() - t)
    with session.lock:
        # in the batches a rewrite's prefill uses, so that it keeps all of them
        have, pos = prefill.extend(session.target, list(prompt.ids), keep, prompt.marks, interrupt)
    status = "cached" if have >= keep else "done" if pos >= keep else "interrupted"
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
    session: LoadedModel,
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
    room = prompt.room(session.target.n_ctx)
    if room < 16:
        raise FileError(
            f"the context files are {len(prompt):,} tokens; the {session.target.n_ctx:,}-token "
            "context has no room left for an answer"
        )
    max_tokens = min(opts.max_tokens or 512, room)
    run = run_prompt(session, prompt, opts, max_tokens, on_text=on_text, cancel=cancel)
    return AnswerResult(run.text, run.metrics, check_citations(run.text, context))
