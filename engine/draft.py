"""The drafter protocol: one method, ``propose(context, k) -> Draft``.

A drafter sees the whole token context (prompt plus every accepted token, the
last of which the target has not evaluated yet) and proposes up to ``k`` tokens
that would follow it. A deterministic drafter (prompt lookup, or a model drafting greedily) leaves
``probs`` as ``None`` (treated as probability 1 by the verifier); a sampling model
drafter fills ``probs [len(tokens), V]`` with the distribution it sampled from.
``anchored`` says how the draft was made (copied from a matched span, or not). An empty draft
means "no proposal": the decode loop then takes a plain step.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Draft:
    """Proposed continuation of the context."""

    tokens: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    """Draft token ids ``[n]``."""
    probs: np.ndarray | None = None
    """Draft distribution ``[n, V]``, or None for a deterministic drafter."""
    source: str = ""
    """Where the draft came from (file, context, output, model): for the stats."""
    match_len: int = 0
    """Length of the context suffix the draft was anchored on (0 for a model)."""
    anchored: bool = False
    """True for a draft copied from where the context's suffix matched (prompt lookup):
    the policy caps its block by how long that match has held. False for a model's."""

    def __len__(self) -> int:
        return len(self.tokens)


class Drafter(Protocol):
    def propose(self, context: Sequence[int], k: int) -> Draft: ...


def span_label(spans: Sequence[tuple[int, int, str]], prompt_len: int | None, pos: int) -> str:
    """Where context position ``pos`` is, for the statistics: "output" at or after
    ``prompt_len``, else the label of the sorted prompt ``spans`` ``(start, end, label)`` that
    holds it, else "prompt" ("context" when the prompt's length is not known)."""
    if prompt_len is not None and pos >= prompt_len:
        return "output"
    i = bisect.bisect_right(spans, (pos, float("inf"), "")) - 1
    if i >= 0 and pos < spans[i][1]:
        return spans[i][2]
    return "prompt" if prompt_len is not None else "context"
