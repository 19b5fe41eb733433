"""The decode loop: prefill, then {draft -> verify in one target call -> accept -> roll back}.

Contract: ``generate(target, prompt, cfg, drafter=None, ...)`` returns the generated token ids (EOS
excluded) and the run's ``Metrics``. Token ids only: stop strings are the caller's, through
``on_tokens`` (each batch of accepted tokens, as soon as accepted; it returns False to stop).
``cancel`` (a threading.Event) stops between target calls, the prefill's batches included.
One step, with ``pending`` the last accepted token (not yet in the KV cache)::

    block  = [pending, d1 .. dk]        # k from the policy, drafts from the drafter
    j, new = verify_block(block, pos)   # one target call: d1..dj accepted, + recovered/bonus
    pos   += 1 + j                      # entries past pos are stale; the next eval drops them

Plain decoding is the same loop with k = 0. Exact mode evaluates in sub-blocks of at most
``cfg.exact_block`` tokens (``engine.exactness``), so greedy speculative output equals plain.
Where logits are judged is ``engine.verifier``'s; ``Metrics.verifier`` names the one that ran.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .backend import TargetModel
from .constraint import ConstrainedDrafter, ConstrainedTarget, Constraint
from .draft import Draft, Drafter
from .metrics import Metrics, StopReason
from .policy import AdaptivePolicy, PolicyConfig
from .prefill import prefill
from .sampling import SamplingParams
from .verifier import HostVerifier, Verifier, choose_verifier


@dataclass(frozen=True)
class GenConfig:
    """Settings of one generation."""

    max_tokens: int = 1024
    """Stop after this many generated tokens."""
    sampling: SamplingParams = field(default_factory=SamplingParams)
    """Temperature, top-k, top-p and seed."""
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    """k fixed or adaptive; see engine.policy."""
    speculate: bool = True
    """False decodes plainly (the drafter is not consulted)."""
    exact_block: int | None = None
    """Exact mode: evaluate blocks in sub-blocks of at most this many tokens."""


@dataclass
class GenResult:
    tokens: list[int]
    metrics: Metrics


def read_prompt(
    target: TargetModel,
    prompt: Sequence[int],
    metrics: Metrics,
    start: int = 0,
    marks: Sequence[int] = (),
    *,
    verifier: Verifier | None = None,
    cancel: threading.Event | None = None,
):
    """Evaluate ``prompt`` in its canonical batches (``engine.prefill``: the same batches
    whatever the cache holds, so the logits are too), reusing at most ``start`` cached
    positions; ``marks`` are where prompts sharing this prefix part ways. Each batch is
    booked in ``metrics`` (the reading phase's progress). Returns the last row of logits,
    where ``verifier`` works (numpy on the host by default), or None when ``cancel`` was
    set before the last batch (what was evaluated stays cached)."""
    ver = verifier or HostVerifier()

    def plan(kept: int) -> None:
        metrics.cached_tokens = kept
        metrics.read_total = len(prompt) - kept

    logits, _ = prefill(
        target,
        prompt,
        marks,
        limit=start,
        fill=lambda toks, pos: ver.fill(target, toks, pos),
        last=lambda toks, pos: ver.prefill(target, toks, pos),
        cancel=cancel,
        on_batch=metrics.observe_prefill,
        on_plan=plan,
    )
    return logits


def generate(
    target: TargetModel,
    prompt: Sequence[int],
    cfg: GenConfig,
    drafter: Drafter | None = None,
    *,
    on_tokens: Callable[[list[int]], bool | None] | None = None,
    cancel: threading.Event | None = None,
    metrics: Metrics | None = None,
    policy: AdaptivePolicy | None = None,
    cached_prefix: int = 0,
    verifier: Verifier | None = None,
    prefix_marks: Sequence[int] = (),
    constraint: Constraint | None = None,
) -> GenResult:
    """Generate from ``prompt`` with speculative decoding (see module docstring).

    ``constraint`` (``engine.constraint``) restricts the tokens after each output prefix,
    in the verifier's rows and the drafts alike.

    Up to ``cached_prefix`` positions of the target's cache are reused where they equal a
    cold evaluation; ``prefix_marks`` are where prompts sharing this one's prefix part ways
    (``engine.prefill``)."""
    if not prompt:
        raise ValueError("empty prompt")
    ver = verifier or choose_verifier(target)
    if constraint is not None:  # after the verifier is chosen: it follows the real target
        target = ConstrainedTarget(target, prompt, constraint)
        if drafter is not None:
            drafter = ConstrainedDrafter(drafter, len(prompt), constraint)
    m = metrics or Metrics()
    m.verifier = ver.name
    pol = policy or AdaptivePolicy(cfg.policy)
    m.exact = cfg.exact_block is not None
    m.speculation = cfg.speculate and drafter is not None
    m.backend = target.backend
    m.device = target.device_name
    tokens: list[int] = list(prompt)
    out: list[int] = []
    eos = target.eos_ids

    first_logits = read_prompt(
        target, tokens, m, cached_prefix, prefix_marks, verifier=ver, cancel=cancel
    )
    if first_logits is None:  # cancelled while reading the prompt
        m.stop_reason = StopReason.CANCELLED
        return GenResult(out, m)
    with m.time("sample"):
        new = [ver.first_token(first_logits, cfg.sampling, n_out=0)]
    pos = len(tokens)  # where ``pending`` goes in the cache
    m.start_decoding()
    t_decode = time.perf_counter()
    while True:
        stop = _emit(new, out, tokens, eos, cfg.max_tokens, on_tokens, m)
        m.decode_s = time.perf_counter() - t_decode
        if stop:
            break
        if cancel is not None and cancel.is_set():
            m.stop_reason = StopReason.CANCELLED
            break
        if pos + 1 >= target.n_ctx:
            m.stop_reason = StopReason.CONTEXT_FULL
            break
        draft, k = _draft(drafter, pol, tokens, cfg, m, room=target.n_ctx - pos - 1)
        block = [tokens[-1], *(int(t) for t in draft.tokens)]
        t = time.perf_counter()
        with m.time("verify"):
            # randomness is keyed by output position (len(out) is the first one this step
            # decides), so a seed gives the same text whatever k was and whichever verifier ran
            res = ver.verify_block(target, block, pos, draft, cfg, len(out), m)
        dt = time.perf_counter() - t
        m.observe_step(len(draft), res.num_accepted, len(res.tokens), draft.source)
        pol.observe(len(block), dt, len(draft), res.num_accepted, len(res.tokens), draft.match_len)
        m.k, m.off_reason = pol.k, pol.off_reason
        pos += 1 + res.num_accepted
        new = res.tokens
    m.decode_s = time.perf_counter() - t_decode
    return GenResult(out, m)


def _draft(drafter, pol, tokens, cfg, m, room: int) -> tuple[Draft, int]:
    if drafter is None or not cfg.speculate:
        return Draft(), 0
    with m.time("draft"):
        # ask for the most the policy could want; the policy trims it
        probe = drafter.propose(tokens, min(cfg.policy.fixed_k or cfg.policy.k_max, room))
        k = pol.choose(len(probe) > 0, probe.match_len, anchored=probe.anchored)
        k = min(k, len(probe), room)
        if k <= 0:
            return Draft(), 0
        if k < len(probe):
            probs = probe.probs[:k] if probe.probs is not None else None
            probe = Draft(probe.tokens[:k], probs, probe.source, probe.match_len, probe.anchored)
    return probe, k


def _emit(new, out, tokens, eos, max_tokens, on_tokens, m: Metrics) -> bool:
    """Append accepted tokens; return True when generation must stop."""
    stop_reason = StopReason.NONE
    for i, t in enumerate(new):
        if t in eos:
            new = new[:i]
            stop_reason = StopReason.EOS
            break
    room = max_tokens - len(out)
    if len(new) >= room:
        new = new[:room]
        stop_reason = stop_reason or StopReason.MAX_TOKENS
    out.extend(new)
    tokens.extend(new)
    m.generated_tokens = len(out)
    if new and on_tokens is not None and on_tokens(list(new)) is False:
        stop_reason = stop_reason or StopReason.STOP
    if stop_reason:
        m.stop_reason = stop_reason
    return bool(stop_reason)
