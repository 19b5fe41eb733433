"""The speculation maths every decision shares: expected tokens, the cost prior, best k.

Contract (pure functions and two small trackers; no model, no timing of its own):
  * ``expected_tokens(alpha, k) = (1 - alpha^(k+1)) / (1 - alpha)``: tokens per target call of
    ``k`` drafts each accepted with probability ``alpha`` (the recovered or bonus token included);
  * ``cost_prior(b) = 1 + 0.15 (b - 1)``: the assumed cost of a ``b``-token call before any is
    measured;
  * ``ALPHA_MAX``: the ceiling on predicted acceptance below the long-copy bucket;
    ``long_match_alpha(m)``: the acceptance a verbatim match of ``m`` tokens predicts alone;
  * ``best_k(alpha, ks, cost, extra) -> (k, rate)``: ``argmax_k E(alpha, k) / (cost(k + 1) +
    extra(k))`` over ``ks`` (all >= 1); ``(0, 0.0)`` when there is none;
  * ``AcceptanceTracker``: one proposer's running acceptance, inferred from the next contexts;
  * ``RateMeter``: realized tokens per second of each kind of step.
``engine.policy``, the draft-model and the combined proposers decide with these; nothing else
computes them.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from .backend import shared_prefix

ALPHA_MAX = 0.995
"""Ceiling on predicted per-token acceptance (see the module docstring)."""

LONG_MATCH = 8
"""A verbatim match at least this long predicts a copy by itself."""


def cost_prior(b: int) -> float:
    """Relative cost of a ``b``-token target call before any call is measured."""
    return 1.0 + 0.15 * (b - 1)


def expected_tokens(alpha: float, k: int) -> float:
    """Tokens one target call over ``k`` drafts yields when each is accepted w.p. ``alpha``."""
    if alpha >= 1.0:
        return k + 1.0
    return (1.0 - alpha ** (k + 1)) / (1.0 - alpha)


def long_match_alpha(match_len: int) -> float:
    """Acceptance predicted by a verbatim match of ``match_len`` tokens alone (0 if short)."""
    return 1.0 - 1.0 / (match_len + 1) if match_len >= LONG_MATCH else 0.0


def best_k(
    alpha: float,
    ks: Iterable[int],
    cost: Callable[[int], float],
    extra: Callable[[int], float] | None = None,
) -> tuple[int, float]:
    """``(k, rate)`` maximising ``E(alpha, k) / (cost(k + 1) + extra(k))`` over ``ks``."""
    best, best_rate = 0, 0.0
    for k in ks:
        rate = expected_tokens(alpha, k) / (cost(k + 1) + (extra(k) if extra else 0.0))
        if rate > best_rate:
            best, best_rate = k, rate
    return best, best_rate


class AcceptanceTracker:
    """Running per-token acceptance of one proposer, inferred from the next context.

    ``proposed(n, tokens)`` records a draft made for a context of length ``n``;
    ``observe(context)`` then counts how many of those tokens the context
    continued with (the accepted ones; a recovered token that equals the draft
    by chance counts too, a small optimistic bias).
    """

    def __init__(self, prior: float = 0.5, window: int = 32, prior_weight: float = 4.0) -> None:
        self.prior, self.prior_weight = prior, prior_weight
        self.steps: deque[tuple[int, int]] = deque(maxlen=window)
        self._last: tuple[int, np.ndarray] | None = None
        self.drafted = 0
        self.accepted = 0

    def proposed(self, n: int, tokens: np.ndarray) -> None:
        self._last = (n, np.asarray(tokens, dtype=np.int64)) if len(tokens) else None

    def observe(self, context: Sequence[int]) -> None:
        if self._last is None:
            return
        n, toks = self._last
        self._last = None
        if len(context) <= n:  # a different or cut context: nothing to learn
            return
        j = shared_prefix(toks, context[n : n + len(toks)])
        self.steps.append((len(toks), j))
        self.drafted += len(toks)
        self.accepted += j

    def alpha(self) -> float:
        acc = sum(a for _, a in self.steps)
        rej = sum(1 for d, a in self.steps if a < d)
        w = self.prior_weight
        return min((acc + self.prior * w) / (acc + rej + w), ALPHA_MAX)


class RateMeter:
    """Realized tokens per second of each kind of step, between consecutive proposals.

    ``close(n)`` at the start of ``propose`` ends the interval opened by the
    previous call (the context grew from its length to ``n``); ``open(kind, t0,
    n)`` at its end starts one, back-dated to ``t0`` so the drafting time counts.
    An interval covers drafting, the target call, verification and emitting.
    """

    def __init__(self, window: int = 8) -> None:
        self.window = window
        self.samples: dict[str, deque[tuple[int, float]]] = {}
        self._open: tuple[str, float, int] | None = None

    def close(self, n: int) -> None:
        if self._open is not None:
            kind, t0, n0 = self._open
            if n > n0:
                q = self.samples.setdefault(kind, deque(maxlen=self.window))
                q.append((n - n0, time.perf_counter() - t0))
        self._open = None

    def open(self, kind: str, t0: float, n: int) -> None:
        self._open = (kind, t0, n)

    def rate(self, kind: str, min_samples: int = 3) -> float | None:
        q = self.samples.get(kind)
        if not q or len(q) < min_samples:
            return None
        return sum(n for n, _ in q) / max(sum(t for _, t in q), 1e-9)
