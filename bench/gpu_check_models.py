"""Random-weight models for the GPU check, and its correctness checks on them.

Contract: ``build(ctx, name, dtype, quant, graphs, damp)`` is a random-weight Qwen2 with the
shapes of catalog model ``name`` (``bench/qwen_shapes.json``; the CPU rehearsal's tiny
``SMOKE_SHAPE`` when ``ctx["cpu"]``) on ``ctx["device"]``, as a ``TorchTarget`` with the
static cache. ``correctness(ctx, name)`` writes checks to ``ctx["res"]``
(``bench/gpu_check_results.Results``), each with a verdict that cannot pass vacuously:

  * ``greedy``: on an undamped fp32 model (graphs on CUDA, the kernel in the loop, drafts of
    the plain output with every 4th draft corrupted so rejections and recovered tokens
    happen), speculative output == plain, position by position (``greedy_check``): every
    position's top-2 logit margin is measured on the plain text; a mismatch at a margin of at
    least ``TAU_FP32`` fails; a mismatch at a near-tie (below it, where fp32 rounding of a
    batched matmul can flip the argmax) is skipped by forcing plain's token and continuing,
    and the share of skipped positions is reported and bounded (``MAX_SKIP_SHARE``);
  * ``exact``: exact mode (1-token sub-blocks) == plain, bit for bit, no margin;
  * ``sampled``: sampled text identical across the Triton verifier, the numpy verifier on
    host logits and plain sampling (position-keyed Philox numbers).

``first_divergence(...)`` is the cheaper form used on the bf16 timing runs: their first
mismatch must be at a margin under ``BF16_ULPS`` bf16 ulps of the top logit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

from ..engine.decode import GenConfig, generate
from ..engine.draft import Draft
from ..engine.policy import AdaptivePolicy, PolicyConfig
from ..engine.sampling import SamplingParams
from ..engine.verifier import DeviceVerifier, HostVerifier
from ..models.torch_backend import TorchTarget

SHAPES = Path(__file__).with_name("qwen_shapes.json")
SMOKE_SHAPE = {
    "vocab_size": 512,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
}
DAMP = 1e-4
"""Scale of the timing models' o_proj and down_proj: the hidden state is dominated by the
token embedding, so bf16's batched-vs-1-token rounding rarely flips a greedy token (a
random model has no margins); the compute per step is the real shapes'."""
TAU_FP32 = 1e-3
"""fp32 top-2 margin below which a greedy mismatch is a near-tie (batched fp32 rounding is
~1e-5 on these logits)."""
MAX_SKIP_SHARE = 0.05
"""Most near-tie positions the greedy check may skip, as a share of the tokens."""
BF16_ULPS = 4
"""bf16 runs: a first mismatch at a margin of this many ulps of the top logit or more fails."""


class Oracle:
    """Drafts the continuation of a known output while the context follows it.

    ``corrupt_every`` > 0 flips the last token of every such draft, so rejections and
    recovered tokens are exercised too.
    """

    def __init__(self, prompt_len: int, output: list[int], vocab: int, corrupt_every: int = 0):
        self.n, self.out, self.vocab = prompt_len, list(output), vocab
        self.corrupt_every, self.calls = corrupt_every, 0

    def propose(self, context, k: int) -> Draft:
        i = len(context) - self.n
        if i < 0 or list(context[self.n :]) != self.out[:i]:
            return Draft()
        toks = self.out[i : i + k]
        self.calls += 1
        if toks and self.corrupt_every and self.calls % self.corrupt_every == 0:
            toks[-1] = (toks[-1] + 1) % self.vocab
        return Draft(np.asarray(toks, dtype=np.int64), None, "oracle", self.n + i, anchored=True)


def build(ctx, name: str, dtype, quant: str, graphs: bool, damp: float | None) -> TorchTarget:
    """A random-weight Qwen2 with ``name``'s shapes on the device, as a TorchTarget."""
    from torch_tiny import tiny_tokenizer
    from transformers import Qwen2Config, Qwen2ForCausalLM

    shape = dict(json.loads(SHAPES.read_text())[name])
    if ctx["cpu"]:
        shape.update(SMOKE_SHAPE)
    keys = (
        "vocab_size",
        "hidden_size",
        "intermediate_size",
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
        "rms_norm_eps",
        "max_position_embeddings",
        "tie_word_embeddings",
    )
    cfg = Qwen2Config(**{k: shape[k] for k in keys}, use_sliding_window=False)
    theta = shape["rope_theta"]
    if isinstance(getattr(cfg, "rope_parameters", None), dict):
        cfg.rope_parameters = {**cfg.rope_parameters, "rope_type": "default", "rope_theta": theta}
    else:
        cfg.rope_theta = theta
    torch.manual_seed(0)
    with torch.device(ctx["device"]):
        model = Qwen2ForCausalLM(cfg)
    model = model.to(dtype).eval()
    if damp is not None:
        with torch.no_grad():
            for layer in model.model.layers:
                layer.self_attn.o_proj.weight.mul_(damp)
                layer.mlp.down_proj.weight.mul_(damp)
    target = TorchTarget(
        model, tiny_tokenizer(), n_ctx=1024, name=name, quant=quant, static=True, graphs=graphs
    )
    target.eos_ids = frozenset()  # fixed-length runs: a random model may emit any id
    return target


def prompt_ids(ctx, target) -> list[int]:
    n = 16 if ctx["cpu"] else 64
    return [int(x) for x in np.random.default_rng(1).integers(300, target.n_vocab, n)]


def gen_len(ctx) -> int:
    return 24 if ctx["cpu"] else 256


def run(target, prompt, n, drafter=None, *, policy=None, verifier=None, **cfg_kw):
    """``generate`` from a cold cache; plain decoding without a drafter."""
    target.rollback(0)
    cfg = GenConfig(max_tokens=n, policy=policy.cfg if policy else PolicyConfig(), **cfg_kw)
    if drafter is None:
        cfg = GenConfig(max_tokens=n, speculate=False, **cfg_kw)
    return generate(target, prompt, cfg, drafter, policy=policy, verifier=verifier)


def top2(target, prompt: Sequence[int], out: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(top-2 margin, top logit) of the row that decided each token of ``out``, teacher-forced
    in one pass over ``prompt + out`` (the margins of the plain text)."""
    target.rollback(0)
    toks = list(prompt) + list(out[:-1])
    rows = target.eval_device(toks, 0, range(len(prompt) - 1, len(toks)))  # [n, V] fp32
    vals = rows.topk(2, dim=-1).values.float().cpu().numpy()
    target.rollback(0)
    return vals[:, 0] - vals[:, 1], vals[:, 0]


def _first_mismatch(ref: Sequence[int], got: Sequence[int]) -> int | None:
    i = next((j for j, (a, b) in enumerate(zip(ref, got, strict=False)) if a != b), None)
    if i is None and len(got) < len(ref):
        return len(got)
    return i


def greedy_check(
    plain: list[int],
    margins: np.ndarray,
    spec_from: Callable[[int], list[int]],
    tau: float = TAU_FP32,
    max_share: float = MAX_SKIP_SHARE,
) -> dict:
    """Speculative == plain at every position whose margin is clear (module docstring).

    ``spec_from(i)`` is the speculative output for positions i.. when ``plain[:i]`` is forced
    after the prompt. Returns the record; ``ok`` is the verdict."""
    n, pos, skipped, bad = len(plain), 0, [], None
    limit = int(max_share * n)
    while pos < n:
        got = spec_from(pos)
        i = _first_mismatch(plain[pos:], got)
        if i is None:
            break
        i += pos
        if margins[i] >= tau:
            bad = i
            break
        skipped.append(i)
        if len(skipped) > limit:
            break
        pos = i + 1
    ok = bad is None and len(skipped) <= limit
    return {
        "ok": ok,
        "tokens": n,
        "mismatch_at_clear_margin": bad,
        "margin_there": None if bad is None else float(margins[bad]),
        "near_ties_skipped": skipped,
        "skipped_share": round(len(skipped) / max(n, 1), 4),
        "max_skipped_share": max_share,
        "near_tie_positions": int((margins < tau).sum()),
        "tau": tau,
        "margin_quantiles": {q: float(np.quantile(margins, q)) for q in (0.01, 0.05, 0.5)},
    }


def first_divergence(plain: list[int], got: list[int], margins, tops) -> dict:
    """bf16 runs: where ``got`` leaves ``plain`` and whether that margin was a near-tie."""
    i = _first_mismatch(plain, got)
    if i is None:
        return {"ok": True, "equal": True, "compared": len(plain)}
    ulp = 2.0 ** (np.floor(np.log2(max(abs(float(tops[i])), 1e-30))) - 7)
    return {
        "ok": bool(margins[i] < BF16_ULPS * ulp),
        "equal": False,
        "compared": i,
        "margin": float(margins[i]),
        "near_tie_below": float(BF16_ULPS * ulp),
    }


def correctness(ctx, name: str) -> None:
    """The three checks of the module docstring, each written as it is decided."""
    res = ctx["res"]
    t = build(ctx, name, torch.float32, "none", ctx["device"] == "cuda", None)
    prompt, n = prompt_ids(ctx, t), gen_len(ctx)
    kernel = DeviceVerifier("triton")
    plain = run(t, prompt, n, verifier=kernel).tokens
    margins, _ = top2(t, prompt, plain)
    calls = []

    def spec_from(i: int) -> list[int]:
        head = prompt + plain[:i]
        oracle = Oracle(len(head), plain[i:], t.n_vocab, corrupt_every=4)
        r = run(
            t, head, n - i, oracle, policy=AdaptivePolicy(PolicyConfig(fixed_k=15)), verifier=kernel
        )
        calls.append(round(r.metrics.tokens_per_call, 2))
        return r.tokens

    rec = greedy_check(plain, margins, spec_from)
    rec["tokens_per_call"] = calls
    res.check("greedy", rec.pop("ok"), **rec)
    oracle = Oracle(len(prompt), plain, t.n_vocab, 4)
    pol = AdaptivePolicy(PolicyConfig(fixed_k=15))
    exact = run(t, prompt, n, oracle, policy=pol, verifier=kernel, exact_block=1).tokens
    i = _first_mismatch(plain, exact)
    res.check("exact", i is None, first_mismatch=i, tokens=n)
    sp = SamplingParams(temperature=0.8, top_p=0.95, seed=7)
    ns = 12 if ctx["cpu"] else 48
    plain_s = run(t, prompt, ns, verifier=kernel, sampling=sp).tokens
    same = {}
    for label, ver in (("triton", DeviceVerifier("triton")), ("numpy", HostVerifier())):
        drafter = Oracle(len(prompt), plain_s, t.n_vocab, 3)
        pol = AdaptivePolicy(PolicyConfig(fixed_k=7))
        got = run(t, prompt, ns, drafter, policy=pol, verifier=ver, sampling=sp).tokens
        same[label] = _first_mismatch(plain_s, got)
    res.check("sampled", all(v is None for v in same.values()), first_mismatch=same, tokens=ns)
