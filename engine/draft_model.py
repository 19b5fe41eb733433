"""Draft-model proposer: a second, smaller model proposes tokens with their probabilities.

Contract: ``ModelDrafter(draft, sampling, target=..., policy=...)`` implements the
``Drafter`` protocol over any ``TargetModel`` backend (llama.cpp or torch).

  * At construction ``check_vocab(draft, target)`` raises ``ModelError`` naming
    both models when their vocabularies differ (size, tokenization of a probe
    text, or the bytes of sampled token ids).
  * ``propose(context, k)`` drafts up to ``k`` tokens autoregressively. Under
    greedy sampling each token is the draft's argmax and ``probs`` is None;
    otherwise token i is drawn from ``q_i = sampling.probs(row_i, params)``
    (the same temperature / top-k / top-p transform the verifier applies to
    the target) as ``argmax(q_i / E)`` with E from ``STREAM_DRAFT`` at the
    token's index in the context (the position-keyed scheme of
    ``engine.sampling``, so a seed drafts the same tokens on every verifier),
    and ``probs`` holds the q_i rows, so the verifier's min(1, p/q) test with
    the norm(max(p - q, 0)) residual is exact.
    ``Draft.source`` is ``"model"``. Drafting stops early at an EOS token.
  * On the device (``device=True``, the default for a torch draft on CUDA or when
    ``SPECEDIT_VERIFIER`` asks for a device verifier): the draft's logits never
    leave it. Each token is the argmax, or ``argmax(q / E)`` with q computed by
    ``kernels.verify_torch.target_probs`` and E from the same ``STREAM_DRAFT``
    numbers, and is fed back as a device tensor; ``probs`` is the device tensor
    of the q rows, which the device verifier hands straight to the kernel. The
    host reads the k tokens once, after the last step (one sync), and cuts the
    draft after an EOS there. Costs are timed per draft, not per token.
  * KV cache sync: the drafter remembers which tokens sit in the draft's cache.
    On each call it finds the common prefix of that with the new context (the
    accepted part of its last draft is in it), rolls the cache back there, and
    evaluates the missing tokens (the recovered/bonus token, or a stretch
    another proposer drafted) in one block. Nothing is recomputed.
  * Adaptive k: with ``policy`` (the decode loop's ``AdaptivePolicy``, whose
    cost curve t(b) is measured in seconds) the drafter picks
    ``k = argmax E(alpha, k) / (t(k + 1) + draft_cost(k))``, where alpha is its
    own running per-token acceptance, inferred from the contexts it is shown,
    and ``draft_cost`` is measured. It drafts only when that beats plain
    decoding by ``min_gain`` (10%: the estimates are noisy) and never more
    tokens than the policy will keep (the policy trims drafts by its own
    estimate, so tokens beyond its k would be wasted). Otherwise k = 0 (no
    draft: a plain step), with a 2-token probe every ``probe_every`` such
    steps to refresh alpha, unless even 90% acceptance could not pay for the
    measured costs (then probing is pure waste). ``costs`` from ``measure_draft`` (at load) seed
    the cost model; without them the first draft is a short exploratory one. A
    fixed k in the policy is obeyed. Without a policy it drafts ``k_default``.
    When the cache lags far behind (another proposer drafted meanwhile), the
    catch-up is priced too: ``gap * prefill cost per token`` (measured).
    Probes back off exponentially while they keep failing. A realized-rate
    guard backs the estimate: when model-drafted steps, timed end to end
    between proposals (drafting included), run slower than plain ones, the
    drafter stops (probes excepted) whatever the estimate says.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from collections.abc import Sequence

import numpy as np

from ..models.base import ModelError
from .draft import Draft
from .policy import AdaptivePolicy
from .sampling import STREAM_DRAFT, SamplingParams, probs, sample_at

log = logging.getLogger(__name__)

_VOCAB_PROBE = "def f(x):\n    return {'héllo': x}  # 日本語 ✓\n\tclass A: pass\n"


def check_vocab(draft, target) -> None:
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


def measure_draft(draft, reps: int = 3) -> tuple[float, float]:
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


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the common prefix of two token sequences."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    x = np.asarray(a[:n], dtype=np.int64)
    y = np.asarray(b[:n], dtype=np.int64)
    diff = np.flatnonzero(x != y)
    return int(diff[0]) if diff.size else n


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
        j = common_prefix(toks, context[n : n + len(toks)])
        self.steps.append((len(toks), j))
        self.drafted += len(toks)
        self.accepted += j

    def alpha(self) -> float:
        acc = sum(a for _, a in self.steps)
        rej = sum(1 for d, a in self.steps if a < d)
        w = self.prior_weight
        return min((acc + self.prior * w) / (acc + rej + w), 0.995)


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
            forced = os.environ.get("SPECEDIT_VERIFIER", "") in ("triton", "torch")
            on_cuda = getattr(getattr(draft, "device", None), "type", "") == "cuda"
            device = hasattr(draft, "eval_ids") and (on_cuda or forced)
        if device and not hasattr(draft, "eval_ids"):
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
        return self.policy.cost(b) if self.policy is not None else 1.0 + 0.15 * (b - 1)

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
        return len(context) - common_prefix(self.cached, context)

    def _rate(self, a: float, k: int, gap: int = 0) -> float:
        cost = self._target_cost(k + 1) + self.draft_cost(k) + self.catchup_cost(gap)
        return AdaptivePolicy.expected_tokens(a, k) / cost

    def _policy_k(self, k_cap: int) -> int:
        """The k the decode loop's policy will keep of a model draft (it trims, never extends)."""
        pol = self.policy
        if pol.off_reason:  # its guard is on: it only takes its periodic probes
            probing = getattr(pol, "_since_probe", 0) + 1 >= pol.cfg.probe_every
            return min(2, k_cap) if probing else 0
        a = pol.alpha(0)
        best_k, best = 0, 1.0 / pol.cost(1)
        for k in range(1, k_cap + 1):
            rate = AdaptivePolicy.expected_tokens(a, k) / pol.cost(k + 1)
            if rate > best:
                best_k, best = k, rate
        return best_k

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
            k = min(self.k_default, k_cap, self._policy_k(k_cap) or self.k_default)
            return k, self._rate(a, k, gap)
        plain = 1.0 / self._target_cost(1)
        best_k, best = 0, plain * self.min_gain
        for k in range(1, k_cap + 1):
            rate = self._rate(a, k, gap)
            if rate > best:
                best_k, best = k, rate
        k_pol = self._policy_k(k_cap)
        best_k = 0 if self.realized_loss() else min(best_k, k_pol)
        if best_k:
            self.off_reason = ""
            self._probe_every = self.probe_every
            return best_k, self._rate(a, best_k, gap)
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
        p = min(common_prefix(self.cached, context), n - 1)
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
        return Draft(toks, None if greedy else np.stack(qs), self.source, 0)

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
        return Draft(toks, probs_dev, self.source, 0)

    def prefill(self, prompt: Sequence[int]) -> None:
        """Evaluate ``prompt`` on the draft ahead of decoding (optional; saves a catch-up)."""
        if len(prompt) > 1:
            p = common_prefix(self.cached, prompt)
            if p < len(prompt) - 1:
                self.draft.eval(prompt[p:-1], p, [])
            self.cached = list(prompt[:-1])


def _ema(old: float | None, new: float, w: float = 0.2) -> float:
    return new if old is None else (1 - w) * old + w * new
