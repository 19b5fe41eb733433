"""One generation of a rewrite, read into a result: the stages ``app.edit.rewrite`` chains.

One rewrite is one ``RewriteRun`` (the model, the request read once, the options, the metrics);
every stage runs through ``app.runtime.generation.run_prompt`` on ``run.metrics``, which keeps
the figures of the stages before, so a result's ``RewriteStats`` (the engine's figures with the
run's labels) count every stage. ``finished`` reads each answer into one ``Change``.
  * ``RewriteResult`` (``app.edit.result``) is what every front end gets back.
  * ``run_whole(run, prompt)``: the whole text, or the prompt's region, written out in full.
  * ``run_blocks(run, prompt, within=..., guard=False)``: search/replace blocks placed in the
    file (``app.edit.edits``); with ``fallback`` (the plan's ``auto``), a ``Fallback`` (why, and
    the answer) instead of a failed result, and nothing applied.
  * ``run_locate(run, prompt, outline)``: the line ranges of a big file a change goes to.
  * ``check_fits(loaded, prompt, what, fix)`` raises ``DoesNotFit`` naming the sizes and the fix.
``on_text`` gets a whole (or region) rewrite as it streams; a blocks stage sends the new text at
once when its blocks apply, so live views read every mode alike.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from ...engine.metrics import Metrics, StopReason
from ..check.checks import suspect_deletion, vouch
from ..check.intent import Intent
from ..code.diff import apply_hunks, preview_in_file, unified_diff
from ..code.outline import Outline, read_located
from ..code.source import Change, Source
from ..options import RewriteOptions
from ..runtime.generation import run_prompt
from ..runtime.loaded_model import LoadedModel
from ..runtime.prompt import Prompt
from ..store.files import DoesNotFit
from . import edits
from .repair import repair
from .request import Request
from .result import EditMode, RewriteResult, RewriteStats, StageTime, Status
from .review import review, threshold, verdict
from .search_guard import SearchGuard

log = logging.getLogger(__name__)

BLOCKS_MARGIN = 256
"""Output tokens a blocks answer may take beyond its share of the file's length."""
BLOCKS_SHARE = 0.5
"""Under ``auto``, a blocks answer may be this share of the file's length (plus the
margin): each changed line is written twice, so a longer answer costs more than the whole
rewrite it falls back to would have. ``--edit blocks`` may take the whole length."""
LOCATE_TOKENS = 160
"""Output cap of a locate answer (a few outline lines)."""


class GiveUp(Enum):
    """Why a blocks answer is given up (``Fallback.kind``)."""

    NO_ROOM = "no_room"
    """No room left in the context for the blocks."""
    PLACE = "place"
    """A block cannot be placed in the file (``Fallback.miss`` says how)."""
    CUT = "cut"
    """The answer stopped at its limit before the end."""
    NOT_BLOCKS = "not_blocks"
    """The answer is not a list of blocks."""
    NOTHING = "nothing"
    """The blocks change nothing."""


@dataclass(frozen=True)
class Fallback:
    """A blocks answer given up under ``auto``: why, and what the model wrote."""

    why: str
    """One line (``edit_fallback`` in the stats)."""
    raw: str = ""
    kind: GiveUp = GiveUp.PLACE
    miss: edits.Miss | None = None
    """How a block failed to place (``kind`` ``PLACE``)."""


@dataclass
class RewriteRun:
    """One rewrite: what every stage of it shares."""

    loaded: LoadedModel
    request: Request
    """The request read once: the file, the instruction's ``Intent``."""
    opts: RewriteOptions
    on_text: Callable[[str], None] | None
    cancel: threading.Event | None
    metrics: Metrics
    earlier: list[Metrics] = field(default_factory=list)
    file_tokens: int = 0
    """Tokens of the text a whole rewrite re-emits (the file, or the region asked for)."""
    edit_reason: str = ""
    """Why ``auto`` chose a whole rewrite without trying blocks (``app.edit.rewrite.broad``)."""
    repairs: list[str] = field(default_factory=list)
    """The repairs made to the answer (``app.edit.repair``) and repair rounds run, in order."""
    first_answer: str | None = None
    """The first answer placed as it is (``RewriteResult.first_answer``)."""
    answered: bool = False
    """The first answer is in: ``first_answer`` is set for good."""
    stage_times: list[StageTime] = field(default_factory=list)
    """The generations closed so far (``close``)."""
    checks_s: float = 0.0
    """Seconds ``finished`` spent reading answers."""
    answers: dict[str, Change] = field(default_factory=dict, repr=False)
    """Each answer read (``change_to``), by its text."""
    plan_note: str = ""
    """What the model said must change before its first answer (``app.edit.plan_note``)."""

    def change_to(self, text: str) -> Change:
        """The file becoming ``text``, an answer of this rewrite, as one ``Change``: the same
        text (a round's answer merged into the same file, the file itself) is diffed and
        parsed once."""
        if text not in self.answers:
            new = self.source if text == self.text else Source(text, self.path)
            self.answers[text] = Change(self.source, new)
        return self.answers[text]

    @property
    def source(self) -> Source:
        return self.request.source

    @property
    def text(self) -> str:
        return self.request.source.text

    @property
    def lines(self) -> list[str]:
        return self.request.source.lines

    @property
    def path(self) -> str | None:
        return self.request.source.path

    @property
    def asked(self) -> str:
        """The instruction, with the user's feedback note on a re-run."""
        return self.request.asked

    @property
    def intent(self) -> Intent:
        """What the instruction asks of the file (``app.check.intent``), read once per rewrite."""
        return self.request.intent

    def next_stage(self) -> None:
        """The stage so far is over: keep its figures, start the metrics afresh."""
        self.earlier.append(self.metrics.restart())

    def close(self, res: RewriteResult, mode: EditMode, fallback: str = "") -> RewriteResult:
        """``res``, with the earlier stages counted in its metrics and the labels of the
        rewrite: the mode that ran, why, the repairs. A finished change no check flags is
        first reviewed by the model (``review_change``)."""
        if res.status is Status.OK and res.hunks and not res.verdicts:
            self.review_change(res)
        self.stage_times = [
            StageTime(m.prefill_s, m.decode_s, m.generated_tokens)
            for m in (*self.earlier, self.metrics)
            if m.prefill_s or m.decode_s or m.generated_tokens
        ]
        for m in self.earlier:
            self.metrics.add(m)
        self.earlier = []
        res.stats = self.stats(mode, fallback)
        res.first_answer = self.first_answer
        return res

    def review_change(self, res: RewriteResult) -> None:
        """The model's review of ``res`` (``app.edit.review``), as ``opts.review`` asks: its
        verdict, if any, becomes ``res``'s; never on a remote engine or once cancelled."""
        model, how = self.loaded.model_name, self.opts.review
        if how == "off" or (how == "auto" and threshold(model) is None):
            return
        if not self.loaded.runner.local or (self.cancel is not None and self.cancel.is_set()):
            return
        self.next_stage()
        res.review = review(
            self.loaded,
            self.text,
            res.new_text,
            self.asked,
            path=self.path,
            context_files=self.opts.context_files,
            metrics=self.metrics,
        )
        found = None if res.review is None else verdict(res.review, model)
        if found is not None:
            res.verdicts, res.suspect, res.message = [found], found, found.message

    def stats(self, mode: EditMode | str = "", fallback: str = "") -> RewriteStats:
        """This rewrite's labels beside its metrics so far."""
        reason, repairs = self.edit_reason, tuple(self.repairs)
        return RewriteStats(
            self.metrics,
            mode,
            reason,
            fallback,
            repairs,
            self.file_tokens,
            tuple(self.stage_times),
            self.checks_s,
            self.plan_note,
        )

    def result(self, status: Status, message: str, raw: str = "", hunks=()) -> RewriteResult:
        """A result that changes nothing."""
        return RewriteResult(self.text, None, raw, list(hunks), "", self.stats(), status, message)


def check_fits(loaded: LoadedModel, prompt: Prompt, what: str, fix: str) -> None:
    """Raise ``DoesNotFit`` when ``prompt`` and a copy of its part do not fit the context."""
    n_ctx, n_prompt, n_out = loaded.target.n_ctx, len(prompt), prompt.part_tokens
    if not prompt.fits(n_ctx):
        raise DoesNotFit(
            f"{what} is {n_out:,} tokens; with the prompt ({n_prompt - n_out:,} tokens besides) "
            f"and the rewritten copy that needs {n_prompt + n_out:,} of the {n_ctx:,}-token "
            f"context: {fix}"
        )


def _cut(stop_reason: StopReason, max_tokens: int) -> tuple[str, str]:
    """When an answer cut before its end stopped, and the fix that applies."""
    if stop_reason == StopReason.MAX_TOKENS:
        return f"at the {max_tokens:,}-token output limit", "raise --max-tokens (options.maxTokens)"
    if stop_reason == StopReason.CONTEXT_FULL:
        return "when the context was full", "raise --ctx or rewrite a region (--lines)"
    return "before the model closed its block", "try again or rewrite a region (--lines)"


def cut_why(stop_reason: StopReason, max_tokens: int, region: bool) -> str:
    """Why an answer cut before its end is not a result (one line, no fix)."""
    what = "the region" if region else "the file"
    return f"the output stopped {_cut(stop_reason, max_tokens)[0]}, before the end of {what}"


def cut_message(stop_reason: StopReason, max_tokens: int, region: bool) -> str:
    """``cut_why`` and the fix that applies: a truncated result's message."""
    fix = _cut(stop_reason, max_tokens)[1]
    return f"{cut_why(stop_reason, max_tokens, region)}; nothing was written: {fix}"


def finished(
    run: RewriteRun, new_text: str, raw: str, part: str, body: str, piece: bool = False
) -> RewriteResult:
    """The ``ok`` result of a complete rewrite: the answer's fidelity repaired
    (``app.edit.repair``: copies only, never what it changes), read once into a ``Change``
    (``app.code.source``) whose hunks, diff and the checks' verdicts (``app.check.checks.vouch``)
    it gives; a region's lost lines (a region asked for, or ``piece``: a round's definition)
    are judged on ``body`` against ``part``, what the model was shown to rewrite; the first
    verdict is the result's ``suspect``. The first answer of a rewrite is kept as it came
    (``first_answer``; a ``piece`` is not one)."""
    text, intent = run.text, run.intent
    if not run.answered and not piece:
        run.first_answer, run.answered = new_text, True
    t = time.perf_counter()
    new_text, labels = repair(text, new_text, run.path)
    change = run.change_to(new_text)
    if run.opts.region is None and part == text and not piece:
        verdicts = vouch(change, intent)
    else:
        lost = suspect_deletion(Change(Source(part), Source(body)), intent)
        verdicts = [lost] if lost else []
        verdicts += [v for v in vouch(change, intent) if not v.deleted_lines]
    run.repairs += [x for x in labels if x not in run.repairs]
    hunks = list(change.hunks)
    suspect = verdicts[0] if verdicts else None
    msg = suspect.message if suspect else ("" if hunks else "no changes")
    diff = unified_diff(text, new_text, run.path or "text")
    run.checks_s += time.perf_counter() - t
    res = RewriteResult(
        text, new_text, raw, hunks, diff, run.stats(), Status.OK, msg, suspect, verdicts
    )
    res.change = change
    return res


def _send_whole(run: RewriteRun, new_text: str, fence: str) -> None:
    """Send ``on_text`` the stream a whole rewrite would have sent, for live views."""
    if run.on_text is not None:
        run.on_text(new_text + ("" if new_text.endswith("\n") else "\n") + fence + "\n")


def run_whole(run: RewriteRun, prompt: Prompt, piece: bool = False) -> RewriteResult:
    """The model writes ``prompt.part`` out in full (module docstring); a ``piece`` (a repair
    round's definition) is not streamed to ``on_text``, and ``finished`` judges it as a region."""
    loaded, opts, m, text = run.loaded, run.opts, run.metrics, run.text
    room = prompt.room(loaded.target.n_ctx)
    max_tokens = min(opts.max_tokens or int(prompt.part_tokens * 1.3) + 128, room)
    on_text = None if piece else run.on_text
    gen = run_prompt(
        loaded, prompt, opts, max_tokens, on_text=on_text, cancel=run.cancel, metrics=m
    )
    if not piece:
        run.file_tokens = run.file_tokens or prompt.part_tokens
    raw, fenced = gen.text, gen.fenced
    assert fenced is not None
    if m.stop_reason == StopReason.CANCELLED:
        return run.result(Status.CANCELLED, "cancelled; nothing changed", raw)
    if not fenced.closed:
        hunks = preview_in_file(text, fenced.partial_body(), prompt.region)
        msg = cut_message(m.stop_reason, max_tokens, prompt.region is not None)
        return run.result(Status.TRUNCATED, msg, raw, hunks)
    body = fenced.body()
    if body is None:
        return run.result(
            Status.NO_OUTPUT, "the model returned no usable output; nothing changed", raw
        )
    part = prompt.part
    if part.endswith("\n") and not body.endswith("\n"):
        body += "\n"
    if prompt.region is not None:
        a, b = prompt.region
        new_text = "".join(run.lines[:a]) + body + "".join(run.lines[b:])
    else:
        new_text = body if text.endswith("\n") or not body.endswith("\n") else body[:-1]
    return finished(run, new_text, raw, part, body, piece)


def run_blocks(
    run: RewriteRun,
    prompt: Prompt,
    within: Sequence[tuple[int, int]] | None = None,
    guard: bool = False,
    fallback: bool = True,
) -> RewriteResult | Fallback:
    """The model writes search/replace blocks, placed in the file (module docstring); with
    ``guard`` (and ``opts.verbatim``, a local model) each SEARCH side can only copy lines of
    the file (``app.edit.search_guard``); with ``fallback`` (the plan's ``auto``) blocks that
    fail are a ``Fallback`` and the answer is capped at ``BLOCKS_SHARE``, else (``--edit
    blocks``) the failure is the result."""
    loaded, opts, m, text = run.loaded, run.opts, run.metrics, run.text
    forced = not fallback
    room = prompt.room(loaded.target.n_ctx)
    if room < 64:
        why = "no room left in the context for the blocks"
        if forced:
            return run.result(Status.NO_OUTPUT, f"{why}; nothing changed")
        return Fallback(why, kind=GiveUp.NO_ROOM)
    # what the blocks can change: the file, or the windows of a big file's prompt
    shown = prompt.part_tokens or sum(e - s for s, e, lab in prompt.spans if lab == "whole")
    share = 1.0 if forced else BLOCKS_SHARE
    max_tokens = min(opts.max_tokens or int(shown * share) + BLOCKS_MARGIN, room)
    gen = run_prompt(
        loaded,
        prompt,
        opts,
        max_tokens,
        cancel=run.cancel,
        metrics=m,
        stop_when=lambda so_far: bool(edits.broken(so_far)),
        constraint=SearchGuard(loaded.target, text, within)
        if guard and opts.verbatim and loaded.runner.local
        else None,
    )
    raw, fenced = gen.text, gen.fenced
    assert fenced is not None
    if m.stop_reason == StopReason.CANCELLED:
        return run.result(Status.CANCELLED, "cancelled; nothing changed", raw)
    parsed = edits.parse_blocks(edits.PREFILL + (fenced.body() or ""), text)
    # stopped by stop_when: the answer's first problem is the one that stopped it
    stopped = m.stop_reason == StopReason.STOP and not fenced.closed
    broken = parsed.problem if stopped and parsed.broken else ""
    cut = (
        not fenced.closed
        and not (m.stop_reason == StopReason.EOS and parsed.complete)
        and not broken
    )
    why, hunks, kind, miss = "", [], GiveUp.PLACE, None
    # a SEARCH side found in several places goes to the one in a definition the
    # instruction names ("in TopologicalSorter.done, rename n2i")
    prefer = [(d.start, d.end) for d in run.intent.named] or None
    try:
        hunks = edits.place_blocks(text, parsed.blocks, within, prefer)
    except edits.EditError as e:
        why, miss = str(e), e.miss
    if cut:
        why, kind = cut_why(m.stop_reason, max_tokens, False), GiveUp.CUT
    elif broken:
        why, kind = f"the answer is not a list of blocks: {broken}", GiveUp.NOT_BLOCKS
    elif not parsed.complete:
        why, kind = f"the answer is not a list of blocks: {parsed.problem}", GiveUp.NOT_BLOCKS
    elif not why and not hunks:
        why, kind = "the blocks change nothing", GiveUp.NOTHING
    if why:
        log.info("blocks not applied: %s; the answer was %r", why, raw[:2000])
        run.answered = True  # the first answer, if this was it, could not be placed
        if not forced:
            return Fallback(why, raw, kind, miss)
        if cut:
            return run.result(
                Status.TRUNCATED, cut_message(m.stop_reason, max_tokens, False), raw, hunks
            )
        if kind is GiveUp.NOTHING:
            return finished(run, text, raw, text, text)
        msg = f"the edit blocks cannot be applied ({why}); nothing changed: try --edit whole"
        return run.result(Status.NO_OUTPUT, msg, raw)
    new_text = apply_hunks(text, hunks)
    _send_whole(run, new_text, prompt.fence)
    return finished(run, new_text, raw, text, new_text)


def run_locate(run: RewriteRun, prompt: Prompt, outline: Outline) -> list[tuple[int, int]]:
    """The line ranges the change goes to, read from a short first answer ([] if none)."""
    room = prompt.room(run.loaded.target.n_ctx)
    max_tokens = min(LOCATE_TOKENS, room)
    gen = run_prompt(
        run.loaded, prompt, run.opts, max_tokens, cancel=run.cancel, metrics=run.metrics
    )
    answer = (gen.fenced.body() if gen.fenced is not None else gen.text) or ""
    ranges = read_located(answer, outline)
    log.info("located %s from %r", ranges, answer[:300])
    return ranges
