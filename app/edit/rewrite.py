"""Rewrite a text (or a region of it) with a loaded model: the one path every front end uses.

Contract: ``rewrite(loaded, text, opts, path=..., on_text=..., cancel=...)`` reads the request
once (``app.edit.request``), runs the ``Plan`` ``plan_rewrite`` makes once (every stage: the
mode, why, its prompts, rounds, fallback) and returns a ``RewriteResult`` (``app.edit.result``). Modes:
``blocks`` (``auto``'s default: search/replace blocks, ``app.edit.edits``, after the model's
plan with ``first`` ``plan``, ``app.edit.plan_note``; if they fail or a check flags them, one
repair round, ``app.edit.rounds``, then a whole rewrite), ``whole`` (the text or region written
out: ``--edit whole``, a region, or a ``broad`` change), and for a file too long to show whole,
its outline plus windows (``locate+whole``, ``locate+blocks``). The result is the model's
answer, only its copies repaired (``app.edit.repair``), checked (``app.check.checks``).
``status``: ``ok`` (``suspect`` set when a check flags it), ``truncated`` (``new_text`` None; hunks
of the completed lines only, never a deletion of the rest), ``cancelled`` or ``no_output``.
Nothing is half-applied; no file is written here. ``warm(loaded, text, path=...)`` prefills a
file's shared prompt prefix (a rewrite interrupts it). A problem the user can fix: ``UserError``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum

from ...engine import prefill
from ...engine.backend import UserError
from ...engine.metrics import Metrics, StopReason
from ..code.outline import Outline, outline, widen
from ..options import EDIT_MODES, RewriteOptions
from ..runtime.loaded_model import LoadedModel
from ..runtime.prompt import Prompt
from ..store.files import DoesNotFit
from . import edits
from .plan_note import plan_note, with_note
from .prompts import outline_prompt, rewrite_prompt
from .request import Request, read_request
from .result import EditMode, RewriteResult, Status
from .rounds import (
    WHOLE_VERDICTS,
    again_whole,
    definition_tokens,
    innermost,
    redo_definitions,
    retry_blocks,
    round_targets,
    short_enough,
)
from .stages import (
    Fallback,
    RewriteRun,
    check_fits,
    run_blocks,
    run_locate,
    run_whole,
)

log = logging.getLogger(__name__)

__all__ = ["RewriteResult", "WarmResult", "edit_mode", "rewrite", "warm"]

WINDOW_TOKENS = 768
"""Tokens of the lines around a region that a big file's prompt shows with it."""
OUTLINE_SHARE = 0.4
"""At most this share of the context goes to a big file's outline."""
FALLBACK_TOKENS = 1024
"""A big file's located lines are rewritten whole, when blocks fail, up to this length."""


class Start(Enum):
    """How a rewrite starts (``Plan.mode``)."""

    WHOLE = "whole"
    """The text, or the region, written out in full."""
    BLOCKS = "blocks"
    """Search/replace blocks (``app.edit.edits``)."""
    OUTLINE = "outline"
    """The whole rewrite does not fit the context: the file is shown as its outline."""


def edit_mode(opts: RewriteOptions, request: Request) -> tuple[Start, str]:
    """The edit mode a rewrite of ``request`` runs first, ``WHOLE`` (the text or the region is
    written out in full) or ``BLOCKS`` (search/replace blocks, ``app.edit.edits``), and why
    ``auto`` chose ``WHOLE`` ("" otherwise): the change is ``broad``."""
    if opts.edit not in EDIT_MODES:
        raise UserError(f"unknown edit mode {opts.edit!r}: {', '.join(EDIT_MODES)}")
    if opts.edit == "whole" or opts.region is not None or edits.has_markers(request.source.text):
        return Start.WHOLE, ""
    why = request.broad if opts.edit == "auto" else ""
    return (Start.WHOLE, why) if why else (Start.BLOCKS, "")


def _whole_prompt(
    run: RewriteRun,
    edit: str = "whole",
    feedback: tuple[str, str] | None = None,
    shown: tuple[tuple[str, int, int], ...] = (),
    format_first: bool = False,
) -> Prompt:
    o = run.opts
    return rewrite_prompt(
        run.loaded.target,
        run.text,
        o.instruction,
        lines=run.lines,
        path=run.path,
        context_files=o.context_files,
        region=o.region,
        feedback=feedback or o.feedback,
        edit=edit,
        shown=shown,
        format_first=format_first,
    )


SHOWN_TOKENS = 384
"""``first`` ``numbered`` shows the named definitions again only when they are at most this
many tokens together (each token after the file is prefilled after Enter)."""


def shown_definitions(run: RewriteRun) -> tuple[tuple[str, int, int], ...]:
    """``RewriteOptions.first`` ``numbered``: the definitions the instruction names (the
    innermost; else the one its opening names), as ``(name, start, end)`` for the blocks
    prompt to show again with their line numbers; none when one of them holds definitions of
    its own (a class: the model copies it whole) or they are together longer than
    ``SHOWN_TOKENS``."""
    defs = innermost(list(run.intent.named or run.intent.place))
    every = run.source.definitions
    if not defs or any(e is not d and d.start <= e.start < d.end for d in defs for e in every):
        return ()
    if sum(definition_tokens(run, d) for d in defs) > SHOWN_TOKENS:
        return ()
    return tuple((d.name, d.start, d.end) for d in defs)


@dataclass(frozen=True)
class Plan:
    """Every stage of a rewrite (``plan_rewrite``), decided once, each prompt built once: the
    first answer (``mode``, ``prompt``), the repair round (``rounds``) and the whole rewrite
    that blocks given up fall back to (``whole``, under ``auto``)."""

    mode: Start
    """How it starts; ``OUTLINE``: the whole rewrite does not fit the context (``_big``)."""
    prompt: Prompt
    """The first stage's prompt: the whole rewrite's, the blocks answer's, or (``outline``)
    the outline prompt that locates the change (a region's: its whole rewrite); every
    stage of a big file shares its prefix."""
    reason: str
    """Why ``auto`` chose a whole rewrite ("" when it did not)."""
    whole: Prompt
    """The whole rewrite's prompt: its fit decides ``outline``; blocks given up fall back
    to it; its ``part_tokens`` are the stats' ``file_tokens``."""
    outline: Outline | None = None
    """The big file's outline (``outline`` only)."""
    problem: str = ""
    """Why the plan cannot run ("" when it can): a whole rewrite asked of a big file."""
    auto: bool = False
    """``--edit auto``: blocks that fail are given up (``Fallback``) for the whole rewrite or a
    round, and capped at ``BLOCKS_SHARE``; forced (``--edit blocks``), their failure is the
    result."""
    rounds: bool = False
    """A blocks answer that fails or is flagged, and a flagged whole rewrite, are sent back
    to the model once (``app.edit.rounds``): ``auto`` without a region."""
    guard: bool = False
    """The first blocks answer's SEARCH sides are guarded (``RewriteOptions.first``
    ``guarded``, under ``auto``)."""
    regions_first: bool = False
    """The named definitions are rewritten whole as the first answer (``first`` ``region``,
    under ``auto``)."""


def plan_rewrite(run: RewriteRun) -> Plan:
    """The edit mode (``edit_mode``), why, the prompts and the later stages of ``run``'s
    rewrite."""
    opts, n_ctx, name = run.opts, run.loaded.target.n_ctx, run.path or "the text"
    mode, why = edit_mode(opts, run.request)
    auto = opts.edit == "auto"
    policy = {
        "auto": auto,
        "rounds": auto and opts.region is None,
        "guard": auto and opts.first == "guarded",
        "regions_first": auto and opts.first == "region",
    }
    whole = _whole_prompt(run)
    if whole.fits(n_ctx):
        if mode is Start.BLOCKS:
            shown = shown_definitions(run) if auto and opts.first == "numbered" else ()
            early = auto and opts.first == "early"
            first = _whole_prompt(run, "blocks", shown=shown, format_first=early)
            return Plan(Start.BLOCKS, first, "", whole, **policy)
        return Plan(Start.WHOLE, whole, why, whole, **policy)
    # a broad change too: the whole file cannot be written, its changes can
    out = _outline(run)
    if opts.region:
        first = _region_prompt(run, out, opts.region)
    else:
        first = _big_prompt(run, out, ask="locate")
    problem = ""
    if opts.region is None and mode is Start.WHOLE and not why:
        problem = (
            f"{name} is {whole.part_tokens:,} tokens; a whole rewrite needs "
            f"{len(whole) + whole.part_tokens:,} of the {n_ctx:,}-token context: let the "
            "model write only the lines that change (--edit auto, the default), rewrite a "
            "region (--lines) or raise --ctx"
        )
    return Plan(Start.OUTLINE, first, "", whole, out, problem, **policy)


def rewrite(
    loaded: LoadedModel,
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
    m = metrics if metrics is not None else Metrics()
    run = RewriteRun(loaded, read_request(opts, text, path), opts, on_text, cancel, m)
    if opts.first == "plan" and opts.edit == "auto" and opts.region is None:
        run.plan_note = plan_note(run)
        if m.stop_reason == StopReason.CANCELLED:
            return run.close(run.result(Status.CANCELLED, "cancelled; nothing changed"), "")
        run.next_stage()
        run.opts = replace(opts, instruction=with_note(opts.instruction, run.plan_note))
    plan = plan_rewrite(run)
    run.edit_reason, run.file_tokens = plan.reason, plan.whole.part_tokens
    if plan.mode is Start.OUTLINE:
        return _big(run, plan)
    if plan.mode is Start.BLOCKS:
        if plan.regions_first:
            made = _named_regions(run)
            if made is not None:
                return run.close(made, EditMode.REGION)
        res = run_blocks(run, plan.prompt, guard=plan.guard, fallback=plan.auto)
        if isinstance(res, RewriteResult):
            return run.close(_mend(run, plan, res) or res, EditMode.BLOCKS)
        mended = _mend(run, plan, res)
        if mended is not None:
            return run.close(mended, EditMode.BLOCKS, res.why)
        log.info("edit blocks given up (%s): rewriting the whole file", res.why)
        run.next_stage()
        return run.close(run_whole(run, plan.whole), EditMode.WHOLE, res.why)
    return run.close(_whole_round(run, plan, run_whole(run, plan.prompt)), EditMode.WHOLE)


def _whole_round(run: RewriteRun, plan: Plan, first: RewriteResult) -> RewriteResult:
    """With ``plan.rounds``, a whole rewrite the checks flag is asked once more, told what
    they saw (``app.edit.rounds.again_whole``); the better of the two (fewer verdicts; the
    first on a tie)."""
    reasons = {v.reason for v in first.verdicts}
    if not plan.rounds or not reasons & WHOLE_VERDICTS:
        return first
    res = again_whole(run, first, lambda fb: _whole_prompt(run, feedback=fb))
    if res is not None and (
        res.status is Status.CANCELLED or len(res.verdicts) < len(first.verdicts)
    ):
        return res
    return first


def _named_regions(run: RewriteRun) -> RewriteResult | None:
    """``RewriteOptions.first`` ``region``: each definition the instruction names (the
    innermost, each ``app.edit.rounds.short_enough``) rewritten whole as a region of the file,
    as the first answer; None when it names none (blocks then)."""
    defs = innermost(list(run.intent.named))
    if not defs or not short_enough(run, defs):
        return None
    res = redo_definitions(run, None, defs, label=None)
    if res is None:
        run.answered = True  # nothing came back: blocks now, their answer is not the first
    return res


def _mend(run: RewriteRun, plan: Plan, first: RewriteResult | Fallback) -> RewriteResult | None:
    """With ``plan.rounds``, the repair rounds (``app.edit.rounds``) for a blocks answer that could not
    be placed or that the checks flag: the definitions it goes to rewritten whole, the
    better result of the two (fewer verdicts; the first on a tie); for blocks that did not
    place and no definition that came back, the blocks asked once more. None when no
    round ran or it brought nothing back."""
    if not plan.rounds or run.metrics.stop_reason == StopReason.CANCELLED:
        return None
    res = None
    defs = round_targets(run, first, run.intent)
    if defs:
        log.info("repair round: rewriting %s whole", ", ".join(d.name for d in defs))
        res = redo_definitions(run, first, defs)
    if res is not None and res.status is Status.CANCELLED:
        return res
    if isinstance(first, RewriteResult):
        return None if res is None or len(res.verdicts) >= len(first.verdicts) else res
    return res if res is not None else retry_blocks(run, first)


# ---- files too long to show whole -------------------------------------------------------


def _count(run: RewriteRun):
    tok = run.loaded.target.tokenize
    return lambda s: len(tok(s, special=False)) if s else 0


def _outline(run: RewriteRun) -> Outline:
    """The file's outline, cut to its top-level entries when it would crowd the context."""
    out = outline(run.source)
    count = _count(run)
    budget = int(run.loaded.target.n_ctx * OUTLINE_SHARE)
    if count(out.text) > budget:
        top = tuple(e for e in out.entries if not e.shown[:1].isspace())
        out = Outline(top, out.n_lines)
    while count(out.text) > budget and len(out.entries) > 1:
        out = Outline(out.entries[::2], out.n_lines)
    return out


def _big_prompt(run: RewriteRun, out: Outline, **kw) -> Prompt:
    """A big file's prompt (``app.edit.prompts.outline_prompt``) for ``run``: its outline ``out``,
    and ``kw``'s windows, region and what to ask."""
    o = run.opts
    return outline_prompt(
        run.loaded.target,
        run.text,
        o.instruction,
        out.text,
        lines=run.lines,
        path=run.path,
        context_files=o.context_files,
        **kw,
    )


def _region_name(run: RewriteRun, region: tuple[int, int]) -> str:
    return f"lines {region[0] + 1}:{region[1]} of {run.path or 'the text'}"


def _big(run: RewriteRun, plan: Plan) -> RewriteResult:
    """A file whose whole rewrite does not fit the context (module docstring)."""
    opts, n_ctx = run.opts, run.loaded.target.n_ctx
    name = run.path or "the text"
    if plan.problem:
        raise DoesNotFit(plan.problem)
    out = plan.outline
    assert out is not None
    if opts.region is not None:
        return _big_region(run, out, opts.region, fallback="", prompt=plan.prompt)
    ranges = run_locate(run, plan.prompt, out)  # the plan's first prompt asks to locate
    if run.metrics.stop_reason == StopReason.CANCELLED:
        return run.close(
            run.result(Status.CANCELLED, "cancelled; nothing changed"), EditMode.LOCATE
        )
    if not ranges:
        msg = (
            f"the model could not tell where in {name} the change goes; nothing changed: "
            "name the definition in the instruction or rewrite a region (--lines)"
        )
        return run.close(run.result(Status.NO_OUTPUT, msg), EditMode.LOCATE)
    run.next_stage()
    shown = sum(_count(run)("".join(run.lines[a:b])) for a, b in ranges)
    prompt = _big_prompt(run, out, windows=ranges, ask="blocks")
    if not prompt.fits(n_ctx, min(shown, 64)):
        raise DoesNotFit(
            f"the change goes to lines {', '.join(f'{a + 1}:{b}' for a, b in ranges)} of "
            f"{name}, {shown:,} tokens; with the outline that needs {len(prompt):,} of the "
            f"{n_ctx:,}-token context: rewrite a smaller region (--lines) or raise --ctx"
        )
    res = run_blocks(run, prompt, within=ranges, fallback=plan.auto)
    if isinstance(res, RewriteResult):
        return run.close(res, EditMode.LOCATE_BLOCKS)
    why = res.why
    span = (ranges[0][0], ranges[-1][1])
    if _count(run)("".join(run.lines[span[0] : span[1]])) > FALLBACK_TOKENS:
        where = _region_name(run, span)
        msg = (
            f"the edit blocks cannot be applied ({why}); nothing changed: {where} are too "
            "long to rewrite whole here; rewrite them, or fewer, with --lines"
        )
        return run.close(run.result(Status.NO_OUTPUT, msg), EditMode.LOCATE_BLOCKS, why)
    log.info("edit blocks given up (%s): rewriting the located lines", why)
    run.next_stage()
    return _big_region(run, out, span, fallback=why)


def _region_prompt(run: RewriteRun, out: Outline, region: tuple[int, int]) -> Prompt:
    """A big file's prompt to rewrite ``region`` whole: the outline, a window of lines
    around the region the user chose (dropped when it does not fit: the region is what
    must fit; located lines are whole definitions and go without), the region."""
    opts = run.opts
    part = "".join(run.lines[region[0] : region[1]])
    count = _count(run)
    window = widen(region, run.lines, count, count(part) + WINDOW_TOKENS)
    for windows in ([window], []) if opts.region is not None else ([],):
        prompt = _big_prompt(run, out, windows=windows, region=region, ask="whole")
        if prompt.fits(run.loaded.target.n_ctx):
            break
    return prompt


def _big_region(
    run: RewriteRun,
    out: Outline,
    region: tuple[int, int],
    fallback: str,
    prompt: Prompt | None = None,
) -> RewriteResult:
    """Rewrite ``region`` of a big file whole (``prompt``, else ``_region_prompt``)."""
    prompt = prompt or _region_prompt(run, out, region)
    check_fits(
        run.loaded,
        prompt,
        _region_name(run, region),
        "rewrite a smaller region (--lines) or raise --ctx",
    )
    mode = EditMode.WHOLE if run.opts.region is not None else EditMode.LOCATE_WHOLE
    return run.close(run_whole(run, prompt), mode, fallback)


def first_prompt(
    loaded: LoadedModel, text: str, opts: RewriteOptions, path: str | None
) -> tuple[Prompt, int]:
    """The prompt a rewrite of ``text`` starts with (``plan_rewrite``) and how much of it
    every such rewrite shares (through the region when there is one): what a warm-up
    prefills."""
    run = RewriteRun(loaded, read_request(opts, text, path), opts, None, None, Metrics())
    prompt = plan_rewrite(run).prompt
    return prompt, prompt.part_end if opts.region is not None else prompt.warm_end


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
    loaded: LoadedModel,
    text: str,
    *,
    path: str | None = None,
    context_files: tuple[tuple[str, str], ...] = (),
    region: tuple[int, int] | None = None,
    interrupt: threading.Event | None = None,
    first: str = "blocks",
) -> WarmResult:
    """Prefill the prompt prefix every rewrite of ``text`` shares (system text, context
    files, the whole file or a big file's outline), so that the next rewrite of it, whole
    or a region, prefills only its instruction. With ``region`` the prefix goes on through that
    region's lines, for a rewrite of that region; with ``first`` ``early``, through the blocks
    prompt's format text (``Prompt.warm_end``). Runs in the prefill's batches
    (``engine.prefill``: a rewrite that arrives meanwhile waits for one at most) and stops
    between two when ``interrupt`` is set (what was done stays cached). On a remote engine
    (``--engine``) nothing is read here: the status is ``remote`` (the server's own
    prefix cache, if it has one, keeps what the rewrite sends)."""
    t = time.perf_counter()
    opts = RewriteOptions(
        instruction="-", context_files=tuple(context_files), region=region, first=first
    )
    # with a region, its lines come right after the file: warm through them too
    prompt, keep = first_prompt(loaded, text, opts, path)
    if not loaded.runner.local:
        return WarmResult("remote", keep, 0, 0, time.perf_counter() - t)
    with loaded.lock:
        # in the batches a rewrite's prefill uses, so that it keeps all of them
        have, pos = prefill.extend(loaded.target, list(prompt.ids), keep, prompt.marks, interrupt)
    status = "cached" if have >= keep else "done" if pos >= keep else "interrupted"
    res = WarmResult(status, keep, min(have, keep), pos - min(have, keep), time.perf_counter() - t)
    log.info("warm %s: %s", path or "text", res.to_json())
    return res
