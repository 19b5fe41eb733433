"""The model as a reviewer: asked whether a finished change does what the instruction asks.

Contract: ``review(loaded, text, new_text, instruction, path=..., context_files=...) ->
Review | None`` shows the model the file (the prefix every rewrite of it shares, so a warm
cache reads only the instruction, the diff and the question: ``app.edit.prompts.review_prompt``)
and reads one row of logits: the probability of "yes" and of "no" as its first word
(``score``: log P(yes) - log P(no)). No token is generated and the file is never touched;
a prompt that does not fit the context (a big file) is not asked (None).
``verdict(review, model)`` is the check's verdict (a ``Suspect``, ``review``) when the
score is below the model's ``THRESHOLDS`` entry, else None; a model with no entry is not
reviewed under ``auto`` (``threshold`` is None). A threshold is set from edits records
(``specedit bench review``: every verdict together flags at most 5% of right answers).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from ...engine import prefill
from ..check.verdict import Suspect, Verdict
from ..code.diff import unified_diff
from ..runtime.loaded_model import LoadedModel
from .prompts import review_prompt

log = logging.getLogger(__name__)

THRESHOLDS: dict[str, float] = {}
"""Catalog model -> the score below which a change is flagged. Empty: on the suite the
1.5B's review caught no wrong change within the false-alarm bar (bench/README)."""

_YES = ("yes", "Yes", "YES", " yes", " Yes")
_NO = ("no", "No", "NO", " no", " No")


@dataclass(frozen=True)
class Review:
    """The model's answer to the review question, as probabilities of its first word."""

    p_yes: float
    p_no: float
    seconds: float
    prompt_tokens: int
    read_tokens: int
    """Tokens evaluated (the rest came from the cache)."""

    @property
    def score(self) -> float:
        return math.log(self.p_yes + 1e-12) - math.log(self.p_no + 1e-12)

    def to_json(self) -> dict:
        return {
            "p_yes": round(self.p_yes, 4),
            "p_no": round(self.p_no, 4),
            "score": round(self.score, 3),
            "seconds": round(self.seconds, 3),
            "read_tokens": self.read_tokens,
        }


@cache
def _answer_ids(target) -> tuple[list[int], list[int]]:
    """The first tokens of "yes" and of "no" as the model may write them (a token both
    can begin with, a bare space in a byte tokenizer, counts for neither)."""
    yes, no = ({target.tokenize(w, special=False)[0] for w in ws} for ws in (_YES, _NO))
    return sorted(yes - no), sorted(no - yes)


def threshold(model: str) -> float | None:
    """The score below which ``model``'s review flags a change; None: not reviewed."""
    return THRESHOLDS.get(model)


def review(
    loaded: LoadedModel,
    text: str,
    new_text: str,
    instruction: str,
    *,
    path: str | None = None,
    context_files: Sequence[tuple[str, str]] = (),
    metrics=None,
) -> Review | None:
    """Ask the model whether ``new_text`` does to ``text`` what ``instruction`` asks;
    ``metrics`` (an ``engine.metrics.Metrics``), when given, books the prefill. None when
    the file, the diff and the question do not fit the context (a big file, shown to the
    rewrite as its outline): no review, never a lost result."""
    target = loaded.target
    diff = unified_diff(text, new_text, path or "text")
    prompt = review_prompt(target, text, instruction, diff, path=path, context_files=context_files)
    if len(prompt) + 1 > target.n_ctx:
        log.info("review: %d prompt tokens do not fit the context; not reviewed", len(prompt))
        return None
    t = time.perf_counter()
    with loaded.lock:
        logits, kept = prefill.prefill(
            target,
            list(prompt.ids),
            prompt.marks,
            on_batch=None if metrics is None else metrics.observe_prefill,
        )
    row = np.asarray(logits, dtype=np.float64).reshape(-1)
    p = np.exp(row - row.max())
    p /= p.sum()
    yes_ids, no_ids = _answer_ids(target)
    yes, no = float(p[yes_ids].sum()), float(p[no_ids].sum())
    res = Review(yes, no, time.perf_counter() - t, len(prompt), len(prompt) - kept)
    log.info("review: p(yes) %.3f p(no) %.3f score %.2f in %.2f s", yes, no, res.score, res.seconds)
    return res


def verdict(res: Review, model: str) -> Suspect | None:
    """The check's verdict on a ``review`` of a change by ``model`` (module docstring)."""
    limit = threshold(model)
    if limit is None or res.score >= limit:
        return None
    return Suspect(
        Verdict.REVIEW,
        0,
        f"asked whether the change does what the instruction asks, the model leans to no "
        f"(p(yes) {res.p_yes:.2f}, p(no) {res.p_no:.2f})",
    )
