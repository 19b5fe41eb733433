"""Combined proposer: prompt lookup when it has a good match, the draft model otherwise.

Contract: ``CombinedDrafter(lookup, model, policy)`` implements the ``Drafter`` protocol. Each
``propose(context, k)`` asks the lookup drafter first (cheap), then compares the expected rate of
a step:

    lookup: max_k E(a_L, k) / t(k + 1),            k <= len(lookup draft)
    model:  max_k E(a_M, k) / (t(k + 1) + c_M(k))  (ModelDrafter.plan)

with ``E`` and the best-k search from ``engine.specmath``, ``t`` the loop's measured cost curve
(``policy.cost``), ``c_M`` the model's drafting cost plus its catch-up, and ``a_L``/``a_M`` each
proposer's running acceptance (``a_L`` raised for a long anchored match). The higher rate wins;
the model runs only when it wins, and explores only after a streak of steps with no lookup draft.
Steps and acceptance per proposer are in ``Metrics`` (``Draft.source``); the trackers here only
feed decisions.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from .draft import Draft
from .draft_model import ModelDrafter
from .lookup import LookupDrafter
from .policy import AdaptivePolicy
from .specmath import ALPHA_MAX, AcceptanceTracker, best_k, cost_prior, long_match_alpha


class CombinedDrafter:
    """Lookup and draft model, chosen per step by expected gain (see module docstring)."""

    def __init__(
        self,
        lookup: LookupDrafter,
        model: ModelDrafter,
        policy: AdaptivePolicy | None = None,
        *,
        lookup_prior: float = 0.6,
    ) -> None:
        self.lookup = lookup
        self.model = model
        self.policy = policy if policy is not None else model.policy
        self.lookup_acc = AcceptanceTracker(prior=lookup_prior)
        self._miss = 0  # consecutive steps without a lookup draft

    def _cost(self, b: int) -> float:
        return self.policy.cost(b) if self.policy is not None else cost_prior(b)

    def lookup_alpha(self, match_len: int) -> float:
        # a long verbatim match predicts a long copy
        return min(max(self.lookup_acc.alpha(), long_match_alpha(match_len)), ALPHA_MAX)

    def _lookup_rate(self, d: Draft) -> float:
        return best_k(self.lookup_alpha(d.match_len), range(1, len(d) + 1), self._cost)[1]

    def propose(self, context: Sequence[int], k: int) -> Draft:
        t0 = time.perf_counter()
        meter = self.model.meter
        meter.close(len(context))
        self.lookup_acc.observe(context)
        self.model.tracker.observe(context)
        d = self.lookup.propose(context, k)
        self._miss = 0 if len(d) else self._miss + 1
        room = self.model.draft.n_ctx - len(context) - 1
        # the model explores (first draft, probes) only where lookup has had nothing for a
        # while, and its catch-up is spread over that streak
        km, model_rate = self.model.plan(
            min(k, room), self.model.gap(context), not len(d), amortize=max(1, self._miss)
        )
        out, kind = d, "lookup" if len(d) else "plain"
        if km > 0 and not (len(d) and self._lookup_rate(d) >= model_rate):
            dm = self.model.draft_tokens(context, km)
            if len(dm):
                out, kind = dm, "model"
        if kind == "lookup":
            self.lookup_acc.proposed(len(context), d.tokens)
        meter.open(kind, t0, len(context))
        return out
