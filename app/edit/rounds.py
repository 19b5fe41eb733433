"""Repair rounds with the model: what the checks saw, or why the blocks did not place, is sent
back to the model, which makes the change again; the program never makes it. One round, never
more; ``run.repairs`` gets its name. Each rule in full: ``docs/notes.md``.

  * ``round_targets(run, first, intent) -> list[Definition]``: the definitions a round rewrites
    (the missed sites, those a half-made change touched, the named ones or the opening's place,
    or those the search sides are most like), innermost, each at most ``WIDEN_TOKENS`` long.
  * ``redo_definitions(run, first, defs) -> RewriteResult | None``: each one rewritten whole as a
    region (``app.edit.stages.run_whole``, on the file's warm prefix; a flagged answer's own try
    and ``checks_note`` as feedback), the first answer's other hunks kept, checked as any result
    (``app.edit.stages.finished``); None when none came back complete (``widen``).
  * ``again_whole(run, first, prompt_of)``: a flagged whole rewrite asked once more (``again``).
  * ``retry_blocks(run, first) -> RewriteResult | None``: blocks that did not apply and have no
    definition to widen to, asked once more with ``retry_note``, SEARCH sides guarded
    (``app.edit.search_guard``); its result when they apply and change something (``retry``).
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
from enum import StrEnum

from ..check.checks import map_scope
from ..check.intent import Intent
from ..check.verdict import Suspect, Verdict
from ..code.diff import Hunk, apply_hunks
from ..code.source import touches
from ..code.syntax import Definition
from . import edits
from .edits import Miss
from .prompts import rewrite_fence, rewrite_prompt
from .result import RewriteResult, Status
from .stages import Fallback, GiveUp, RewriteRun, finished, run_blocks, run_whole

log = logging.getLogger(__name__)


class Round(StrEnum):
    """A repair round's label in ``run.repairs`` (``edit_repairs`` on the wire)."""

    WIDEN = "widen"
    """Definitions rewritten whole (``redo_definitions``)."""
    AGAIN = "again"
    """A flagged whole rewrite asked once more (``again_whole``)."""
    RETRY = "retry"
    """Blocks asked once more with why they failed (``retry_blocks``)."""


WIDEN_TOKENS = 1024
"""A definition longer than this is not rewritten whole by a repair round."""
FLAGS = frozenset(
    (
        Verdict.RENAME_LEFT,
        Verdict.SITE_MISSED,
        Verdict.VALUE_MISSED,
        Verdict.OUTSIDE_NAMED,
        Verdict.PLACE_MISSED,
        Verdict.NAME_MISSING,
        Verdict.UNBOUND,
        Verdict.PARAM_UNUSED,
        Verdict.SYNTAX,
        Verdict.COMPILE,
        Verdict.REMOVED,
        Verdict.UNCHANGED,
    )
)
"""Verdicts a repair round may mend."""
LOST = frozenset((Verdict.DROPS_TAIL, Verdict.DROPS_SHARE, Verdict.DROPS_ON_ADD))
"""Verdicts of lost lines: a whole rewrite that has them is asked again too."""
WHOLE_VERDICTS = FLAGS | LOST
"""Verdicts on a whole rewrite under ``auto`` that send it back to the model once."""
_SCOPED = frozenset(
    (Verdict.RENAME_LEFT, Verdict.VALUE_MISSED, Verdict.OUTSIDE_NAMED, Verdict.PLACE_MISSED)
)
"""Verdicts whose round goes to the named definitions, whatever else is flagged."""
_ELSEWHERE = frozenset((Verdict.OUTSIDE_NAMED, Verdict.PLACE_MISSED))
"""Verdicts on hunks made elsewhere: a round's result does not keep them."""
_TOUCHED = frozenset(
    (
        Verdict.UNBOUND,
        Verdict.PARAM_UNUSED,
        Verdict.NAME_MISSING,
        Verdict.SYNTAX,
        Verdict.COMPILE,
        Verdict.REMOVED,
    )
)
"""Verdicts of a half-made change: its round goes where the change was made."""
LIKE = 0.75
"""A failed search line stands for the file line it is at least this like."""


def innermost(defs: list[Definition]) -> list[Definition]:
    out = [
        d
        for d in defs
        if not any(e is not d and d.start <= e.start and e.end <= d.end for e in defs)
    ]
    return sorted(set(out), key=lambda d: d.start)


def _like(run: RewriteRun, raw: str) -> list[Definition]:
    """The definitions the search sides of an answer that could not be placed are most
    like (each block's first search line, at least ``LIKE`` like one file line)."""
    parsed = edits.parse_blocks(edits.PREFILL + raw)
    defs = run.source.definitions
    found = []
    for block in parsed.blocks:
        first = next((s.strip() for s in block.search.splitlines() if s.strip()), "")
        if not first:
            continue
        best, at = 0.0, -1
        for k, line in enumerate(run.lines):
            r = difflib.SequenceMatcher(None, first, line.strip(), autojunk=False).ratio()
            if r > best:
                best, at = r, k
        if best >= LIKE:
            found += [d for d in defs if d.start <= at < d.end]
    return innermost(found)


def round_targets(
    run: RewriteRun, first: RewriteResult | Fallback, intent: Intent
) -> list[Definition]:
    """The definitions a repair round rewrites (module docstring)."""
    if isinstance(first, RewriteResult):
        reasons = {v.reason for v in first.verdicts}
        if first.status is not Status.OK or not (reasons & FLAGS or not first.hunks):
            return []
        if Verdict.SITE_MISSED in reasons:
            chosen = [
                g[0]
                for g in intent.each
                if len(g) == 1 and not any(touches(h, g[0], before=True) for h in first.hunks)
            ]
        elif reasons & _TOUCHED and not reasons & _SCOPED:
            # where the change was made (the function given the parameter), not every
            # definition the instruction names (the class the parameter is passed to)
            defs = run.source.definitions
            touched = [d for d in defs if any(touches(h, d, before=True) for h in first.hunks)]
            chosen = touched or list(intent.named or intent.place)
        else:
            chosen = list(intent.named or intent.place)
    else:
        chosen = list(intent.named) or _like(run, first.raw)
    chosen = innermost(chosen)
    return chosen if chosen and short_enough(run, chosen) else []


def definition_tokens(run: RewriteRun, d: Definition) -> int:
    """How many tokens definition ``d``'s lines are."""
    return len(run.loaded.target.tokenize("".join(run.lines[d.start : d.end]), special=False))


def short_enough(run: RewriteRun, defs: list[Definition]) -> bool:
    """True when each of ``defs`` is at most ``WIDEN_TOKENS`` long: short enough for a
    round to rewrite it whole."""
    return all(definition_tokens(run, d) <= WIDEN_TOKENS for d in defs)


def redo_definitions(
    run: RewriteRun,
    first: RewriteResult | Fallback | None,
    defs: list[Definition],
    label: Round | None = Round.WIDEN,
) -> RewriteResult | None:
    """Rewrite each of ``defs`` whole and merge (module docstring); with no ``first``
    answer, the first answer itself (``RewriteOptions.first``: ``region``)."""
    text = run.text
    kept = []
    if isinstance(first, RewriteResult) and first.status is Status.OK:
        # the first answer's other hunks stay, unless a check saw them as the stray ones
        stray = any(v.reason in _ELSEWHERE for v in first.verdicts)
        kept = [
            h
            for h in first.hunks
            if not stray and not any(touches(h, d, before=True) for d in defs)
        ]
    made: list[Hunk] = []
    raws = []
    flagged = isinstance(first, RewriteResult) and first.status is Status.OK and first.verdicts
    for d in defs:
        if first is not None or d is not defs[0]:
            run.next_stage()
        feedback = None
        if flagged and first.change is not None:  # its own try at d, and what was seen
            ((a, b),) = map_scope(first.change, [(d.start, d.end)])
            mine = "".join(first.change.new.lines[a:b])
            feedback = (mine, checks_note(first.verdicts)) if mine.strip() else None
        prompt = rewrite_prompt(
            run.loaded.target,
            text,
            run.opts.instruction,
            lines=run.lines,
            path=run.path,
            context_files=run.opts.context_files,
            region=(d.start, d.end),
            feedback=feedback,
        )
        res = run_whole(run, prompt, piece=True)
        raws.append(res.raw)
        if res.status is Status.CANCELLED:
            return res
        if res.status is not Status.OK or res.change is None:
            log.info("widen %s: %s", d.name, res.status)
            continue
        made += res.change.hunks
    if not made:
        return None
    if label is not None:
        run.repairs.append(label)
    hunks = sorted([*kept, *made], key=lambda h: (h.start_line, h.end_line))
    merged = apply_hunks(text, [dataclasses.replace(h, id=i) for i, h in enumerate(hunks)])
    res = finished(run, merged, "\n".join(raws), text, merged)
    if run.on_text is not None:  # the new text at once, as a blocks answer sends it
        fence = rewrite_fence(text)
        run.on_text(merged + ("" if merged.endswith("\n") else "\n") + fence + "\n")
    return res


def checks_note(verdicts: list[Suspect]) -> str:
    """The feedback of a round on a flagged answer: what the checks saw, in their words."""
    seen = "; ".join(v.message for v in verdicts)
    return f"The checks found: {seen}. Make the change the instruction asks for, and nothing else."


def again_whole(run: RewriteRun, first: RewriteResult, prompt_of) -> RewriteResult | None:
    """A whole rewrite the checks flag, asked once more with its answer and what the checks
    saw as feedback (``prompt_of(feedback)`` builds the prompt); the better of the two is the
    caller's to choose. None when nothing came back complete; ``run.repairs`` gets
    ``again``."""
    if first.status is not Status.OK or first.new_text is None:
        return None
    run.next_stage()
    res = run_whole(run, prompt_of((first.new_text, checks_note(first.verdicts))))
    if res.status is Status.CANCELLED:
        return res
    if res.status is not Status.OK:
        log.info("again: %s", res.status)
        return None
    run.repairs.append(Round.AGAIN)
    return res


_HINTS = {
    Miss.AMBIGUOUS: "Copy one more line of the file into the SEARCH side, so that it matches "
    "one place only: the place the instruction is about.",
    Miss.NOT_FOUND: "Copy the SEARCH lines exactly as they are in the file now, with their "
    "indentation, and nothing else.",
    Miss.DIFFERS: "Copy the SEARCH lines exactly as they are in the file now, with their "
    "indentation.",
}
"""The hint of a retry, by how a block failed to place."""
_NOTHING = (
    "Each REPLACE side was the same as its SEARCH side. Write the lines as they must be "
    "after the change."
)


_ADDED = (
    "Your block wrote the new lines on both sides, and they are not in the file yet. To add "
    "lines, the SEARCH side is the line of the file just before the place they go, copied "
    "exactly, and the REPLACE side is that line followed by the new lines."
)


def _added_on_both_sides(body: str) -> bool:
    """True when a block of ``body`` has the same lines on both sides (blank lines aside):
    an addition written as if already made."""

    def lines(side: str) -> list[str]:
        return [x.strip() for x in side.splitlines() if x.strip()]

    parsed = edits.parse_blocks(edits.PREFILL + body)
    return any(lines(b.search) == lines(b.replace) for b in parsed.blocks)


def retry_note(first: Fallback, added: bool = False) -> str | None:
    """The feedback of a retry round: why the first blocks did not apply, and what to do
    (``added``: a block's search side not in the file was its replace side too); None for
    an answer cut at its limit or not in the format (a runaway or a loop, which a second ask
    repeats), or a failure no hint helps with."""
    if first.kind is GiveUp.NOTHING:
        hint = _NOTHING
    elif first.kind is GiveUp.PLACE and first.miss is not None:
        hint = _HINTS.get(first.miss)
        if added and first.miss is Miss.NOT_FOUND:
            hint = _ADDED
    else:
        hint = None
    return None if hint is None else f"Your blocks could not be applied: {first.why}. {hint}"


def retry_blocks(run: RewriteRun, first: Fallback) -> RewriteResult | None:
    """Ask for the blocks once more, with the first answer and why it failed (module
    docstring)."""
    body = first.raw.rstrip()
    fence = rewrite_fence(run.text)
    if body.endswith(fence):
        body = body[: -len(fence)]
    note = retry_note(first, _added_on_both_sides(body))
    if note is None or not body.strip() or run.opts.region is not None:
        return None
    run.next_stage()
    prompt = rewrite_prompt(
        run.loaded.target,
        run.text,
        run.opts.instruction,
        lines=run.lines,
        path=run.path,
        context_files=run.opts.context_files,
        feedback=(edits.PREFILL + body, note),
        edit="blocks",
    )
    res = run_blocks(run, prompt, guard=True, fallback=True)
    if isinstance(res, Fallback):
        log.info("retry: %s", res.why)
        return None
    if res.status is Status.OK and res.hunks:
        run.repairs.append(Round.RETRY)
        return res
    return res if res.status is Status.CANCELLED else None
