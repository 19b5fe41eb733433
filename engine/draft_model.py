"""Draft-model proposer: a second, smaller model proposes tokens with their probabilities.

Contract: ``ModelDrafter(draft, sampling, target=..., policy=...)`` implements ``Drafter`` over any
``TargetModel`` backend (``Draft.source`` ``"model"``); it raises ``ModelError`` naming both
models when their vocabularies differ (``check_vocab``: size, probe tokens, sampled ids' bytes).
  * ``propose(context, k)`` drafts up to ``k`` tokens, stopping at an EOS. Greedy: each token is
    the draft's argmax, ``probs`` None. Sampled: token i is ``argmax(q_i / E)``, ``q_i`` the
    verifier's own transform of the draft's row (``sampling.probs``), E from ``STREAM_DRAFT`` at
    the token's position; ``probs`` holds the q rows, so the verifier's test is exact.
  * ``device=True`` (the default for a torch draft on CUDA): logits and q rows stay on the
    device; the host reads the k tokens once. The draft's KV cache is rolled back to the common
    prefix with the new context and catches up in one block; nothing is recomputed.
  * ``plan``: with ``policy``, the k maximising expected tokens per second, at most what the
    policy keeps, only when it beats plain decoding by ``min_gain`` (else 0, with probes); a
    fixed k is obeyed; with no policy, ``k_default``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np

from .backend import DeviceTarget, ModelError, TargetModel, shared_prefix
from .draft import Draft
from .policy import AdaptivePolicy
from .sampling import STREAM_DRAFT, SamplingParams, probs, sample_at
from .specmath import AcceptanceTracker, RateMeter, best_k, cost_prior, expected_tokens

log = logging.getLogger(__name__)

_VOCAB_PROBE = "def f(x):\n    return {'héllo': x}  # 日本語 ✓\n\tclass A: pass\n"


def check_vocab(draft: TargetModel, target: TargetModel) -> None:
    """Raise ``ModelError`` unless ``draft`` shares ``target``'s vocabulary."""
    dn, tn = getattr(draft, "name", "draft"), getattr(target, "name", "target")
    if draft.n_vocab != target.n_vocab:
        raise ModelError(
            f"draft model {dn} has a vocabulary of {draft.n_vocab} tokens but the target "
            f"{tn} has {target.n_vocab}: a draft model must share the target's tokenizer"
        )
    if draft.tokenize(_VOCAB_PROBE) != target.tokenize(_VOCAB_PROBE):
        raise ModelError(
            f"draft model {dn} and target {tn} both have {draft.n_vocab} tokens but "
            "tokenize text differently: a draft model must share the target's tokenizer"
        )
    ids = [int(i) for i in np.linspace(0, draft.n_vocab - 1, 97).astype(np.int64)]
    for i in ids:
        if draft.detokenize([i]) != target.detokenize([i]):
            raise ModelError(
                f"draft model {dn} and target {tn} disagree on token {i} "
                f"({draft.detokenize([i])!r} vs {target.detokenize([i])!r}): "
                "a draft model must share the target's tokenizer"
            )


def measure_draft(draft: TargetModel, reps: int = 3) -> tuple[float, float]:
    """(seconds per 1-token step, seconds per token of a 32-token block) of ``draft``.

    Meant for load time, so a ``ModelDrafter`` starts with a cost model instead of
    an exploratory draft. The draft's cache is left empty.
    """
    ids = (draft.tokenize(_VOCAB_PROBE) * 8)[:40]
    draft.rollback(0)
    t = time.perf_counter()
    draft.eval(ids[:32], 0, [31])
    block = (time.perf_counter() - t) / 32
    steps = []
    for i in range(reps):
        t = time.perf_counter()
        draft.eval([ids[32 + i]], 32 + i, [0])
        steps.append(time.perf_counter() - t)
    draft.rollback(0)
    return sorted(steps)[len(steps) // 2], block


class ModelDrafter:
    """Drafts with a smaller model that shares the target's vocabulary (see module docstring)."""

    source = "model"

    def __init__(
        self,
        draft,
        sampling: SamplingParams,
        *,
        target=None,
        policy: AdaptivePolicy | None = None,
        k_max: int = 8,
        k_default: int = 4,
        probe_every: int = 32,
        min_gain: float = 1.1,
        costs: tuple[float, float] | None = None,
        seed: int | None = None,
        device: bool | None = None,
    ) -> None:
        if target is not None:
            check_vocab(draft, target)
        self.draft = draft
        self.params = sampling
        self.policy = policy
        self.k_max, self.k_default, self.probe_every = k_max, k_default, probe_every
        self.min_gain = min_gain
        # its own Philox stream (STREAM_DRAFT): independent of the verifier's numbers
        self.seed = sampling.seed if seed is None else seed
        if device is None:
            on_device = isinstance(draft, DeviceTarget)
            forced = on_device and draft.verifier.strip().lower() in ("triton", "torch")
            on_cuda = on_device and draft.device.type == "cuda"
            device = on_device and (on_cuda or forced)
        if device and not isinstance(draft, DeviceTarget):
            raise ValueError(
                f"{getattr(draft, 'name', 'draft')}: device drafting needs a torch draft"
            )
        self.device = device
        self.tracker = AcceptanceTracker()
        self.cached: list[int] = []  # token ids in the draft's KV cache
        self.step_s: float | None = None  # seconds per 1-token draft eval (EMA)
        self.sync_s: float | None = None  # seconds per catch-up eval (EMA)
        self.prefill_tok_s: float | None = None  # seconds per token of a long catch-up (EMA)
        if costs is not None:  # measured at load (measure_draft): no blind first draft
            self.step_s = self.sync_s = costs[0]
            self.prefill_tok_s = costs[1]
        self._idle = 0
        self._probe_every = probe_every
        self.meter = RateMeter()
        self.off_reason = ""
        draft.rollback(0)

    # ---- cost model ------------------------------------------------------------------
    def _target_cost(self, b: int) -> float:
        return self.policy.cost(b) if self.policy is not None else cost_prior(b)

    def draft_cost(self, k: int) -> float:
        """Estimated seconds to draft ``k`` tokens: one catch-up eval, then k - 1 steps."""
        if self.step_s is None or k <= 0:
            return 0.0
        return (self.sync_s or self.step_s) + (k - 1) * self.step_s

    def catchup_cost(self, gap: int) -> float:
        """Estimated seconds to bring the draft's cache over ``gap`` missing tokens."""
        if gap <= 4:
            return 0.0  # an ordinary step's catch-up, part of draft_cost
        per_token = self.prefill_tok_s
        if per_token is None:  # unmeasured: assume half the target's batched cost
            per_token = 0.5 * self._target_cost(64) / 64
        return gap * per_token

    def gap(self, context: Sequence[int]) -> int:
        """Tokens of ``context`` the draft's cache lacks."""
        return len(context) - shared_prefix(self.cached, context)

    def _extra(self, gap: int):
        """Seconds a draft of k tokens adds to its target call (drafting and catch-up)."""
        return lambda k: self.draft_cost(k) + self.catchup_cost(gap)

    def _rate(self, a: float, k: int, gap: int = 0) -> float:
        return expected_tokens(a, k) / (self._target_cost(k + 1) + self._extra(gap)(k))

    def _could_pay(self, k_cap: int, alpha: float = 0.9) -> bool:
        """Whether drafting would beat plain at a high acceptance: else probes are waste."""
        plain = self.min_gain / self._target_cost(1)
        return any(self._rate(alpha, k) > plain for k in range(1, k_cap + 1))

    def realized_loss(self) -> bool:
        """True when measured model-drafted steps ran slower than measured plain steps."""
        model, plain = self.meter.rate("model"), self.meter.rate("plain")
        return model is not None and plain is not None and model < plain

    def plan(
        self, k_cap: int, gap: int = 0, explore: bool = True, amortize: float = 0.0
    ) -> tuple[int, float]:
        """(k, expected tokens per second of such a step); k = 0 means do not draft.

        With ``policy`` (the decode loop's ``AdaptivePolicy``, whose cost curve t(b) is
        measured in seconds): ``k = argmax E(alpha, k) / (t(k + 1) + draft_cost(k))``,
        alpha the drafter's own running per-token acceptance, inferred from the contexts it
        is shown, ``draft_cost`` measured. It drafts only when that beats plain decoding by
        ``min_gain`` (10%: the estimates are noisy) and never more tokens than the policy
        keeps (the policy trims drafts by its own estimate). Otherwise k = 0, with a
        2-token probe every ``probe_every`` such steps to refresh alpha (backing off
        exponentially while probes fail), unless even 90% acceptance could not pay for the
        measured costs. Without measured costs the first draft is a short exploratory one.
        A catch-up is priced ``gap * prefill cost per token``. When model-drafted steps,
        timed end to end, run slower than plain ones (``realized_loss``), it stops drafting,
        probes excepted, whatever the estimate says.

        ``gap`` is the catch-up the step would need (see ``gap``); ``explore`` allows
        the first, unmeasured draft and the periodic probes. ``amortize`` > 0 spreads
        the catch-up over that many steps and forbids exploring when even that costs
        more than a plain step (the combined proposer passes its lookup-miss streak).
        """
        k_cap = min(k_cap, self.k_max)
        if k_cap <= 0:
            return 0, 0.0
        a = self.tracker.alpha()
        if amortize > 0:
            if self.catchup_cost(gap) / amortize > self._target_cost(1):
                explore = False
            gap = int(gap / amortize)
        if self.policy is None or self.policy.cfg.fixed_k is not None:
            fixed = self.k_default if self.policy is None else self.policy.cfg.fixed_k
            k = min(fixed, k_cap)
            return k, self._rate(a, k, gap)
        if self.step_s is None:  # nothing measured yet: a short exploratory draft
            if not explore:
                return 0, 0.0
            k = min(self.k_default, k_cap, self.policy.planned_k(k_cap) or self.k_default)
            return k, self._rate(a, k, gap)
        plain = 1.0 / self._target_cost(1)
        k, rate = best_k(a, range(1, k_cap + 1), self._target_cost, self._extra(gap))
        k = k if rate > plain * self.min_gain else 0
        k_pol = self.policy.planned_k(k_cap)
        k = 0 if self.realized_loss() else min(k, k_pol)
        if k:
            self.off_reason = ""
            self._probe_every = self.probe_every
            return k, self._rate(a, k, gap)
        self._idle += 1
        if explore and self._idle >= self._probe_every and k_pol and self._could_pay(k_cap):
            # a probe refreshes alpha; each one that does not turn drafting on doubles
            # the wait for the next (its catch-up costs a small prefill)
            self._idle = 0
            self._probe_every = min(2 * self._probe_every, 256)
            k = min(2, k_pol)
            return k, self._rate(a, k, gap)
        self.off_reason = f"draft model: expected gain below plain (alpha {a:.2f})"
        return 0, plain

    # ---- drafting ------------------------------------------------------------------
    def propose(self, context: Sequence[int], k: int) -> Draft:
        t0 = time.perf_counter()
        self.meter.close(len(context))
        self.tracker.observe(context)
        room = self.draft.n_ctx - len(context) - 1
        k, _ = self.plan(min(k, room), self.gap(context), amortize=max(1, self._idle))
        d = self.draft_tokens(context, k)
        self.meter.open("model" if len(d) else "plain", t0, len(context))
        return d

    def draft_tokens(self, context: Sequence[int], k: int) -> Draft:
        """Draft exactly up to ``k`` tokens after ``context`` (no planning)."""
        n = len(context)
        if k <= 0 or n == 0 or n + k >= self.draft.n_ctx:
            return Draft()
        # sync the cache: keep the common prefix, evaluate the rest (at least one token)
        p = min(shared_prefix(self.cached, context), n - 1)
        t = time.perf_counter()
        if self.device:  # the catch-up's last row stays on the device
            d = self.draft
            row = d.eval_ids(d.upload(context[p:]), p, context[p:], last_only=True)
        else:
            row = self.draft.eval(context[p:], p, [n - 1 - p])[0]
        dt = time.perf_counter() - t
        if n - p <= 4:  # a per-step catch-up
            self.sync_s = _ema(self.sync_s, dt)
        else:  # a long one is a prefill: its cost per token prices later catch-ups
            self.prefill_tok_s = _ema(self.prefill_tok_s, dt / (n - p))
        self.cached = list(context)
        if self.device:
            return self._draft_on_device(context, k, row, t)
        tokens: list[int] = []
        qs: list[np.ndarray] = []
        eos = self.draft.eos_ids
        greedy = self.params.greedy
        for i in range(k):
            if greedy:
                x = int(np.argmax(row))
            else:
                q = probs(row, self.params)
                x = sample_at(q, self.seed, n + i, STREAM_DRAFT)
                qs.append(q)
            tokens.append(x)
            if i == k - 1 or x in eos:
                break
            t = time.perf_counter()
            row = self.draft.eval([x], n + i, [0])[0]
            self.step_s = _ema(self.step_s, time.perf_counter() - t)
            self.cached.append(x)
        if self.step_s is None:  # a 1-token draft: the best estimate there is
            self.step_s = self.sync_s or dt
        toks = np.asarray(tokens, dtype=np.int64)
        self.tracker.proposed(n, toks)
        return Draft(toks, None if greedy else np.stack(qs), self.source, 0, anchored=False)

    def _draft_on_device(self, context: Sequence[int], k: int, row, t0: float) -> Draft:
        """The drafting loop with every row and token on the draft's device (docstring)."""
        import torch

        from ..kernels.verify_torch import position_noise, target_probs

        d, n, greedy = self.draft, len(context), self.params.greedy
        xs, qs = [], []
        positions = torch.arange(n, n + k, device=row.device)  # context index of each token
        for i in range(k):
            if greedy:
                x = row.argmax(-1)  # [1]
            else:
                q = target_probs(row, self.params)  # [1, V] fp32
                e = position_noise(self.seed, positions[i : i + 1], STREAM_DRAFT, q.shape[-1])
                x = (q / e).argmax(-1)
                qs.append(q)
            xs.append(x)
            if i < k - 1:
                row = d.eval_ids(x, n + i)
        tokens = d.readback(torch.cat(xs))  # the draft's one sync
        self.cached.extend(int(x) for x in tokens[:-1])  # evaluated: all but the last
        stop = next((i for i, x in enumerate(tokens) if int(x) in d.eos_ids), None)
        if stop is not None:
            tokens = tokens[: stop + 1]
        if k > 1:
            self.step_s = _ema(self.step_s, (time.perf_counter() - t0) / k)
        elif self.step_s is None:
            self.step_s = self.sync_s
        toks = np.asarray(tokens, dtype=np.int64)
        self.tracker.proposed(n, toks)
        probs_dev = None if greedy else torch.cat(qs)[: len(toks)]
        return Draft(toks, probs_dev, self.source, 0, anchored=False)

    def prefill(self, prompt: Sequence[int]) -> None:
        """Evaluate ``prompt`` on the draft ahead of decoding (optional; saves a catch-up)."""
        if len(prompt) > 1:
            p = shared_prefix(self.cached, prompt)
            if p < len(prompt) - 1:
                self.draft.eval(prompt[p:-1], p, [])
            self.cached = list(prompt[:-1])


def _ema(old: float | None, new: float, w: float = 0.2) -> float:
    return new if old is None else (1 - w) * old + w * new
