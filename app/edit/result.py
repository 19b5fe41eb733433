"""What a rewrite returns to every front end: the result, its status, edit mode and figures.

Contract: ``RewriteResult`` (``app.edit.rewrite``'s docstring has the statuses) with ``to_json``,
the wire form (``rewrite/done``, ``--json``); ``Status`` and ``EditMode`` are str enums whose
values are the wire's. ``RewriteStats.snapshot()`` is what every display reads: the engine's
figures (``engine.metrics.Metrics``) with the rewrite's labels (edit mode, reason, fallback,
repairs, file length, stages); ``given_up`` is what a display says of a result made after the
model's blocks were given up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from ...engine.metrics import Metrics
from ..check.verdict import Suspect
from ..code.diff import Hunk
from ..code.source import Change
from .review import Review


@dataclass(frozen=True)
class StageTime:
    """One generation's share of a rewrite's wait: prompt prefill and decode seconds, and
    the tokens it generated."""

    prefill_s: float
    decode_s: float
    tokens: int

    def to_json(self) -> dict:
        return {
            "prefill_s": round(self.prefill_s, 4),
            "decode_s": round(self.decode_s, 4),
            "tokens": self.tokens,
        }


class Status(StrEnum):
    """How a rewrite ended (``RewriteResult.status``; the value is the wire's ``status``)."""

    OK = "ok"
    TRUNCATED = "truncated"
    """Cut at a limit: ``new_text`` None, hunks of the completed lines only."""
    CANCELLED = "cancelled"
    NO_OUTPUT = "no_output"
    """Nothing usable came back, or it could not be applied: nothing changed."""


class EditMode(StrEnum):
    """Which edit mode produced a result (``RewriteStats.edit_mode``, the wire's value)."""

    WHOLE = "whole"
    BLOCKS = "blocks"
    REGION = "region"
    """The definitions the instruction names rewritten whole (``RewriteOptions.first``)."""
    LOCATE = "locate"
    """A big file whose change could not be located."""
    LOCATE_BLOCKS = "locate+blocks"
    LOCATE_WHOLE = "locate+whole"


@dataclass
class RewriteStats:
    """The app's labels of one rewrite beside the engine's figures of its generations.

    The engine's ``Metrics`` counts tokens and time; which edit mode ran, why, and how long
    the file was are the app's to say. ``snapshot()`` is what every display and the wire
    read: the engine's snapshot with the labels under their names."""

    metrics: Metrics
    edit_mode: EditMode | str = ""
    """Which edit mode produced the result (an ``EditMode``; "" before one has)."""
    edit_reason: str = ""
    """Why a whole rewrite was chosen without trying an edit format ("" when it was not)."""
    edit_fallback: str = ""
    """Why an edit format was given up for a whole rewrite ("" when it was not)."""
    edit_repairs: tuple[str, ...] = ()
    """The repairs made to the answer (``app.edit.repair``) and repair rounds run, in order."""
    file_tokens: int = 0
    """Tokens of the text a whole rewrite re-emits (what ``generated_tokens`` compares with)."""
    stages: tuple[StageTime, ...] = ()
    """Each generation of the rewrite, in order: the first answer, then any round or review."""
    checks_s: float = 0.0
    """Seconds spent reading answers: fidelity repairs, hunks, the checks' verdicts."""
    plan_note: str = ""
    """What the model said must change before it answered (``app.edit.plan_note``; "" when
    it was not asked)."""

    def snapshot(self) -> dict:
        return {
            **self.metrics.snapshot(),
            "stages": [st.to_json() for st in self.stages],
            "checks_s": round(self.checks_s, 4),
            "edit_mode": self.edit_mode,
            "edit_reason": self.edit_reason,
            "edit_fallback": self.edit_fallback,
            "edit_repairs": list(self.edit_repairs),
            "file_tokens": self.file_tokens,
            "given_up": given_up(self.edit_fallback),
            "plan_note": self.plan_note,
        }


@dataclass
class RewriteResult:
    original: str
    new_text: str | None
    raw: str
    """The model's output as it wrote it (blocks in the blocks mode)."""
    hunks: list[Hunk]
    diff: str
    stats: RewriteStats
    status: Status
    message: str = ""
    suspect: Suspect | None = None
    """Set on an ``ok`` result the checks flag (``app.check.checks.vouch``): the first verdict."""
    verdicts: list[Suspect] = field(default_factory=list)
    """Every verdict of the checks on an ``ok`` result (``suspect`` is the first)."""
    first_answer: str | None = None
    """The model's first answer placed in the file as it is, before any repair or round
    (None when it could not be placed): what the bench compares the result with."""
    review: Review | None = None
    """The model's review of the finished change (``app.edit.review``), when one ran."""
    change: Change | None = field(default=None, repr=False)
    """The checked change (an ``ok`` result): the file and ``new_text``, read once, which a
    repair round reads again (not on the wire)."""

    @property
    def metrics(self) -> Metrics:
        """The engine's figures of the generations this result took."""
        return self.stats.metrics

    @property
    def edit_mode(self) -> str:
        """The edit mode that produced this result (``RewriteStats.edit_mode``)."""
        return self.stats.edit_mode or EditMode.WHOLE

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "message": self.message,
            "output": self.new_text,
            "diff": self.diff,
            "hunks": [h.to_json() for h in self.hunks],
            "suspect": self.suspect.to_json() if self.suspect else None,
            "verdicts": [v.to_json() for v in self.verdicts],
            "stats": self.stats.snapshot(),
            "review": None if self.review is None else self.review.to_json(),
        }


def given_up(edit_fallback: str) -> str:
    """What every display says of a result made after the model's blocks were given up
    (``Fallback``), beside the edit mode that made it: "blocks given up: why"; "" when none
    were. ``RewriteStats.snapshot()`` carries it (``given_up``): the CLI, the terminal app
    and, through ``rewrite/done``, the plugins show it, so a person reviews such a result
    knowing that the model's own change could not be read or placed."""
    return f"blocks given up: {edit_fallback}" if edit_fallback else ""
