"""Combined proposer: prompt lookup when it has a good match, the draft model otherwise.

Contract: ``CombinedDrafter(lookup, model, policy)`` implements the ``Drafter``
protocol. Each ``propose(context, k)`` asks the lookup drafter first (cheap),
then compares expected throughput per step:

    lookup: max_k E(a_L, k) / t(k + 1),            k <= len(lookup draft)
    model:  max_k E(a_M, k) / (t(k + 1) + c_M(k))  (ModelDrafter.plan)

with ``E(a, k) = (1 - a^(k+1)) / (1 - a)`` expected tokens per target call,
``t`` the decode loop's measured cost curve (``policy.cost``), ``c_M`` the
draft model's measured drafting cost plus its catch-up over the tokens it has
not seen (priced per token, so a draft model idle through a long copy is not
woken for one step), ``a_M`` the model's running acceptance
and ``a_L`` the lookup's running acceptance, raised for a long anchored match
(``1 - 1/(match_len + 1)`` at ``match_len >= 8``, as in the policy). The
higher rate wins; the model is only run when it wins, so a long copy costs no
draft-model time at all. It explores (its first draft, its probes) only where
lookup has had no draft for a streak of steps, with the catch-up spread over
that streak, so one lookup miss in a copy never wakes it. Its realized-rate
guard (see ``ModelDrafter``) compares model steps with plain ones. The draft model's KV cache catches up in one block
the next time it is used. Acceptance per proposer shows in ``Metrics``
(``Draft.source`` is ``"model"`` for the model, the lookup's span label
otherwise) and in ``stats()``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from .draft import Draft
from .draft_model import AcceptanceTracker, ModelDrafter
from .lookup import LookupDrafter
from .policy import AdaptivePolicy


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
        self.chosen: Counter = Counter()
        self._miss = 0  # consecutive steps without a lookup draft

    def _cost(self, b: int) -> float:
        return self.policy.cost(b) if self.policy is not None else 1.0 + 0.15 * (b - 1)

    def lookup_alpha(self, match_len: int) -> float:
        a = self.lookup_acc.alpha()
        if match_len >= 8:  # a long verbatim match predicts a long copy
            a = max(a, 1.0 - 1.0 / (match_len + 1))
        return min(a, 0.995)

    def _lookup_rate(self, d: Draft) -> float:
        if not len(d):
            return 0.0
        a = self.lookup_alpha(d.match_len)
        return max(
            AdaptivePolicy.expected_tokens(a, k) / self._cost(k + 1) for k in range(1, len(d) + 1)
        )

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
        if kind != "plain":
            self.chosen[kind] += 1
        meter.open(kind, t0, len(context))
        return out

    def stats(self) -> dict:
        """Steps each proposer won and its measured acceptance (inferred from contexts)."""

        def acc(t: AcceptanceTracker) -> float:
            return round(t.accepted / t.drafted, 4) if t.drafted else 0.0

        return {
            "chosen": dict(self.chosen),
            "acceptance": {"lookup": acc(self.lookup_acc), "model": acc(self.model.tracker)},
        }
