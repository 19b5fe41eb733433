"""The GPU check's figures: step costs, self-copy speed, syncs per step, kernels per token.

Contract: each function writes its figures to ``ctx["res"]`` (``gpu_check_results.Results``)
as soon as each is measured, so a step killed half way keeps what it had.

  * ``timings(ctx, name, quant, graphs, targets=None)``: a damped bf16 model of ``name``'s
    shapes (fp32 tiny on the CPU): plain greedy tok/s; the verify step's cost t(b) for b = 1..128
    (upload, forward, kernel, one read-back: the host-inclusive step) and t(32)/t(1); the
    self-copy task (drafts are the model's own plain output, so acceptance is high by
    construction), adaptive and fixed k = 31, on the same target as plain (graphs on or off
    for both), its output checked against plain (``gpu_check_models.first_divergence``);
    syncs per step over a long fixed-k run (``gpu_check_syncs``: the prefill's syncs
    counted apart, exactly); memory. With ``targets`` (a prefix such as ``"0.5b"``) the
    three model targets are written too: syncs per step <= 1, self-copy >= 5x plain,
    t(32)/t(1) <= 1.3.
  * ``kernels_per_token(ctx, name)``: kernels of one plain 1-token forward, the model's own
    modules (``StaticLM(fused=False)``) against the fused step, eager. On CUDA they are the
    profiler's CUDA kernels; on the CPU the proxy is the profiler's leaf aten ops that are
    not views (a CPU op that would be one kernel launch), and the record says which.
"""

from __future__ import annotations

import gc
import statistics
import time

import numpy as np
import torch

from ..engine.policy import AdaptivePolicy, PolicyConfig
from ..engine.verifier import DeviceVerifier, calibration_target
from ..models.torch_backend import TorchTarget
from .gpu_check_models import (
    DAMP,
    Oracle,
    build,
    first_divergence,
    gen_len,
    prompt_ids,
    run,
    top2,
)
from .gpu_check_syncs import CountingVerifier, SyncCounter, syncs_per_step

SIZES = (1, 2, 4, 8, 16, 32, 64, 128)
"""Block sizes whose verify-step cost is measured."""
SYNC_K = 7
"""Fixed draft length of the sync-count run (a long run of many steps)."""


def device_verifier(ctx) -> DeviceVerifier:
    """The Triton verifier on CUDA; the torch twin in the CPU rehearsal's timings (the
    interpreter would time Python, not the kernel)."""
    return DeviceVerifier("torch" if ctx["cpu"] else "triton")


def step_costs(target, pos: int, reps: int, verifier: DeviceVerifier) -> dict[int, float]:
    """Median ms of the device verifier's whole step (upload, forward, kernel, read-back)."""
    view = calibration_target(target, verifier)
    ids = [int(x) for x in np.random.default_rng(2).integers(300, target.n_vocab, max(SIZES))]
    out = {}
    target.rollback(0)
    target.eval_ids(target.upload(ids[:pos]), 0, ids[:pos], last_only=True)
    for b in SIZES:
        view.eval(ids[:b], pos, range(b))  # warm-up (graph capture)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            view.eval(ids[:b], pos, range(b))
            times.append(time.perf_counter() - t0)
        out[b] = round(statistics.median(times) * 1e3, 3)
    return out


def _free(ctx) -> None:
    gc.collect()  # the model, its KV cache and its graphs' pool go before the next one
    if ctx["device"] == "cuda":
        torch.cuda.empty_cache()


def timings(ctx, name: str, quant: str, graphs: bool, targets: str | None = None) -> None:
    """Figures of one model variant (module docstring), written as they are measured."""
    res, cuda = ctx["res"], ctx["device"] == "cuda"
    key = f"{name}/{quant}/{'graphs' if graphs else 'eager'}"
    if cuda:
        _free(ctx)
        torch.cuda.reset_peak_memory_stats()
    dtype = torch.float32 if ctx["cpu"] else torch.bfloat16
    t = build(ctx, name, dtype, quant, graphs, DAMP)
    res.figure(f"{key}/target", t.describe())
    if cuda:
        res.figure(f"{key}/cuda_allocated_mib", round(torch.cuda.memory_allocated() / 2**20, 1))
    prompt, n = prompt_ids(ctx, t), gen_len(ctx)
    ver = device_verifier(ctx)
    run(t, prompt, 32, verifier=ver)  # warm-up: graphs of 1-token steps, kernel variants
    plain = run(t, prompt, n, verifier=ver)
    plain_tps = plain.metrics.decode_tps
    res.figure(f"{key}/plain_tps", round(plain_tps, 1))
    costs = step_costs(t, len(prompt), 3 if ctx["cpu"] else 10, ver)
    ratio = round(costs[32] / costs[1], 3)
    res.figure(f"{key}/step_ms", costs)
    if targets:
        res.target(f"{targets}_t32_over_t1", ratio, "<= 1.3")
    margins = tops = None
    for label, cfg in (("spec_adaptive", PolicyConfig()), ("spec_k31", PolicyConfig(fixed_k=31))):
        runs = []
        for _ in range(2):  # the first run captures the graphs it needs
            pol = AdaptivePolicy(cfg, costs={b: c / 1e3 for b, c in costs.items()})
            oracle = Oracle(len(prompt), plain.tokens, t.n_vocab)
            runs.append(run(t, prompt, n, oracle, policy=pol, verifier=ver))
        m, toks = runs[-1].metrics, runs[-1].tokens
        vs = round(m.decode_tps / max(plain_tps, 1e-9), 2)
        res.figure(
            f"{key}/{label}",
            {
                "tps": round(m.decode_tps, 1),
                "vs_plain": vs,
                "tokens_per_call": round(m.tokens_per_call, 2),
                "acceptance": round(m.acceptance, 4),
                "verifier": m.verifier,
            },
        )
        if toks != plain.tokens and margins is None:
            margins, tops = top2(t, prompt, plain.tokens)
        div = first_divergence(plain.tokens, toks, margins, tops)
        res.check(f"{key}/{label}_equal_to_plain", div.pop("ok"), **div)
        if targets and label == "spec_adaptive":
            res.target(f"{targets}_self_copy_vs_plain", vs, ">= 5")
    pol = AdaptivePolicy(PolicyConfig(fixed_k=SYNC_K))
    run(t, prompt, n, Oracle(len(prompt), plain.tokens, t.n_vocab), policy=pol, verifier=ver)
    # counted on the second run: the first captured its graphs (a capture synchronizes)
    counter = SyncCounter(extra=() if cuda else ((TorchTarget, "readback"),))
    counted = CountingVerifier(ver, counter)
    oracle = Oracle(len(prompt), plain.tokens, t.n_vocab)
    with counter:
        run(t, prompt, n, oracle, policy=pol, verifier=counted)
    syncs = syncs_per_step(counter, counted)
    res.figure(f"{key}/syncs", syncs)
    if targets:
        res.target(f"{targets}_syncs_per_step", syncs["per_step"], "<= 1")
    if cuda:
        res.figure(f"{key}/cuda_peak_mib", round(torch.cuda.max_memory_allocated() / 2**20, 1))
    del t
    _free(ctx)


_VIEWS = {
    "aten::view",
    "aten::_unsafe_view",
    "aten::reshape",
    "aten::transpose",
    "aten::t",
    "aten::permute",
    "aten::slice",
    "aten::select",
    "aten::expand",
    "aten::as_strided",
    "aten::unsqueeze",
    "aten::squeeze",
    "aten::split",
    "aten::chunk",
    "aten::narrow",
    "aten::detach",
    "aten::alias",
    "aten::lift_fresh",
    "aten::empty",
    "aten::empty_strided",
    "aten::resize_",
    "aten::result_type",
    "aten::_reshape_alias",
    "aten::unflatten",
    "aten::view_as_real",
    "aten::view_as_complex",
    # no work of their own when they are leaves (a real conversion shows as its child op)
    "aten::to",
    "aten::contiguous",
    "aten::resolve_conj",
    "aten::resolve_neg",
    "aten::scalar_tensor",
    "aten::clone",
    "aten::type_as",
    "aten::empty_like",
    "aten::zeros_like",
}


def _count(prof, cuda: bool) -> tuple[int, dict]:
    """Kernels in a profile: CUDA kernel events; on the CPU, aten ops that do work of their own
    (an op whose sub-ops do the work counts as those; views and no-ops count as nothing)."""
    from collections import Counter

    names: Counter[str] = Counter()

    def work(e) -> int:
        below = sum(work(c) for c in e.cpu_children if c.name.startswith("aten::"))
        if below or e.name in _VIEWS:
            return below
        names[e.name] += 1
        return 1

    events = list(prof.events())
    device = [e for e in events if cuda and e.device_type.name == "CUDA"]
    if cuda and not device:  # kernels attached to their launching CPU op instead
        device = [k for e in events for k in getattr(e, "kernels", [])]
    for e in device:
        names[e.name[:60]] += 1
    for e in events:
        if cuda:
            continue
        if e.name.startswith("aten::") and not (
            e.cpu_parent is not None and e.cpu_parent.name.startswith("aten::")
        ):
            work(e)
    return sum(names.values()), dict(names.most_common())


def kernels_per_token(ctx, name: str) -> None:
    """Kernels (CPU: leaf aten ops, the proxy) of one plain 1-token forward, before and after."""
    from torch.profiler import ProfilerActivity, profile

    from ..models.torch_static import StaticLM

    res, cuda = ctx["res"], ctx["device"] == "cuda"
    dtype = torch.float32 if ctx["cpu"] else torch.bfloat16
    t = build(ctx, name, dtype, "none", False, DAMP)
    prompt = prompt_ids(ctx, t)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    steps = 4
    out = {"counted": "CUDA kernels" if cuda else "leaf aten ops that are not views (CPU proxy)"}
    for label, fused in (("model_modules", False), ("fused", True)):
        t._static = StaticLM(t.model, t.n_ctx, graphs=False, fused=fused)
        t.rollback(0)
        t.eval_ids(t.upload(prompt), 0, prompt, last_only=True)
        ids = t.upload([5])
        t.eval_ids(ids, len(prompt), [5])  # warm-up (cuBLAS handles, lazy inits)
        t.synchronize()
        with profile(activities=acts) as prof:
            for i in range(steps):
                t.eval_ids(ids, len(prompt) + 1 + i, [5])
            t.synchronize()
        total, top = _count(prof, cuda)
        out[label] = {"per_token": round(total / steps, 1), "most_common": top}
        res.figure(f"{name}/kernels_per_token/{label}", out[label])
    out["layers"] = len(t._static.layers)
    res.figure(f"{name}/kernels_per_token", out)
    del t
    _free(ctx)
