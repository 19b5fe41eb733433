"""Adaptive speculation policy: pick k from measured cost and predicted acceptance.

Contract: ``choose(draft_available, match_len) -> k`` before each step (``k == 0``: a plain step)
and ``observe(block, seconds, drafted, accepted)`` after it; ``planned_k(k_cap)`` is what
``choose`` would keep of a model draft (no side effects), ``costs`` the measured curve.
  * cost ``t(b)`` of a ``b``-token target call: piecewise linear through measured sizes (seeded
    by ``calibrate``, else by ``specmath.cost_prior``), kept current by every call;
  * acceptance ``alpha``: accepted / (accepted + rejections) over recent steps, per bucket of
    anchor match length, shrunk toward a prior, raised for long anchored matches;
  * choice: ``argmax_k E(alpha, k) / t(k + 1)`` (``specmath.best_k``; ``k = 0`` is ``E = 1``);
  * growth cap: a lookup draft anchored on ``m`` tokens gets at most ``max(16, 1.5 m)`` tokens;
  * exploration: after ``probe_every`` declined drafts in a row, the best speculative k once;
  * guard: when recent speculative throughput falls below plain throughput, speculation is off
    (``off_reason`` says why) and probed again every ``probe_every`` steps.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .specmath import ALPHA_MAX, best_k, cost_prior


@dataclass(frozen=True)
class PolicyConfig:
    """Tuning of the adaptive policy; one place for its defaults."""

    fixed_k: int | None = None
    """A fixed draft length; None chooses k adaptively."""
    k_max: int = 127
    """Largest k the policy may choose (a block of k + 1 tokens)."""
    alpha_prior: float = 0.6
    """Acceptance assumed before anything is measured."""
    copy_prior: float = 0.95
    """Acceptance assumed for a continuing copy (a match of FRESH tokens or more)
    before any is measured: a copy that has run for a while tends to go on."""
    window: int = 32
    """How many recent steps the acceptance estimate looks at."""
    probe_every: int = 16
    """While speculation is off, try a short draft this often (in steps)."""
    growth: float | None = 1.5
    """A lookup draft anchored on ``m`` matched tokens is verified in blocks of at most
    ``max(min_block, growth * m)`` tokens: a copy that has held for m tokens is bet on
    for about half as long again. Without the cap a few short blocks accepted after a
    re-anchor raised the estimate enough for 48-token bets that the model's next
    divergence wasted. None: no cap. Drafts from a model (not anchored) are not capped."""
    min_block: int = 16
    """The growth cap never goes below this many tokens (in replay a floor of 8 cost
    Spec-Bench summarization 3% against 16; code tasks came out even)."""
    copy_alpha_max: float = 0.998
    """Ceiling on predicted acceptance for copies that have run 32+ tokens (ALPHA_MAX
    for the others): with the growth cap guarding fresh anchors, long copies can be
    verified in 96- and 128-token blocks."""


# Candidate ks. Blocks (k + 1 tokens) past 4 are multiples of 8: llama.cpp's CPU
# matmuls run in tiles, and on our 2-core machine a 49-token call cost 403 ms
# against 369 ms for 48 tokens (17: 171 ms, 16: 142 ms). Linear interpolation of
# the cost curve cannot see those steps, so the policy only picks tile sizes.
_KS = (0, 1, 2, 3, 7, 15, 23, 31, 47, 63, 95, 127)


class AdaptivePolicy:
    def __init__(self, cfg: PolicyConfig | None = None, costs: dict[int, float] | None = None):
        self.cfg = cfg or PolicyConfig()
        self._cost: dict[int, float] = dict(costs or {})
        self._steps: deque[tuple[int, int, int]] = deque(maxlen=2 * self.cfg.window)
        self._spec: deque[tuple[float, int]] = deque(maxlen=self.cfg.window)
        self._plain: deque[tuple[float, int]] = deque(maxlen=self.cfg.window)
        self.off_reason = ""
        self._since_probe = 0
        self._declined = 0
        self.k = self.cfg.fixed_k if self.cfg.fixed_k is not None else 0

    # ---- cost model ------------------------------------------------------------
    @property
    def costs(self) -> dict[int, float]:
        """The measured cost curve: seconds per call by block size (a copy)."""
        return dict(self._cost)

    def _neighbours(self, b: int) -> tuple[int | None, int | None]:
        """The measured sizes nearest ``b`` from below and from above (None past the ends)."""
        lo = max((x for x in self._cost if x <= b), default=None)
        hi = min((x for x in self._cost if x >= b), default=None)
        return lo, hi

    def cost(self, b: int) -> float:
        """Estimated seconds for a block of ``b`` tokens (interpolated between buckets)."""
        if not self._cost:
            return cost_prior(b)
        if b in self._cost:
            return self._cost[b]
        lo, hi = self._neighbours(b)
        if lo is None or hi is None:  # outside the measured range: scale by the prior
            ref = lo if lo is not None else hi
            return self._cost[ref] * cost_prior(b) / cost_prior(ref)
        w = (b - lo) / (hi - lo)
        return self._cost[lo] * (1 - w) + self._cost[hi] * w

    def record_cost(self, b: int, seconds: float) -> None:
        """Fold one measured call into the curve.

        A call at a measured size updates that point (moving average). Between two
        measured sizes it scales both neighbours by the measured/predicted ratio,
        weighted by nearness: the curve's level follows the machine's load while
        its shape (fixed cost plus per-token cost) stays the calibrated one.
        """
        lo, hi = self._neighbours(b)
        if b in self._cost or lo is None or hi is None:
            old = self._cost.get(b)
            self._cost[b] = seconds if old is None else 0.8 * old + 0.2 * seconds
            return
        ratio = seconds / self.cost(b)
        w = (b - lo) / (hi - lo)
        self._cost[lo] *= ratio ** (0.2 * (1 - w))
        self._cost[hi] *= ratio ** (0.2 * w)

    # ---- acceptance --------------------------------------------------------------
    FRESH = 8
    """Anchors shorter than this many tokens count as fresh (less trusted) matches."""
    _BUCKETS = (3, 5, FRESH, 32)  # match lengths [0,3) [3,5) [5,8) [8,32) [32,...)
    """A copy that has run 100 tokens and one that re-anchored 10 tokens ago are
    different bets: a shared bucket let the long copies' 99% vouch for fresh ones."""
    _PRIOR_SCALE = (0.5, 0.75, 1.0)  # fresh buckets: alpha_prior times this

    @classmethod
    def _bucket_of(cls, match_len: int) -> int:
        return sum(match_len >= b for b in cls._BUCKETS)

    def alpha(self, match_len: int = 0) -> float:
        """Per-token acceptance predicted for a draft anchored on ``match_len`` tokens.

        Measured separately per match-length bucket: in free-form text a 2-token
        match ("of the") is a weak predictor and a 6-token one a good one, so the
        policy can decline the first and take the second.
        """
        b = self._bucket_of(match_len)
        steps = [(d, a) for d, a, sb in self._steps if sb == b]
        acc = sum(a for _, a in steps)
        rej = sum(1 for d, a in steps if a < d)
        prior_w = 4.0
        if b < len(self._PRIOR_SCALE):
            prior = self.cfg.alpha_prior * self._PRIOR_SCALE[b]
        else:  # a long verbatim match predicts a long copy, until measured otherwise
            prior = max(self.cfg.copy_prior, 1.0 - 1.0 / (2 * match_len + 2))
        a = (acc + prior * prior_w) / (acc + rej + prior_w)
        # ALPHA_MAX (engine.specmath): at 0.998 a fresh anchor's 96-128-token bet lost
        # 700 ms of a 5.7 s copy on a CPU; long copies have earned copy_alpha_max
        cap = self.cfg.copy_alpha_max if b == len(self._BUCKETS) else ALPHA_MAX
        return min(a, cap)

    def _plan(self, match_len: int, anchored: bool, k_cap: int | None = None) -> tuple[int, int]:
        """(best k, with 0 meaning plain; the best speculative k) for a draft anchored on
        ``match_len`` tokens, with no side effects."""
        cap = self.cfg.k_max if k_cap is None else min(self.cfg.k_max, k_cap)
        if anchored and self.cfg.growth is not None:
            cap = min(cap, max(self.cfg.min_block, int(self.cfg.growth * match_len)) - 1)
        k, rate = best_k(self.alpha(match_len), (k for k in _KS[1:] if k <= cap), self.cost)
        return (k if rate > 1.0 / self.cost(1) else 0), (k or 1)

    @property
    def probe_due(self) -> bool:
        """True when speculation is off and the next ``choose`` takes its periodic probe."""
        return bool(self.off_reason) and self._since_probe + 1 >= self.cfg.probe_every

    def planned_k(self, k_cap: int) -> int:
        """The k ``choose`` would keep of an unanchored (model) draft of up to ``k_cap``
        tokens, without its side effects: a draft model drafts no more than that."""
        if self.cfg.fixed_k is not None:
            return min(self.cfg.fixed_k, k_cap)
        if self.off_reason:  # the guard is on: only its periodic probes draft
            return min(2, k_cap) if self.probe_due else 0
        return self._plan(0, anchored=False, k_cap=k_cap)[0]

    def choose(self, draft_available: bool, match_len: int = 0, anchored: bool = True) -> int:
        """The k for the next step; ``anchored``: a lookup draft (see ``growth``)."""
        if not draft_available:
            return 0
        if self.cfg.fixed_k is not None:
            self.k = self.cfg.fixed_k
            return self.k
        if self.off_reason:
            self._since_probe += 1
            if self._since_probe < self.cfg.probe_every:
                return 0
            self._since_probe = 0
        best_k, best_spec_k = self._plan(match_len, anchored)
        if best_k == 0:
            # costs measured under load can be wrong and are only corrected by
            # measuring: after a run of declined drafts, try the best speculative k
            self._declined += 1
            if self.off_reason or self._declined >= self.cfg.probe_every:
                self._declined = 0
                best_k = min(best_spec_k, 8) if not self.off_reason else 2
        else:
            self._declined = 0
        self.k = best_k
        return best_k

    def calibrate(
        self, target, tokens, pos: int, sizes=(1, 2, 4, 8, 16, 32, 64), repeats: int = 2
    ) -> None:
        """Measure t(b) on ``target`` by evaluating ``tokens[:b]`` at ``pos`` (then rolled back).

        One untimed warm-up call first (the first call after a load pays for page
        faults and allocations), then the fastest of ``repeats`` calls per size:
        noise on a shared machine only ever adds time.
        """
        import time

        sizes = [b for b in sizes if b <= len(tokens) and pos + b < target.n_ctx]
        if not sizes:
            return
        target.eval(tokens[: sizes[-1]], pos, range(sizes[-1]))
        for b in sizes:
            best = float("inf")
            for _ in range(repeats):
                t = time.perf_counter()
                target.eval(tokens[:b], pos, range(b))
                best = min(best, time.perf_counter() - t)
            self._cost[b] = best
        target.rollback(pos)

    @staticmethod
    def plausible(costs: dict[int, float]) -> bool:
        """A measured curve worth keeping: positive and non-decreasing in the block size."""
        vals = [costs[b] for b in sorted(costs)]
        return (
            bool(vals)
            and vals[0] > 0
            and all(b >= a * 0.95 for a, b in zip(vals, vals[1:], strict=False))
        )

    def observe(
        self,
        block: int,
        seconds: float,
        drafted: int,
        accepted: int,
        emitted: int,
        match_len: int = 0,
    ) -> None:
        """Book one target call over ``block`` tokens that took ``seconds``."""
        self.record_cost(block, seconds)
        if drafted:
            self._steps.append((drafted, accepted, self._bucket_of(match_len)))
            self._spec.append((seconds, emitted))
        else:
            self._plain.append((seconds, emitted))
        if self.cfg.fixed_k is not None:
            return
        self._update_guard()

    def _update_guard(self) -> None:
        if len(self._spec) < 8 or len(self._plain) < 4:
            if self.off_reason and len(self._spec) >= 4:
                self._maybe_on()
            return
        spec_rate = sum(n for _, n in self._spec) / sum(t for t, _ in self._spec)
        plain_rate = sum(n for _, n in self._plain) / sum(t for t, _ in self._plain)
        if not self.off_reason and spec_rate < plain_rate:
            self.off_reason = (
                f"speculative steps ran {spec_rate:.1f} tok/s < plain {plain_rate:.1f} tok/s"
            )
        elif self.off_reason:
            self._maybe_on(spec_rate, plain_rate)

    def _maybe_on(self, spec_rate: float = 0.0, plain_rate: float = 0.0) -> None:
        recent = list(self._steps)[-4:]
        if recent and all(a == d for d, a, _ in recent):
            self.off_reason = ""
        elif spec_rate and spec_rate > 1.2 * plain_rate:
            self.off_reason = ""
