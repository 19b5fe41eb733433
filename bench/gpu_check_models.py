"""The model-level steps of ``bench/gpu_check_torch.py`` (its docstring says what they check).

Contract: ``model_checks(ctx, name, variants, check)`` builds random-weight Qwen2 models with
the shapes of catalog model ``name`` (``bench/qwen_shapes.json``; tiny shapes when
``ctx["smoke"]``) on ``ctx["device"]`` and returns a JSON-able dict; a broken invariant is
reported through ``ctx["rec"].fail``. With ``check`` it first runs the correctness checks on an
fp32 model; then, per quantization in ``variants``, the timings on a bf16 model (with and
without CUDA graphs for ``"none"``). ``targets(steps)`` lays the measured figures beside the
issue's goals.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import torch

from ..engine.decode import GenConfig, generate
from ..engine.draft import Draft
from ..engine.policy import AdaptivePolicy, PolicyConfig
from ..engine.sampling import SamplingParams
from ..engine.verifier import DeviceVerifier, HostVerifier, calibration_target
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
SIZES = (1, 2, 4, 8, 16, 32, 64, 128)
"""Block sizes whose verify-step cost is measured."""
DAMP = 1e-4
"""Scale of the bf16 models' o_proj and down_proj (module docstring of gpu_check_torch)."""


class Oracle:
    """Drafts the continuation of a known output while the context follows it.

    ``corrupt_every`` > 0 flips the last token of every such draft, so rejections and
    recovered tokens are exercised too.
    """

    def __init__(self, prompt_len: int, output: list[int], vocab: int, corrupt_every: int = 0):
        self.n, self.out, self.vocab, self.corrupt_every = (
            prompt_len,
            list(output),
            vocab,
            corrupt_every,
        )
        self.calls = 0

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
    if ctx["smoke"]:
        shape.update(SMOKE_SHAPE)
    theta = shape["rope_theta"]
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


def _prompt(ctx, target) -> list[int]:
    n = 16 if ctx["smoke"] else 64
    return [int(x) for x in np.random.default_rng(1).integers(300, target.n_vocab, n)]


def _gen_len(ctx) -> int:
    return 24 if ctx["smoke"] else 256


def _run(target, prompt, n, drafter=None, *, policy=None, verifier=None, **cfg_kw):
    target.rollback(0)
    cfg = GenConfig(max_tokens=n, policy=policy.cfg if policy else PolicyConfig(), **cfg_kw)
    if drafter is None:
        cfg = GenConfig(max_tokens=n, speculate=False, **cfg_kw)
    return generate(target, prompt, cfg, drafter, policy=policy, verifier=verifier)


def _divergence(target, prompt, ref: list[int], got: list[int]) -> dict:
    """Where ``got`` leaves ``ref``, and the top-2 logit margin of ``ref`` there."""
    i = next((j for j, (a, b) in enumerate(zip(ref, got, strict=False)) if a != b), None)
    if i is None:
        return {"equal": len(ref) == len(got)}
    target.rollback(0)
    row = target.eval(prompt + ref[:i], 0, [len(prompt) + i - 1])[0]
    top = np.sort(row)[-2:]
    return {"equal": False, "first_divergence": i, "margin": float(top[1] - top[0])}


def correctness(ctx, name: str) -> dict:
    """fp32 model, graphs where CUDA: greedy spec == plain (exact mode: bit for bit); sampled
    text identical across the Triton verifier, the numpy verifier and plain sampling."""
    rec, out = ctx["rec"], {}
    t = build(ctx, name, torch.float32, "none", ctx["device"] == "cuda", None)
    prompt, n = _prompt(ctx, t), _gen_len(ctx)
    kernel = DeviceVerifier("triton")
    plain = _run(t, prompt, n, verifier=kernel).tokens
    pol = AdaptivePolicy(PolicyConfig(fixed_k=15))
    oracle = Oracle(len(prompt), plain, t.n_vocab, 4)
    spec = _run(t, prompt, n, oracle, policy=pol, verifier=kernel)
    out["greedy"] = _divergence(t, prompt, plain, spec.tokens)
    out["greedy"]["tokens_per_call"] = round(spec.metrics.tokens_per_call, 2)
    out["greedy"]["verifier"] = spec.metrics.verifier
    if not out["greedy"]["equal"] and out["greedy"]["margin"] > 1e-2:
        rec.fail(f"{name}: greedy speculative != plain at a margin of {out['greedy']['margin']}")
    oracle = Oracle(len(prompt), plain, t.n_vocab, 4)
    exact = _run(t, prompt, n, oracle, policy=pol, verifier=kernel, exact_block=1)
    out["exact"] = _divergence(t, prompt, plain, exact.tokens)
    if not out["exact"]["equal"]:
        rec.fail(f"{name}: exact-mode speculative != plain: {out['exact']}")
    sp = SamplingParams(temperature=0.8, top_p=0.95, seed=7)
    ns = 12 if ctx["smoke"] else 48
    plain_s = _run(t, prompt, ns, verifier=kernel, sampling=sp).tokens
    texts = {"plain": plain_s}
    for label, ver in (("triton", DeviceVerifier("triton")), ("numpy", HostVerifier())):
        drafter = Oracle(len(prompt), plain_s, t.n_vocab, 3)
        pol = AdaptivePolicy(PolicyConfig(fixed_k=7))
        texts[label] = _run(t, prompt, ns, drafter, policy=pol, verifier=ver, sampling=sp).tokens
    out["sampled_equal"] = {k: v == plain_s for k, v in texts.items()}
    if not all(out["sampled_equal"].values()):
        rec.fail(f"{name}: sampled text differs between verifiers: {out['sampled_equal']}")
    return out


class SyncCounter:
    """Host syncs: sync-debug warnings (``.item()``, ``.cpu()``, stream syncs) + Event waits."""

    def __enter__(self):
        self.events = 0
        self._orig = torch.cuda.Event.synchronize
        counter = self

        def counted(ev):
            counter.events += 1
            return counter._orig(ev)

        torch.cuda.Event.synchronize = counted
        self._w = warnings.catch_warnings(record=True)
        self.caught = self._w.__enter__()
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        return self

    def __exit__(self, *exc):
        torch.cuda.set_sync_debug_mode(0)
        self._w.__exit__(*exc)
        torch.cuda.Event.synchronize = self._orig
        self.syncs = self.events + sum("synchroniz" in str(w.message).lower() for w in self.caught)


def device_verifier(ctx) -> DeviceVerifier:
    """The Triton verifier on CUDA; the torch twin for the smoke run's timings (the
    interpreter would time Python, not the kernel)."""
    return DeviceVerifier("triton" if ctx["device"] == "cuda" and _kernel_ok() else "torch")


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


def _kernel_ok() -> bool:
    from ..kernels.support import kernel_support

    return kernel_support("cuda" if torch.cuda.is_available() else "cpu").ok


def timings(ctx, name: str, quant: str, graphs: bool) -> dict:
    """bf16 (damped), one quantization, graphs on or off: tok/s, step costs, syncs, memory."""
    if ctx["device"] == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    dtype = torch.float32 if ctx["smoke"] else torch.bfloat16
    t = build(ctx, name, dtype, quant, graphs, DAMP)
    out: dict = {"target": t.describe()}
    if ctx["device"] == "cuda":
        out["cuda_allocated_mib"] = round(torch.cuda.memory_allocated() / 2**20, 1)
    prompt, n = _prompt(ctx, t), _gen_len(ctx)
    ver = device_verifier(ctx)
    _run(t, prompt, 32, verifier=ver)  # warm-up: graphs of 1-token steps, kernel variants
    plain = _run(t, prompt, n, verifier=ver)
    out["plain_tps"] = round(plain.metrics.decode_tps, 1)
    costs = step_costs(t, len(prompt), 3 if ctx["smoke"] else 15, ver)
    out["step_ms"] = costs
    out["t32_over_t1"] = round(costs[32] / costs[1], 3)
    pol_costs = dict(costs)
    for label, cfg in (("spec_adaptive", PolicyConfig()), ("spec_k31", PolicyConfig(fixed_k=31))):
        runs = []
        for _ in range(2):  # the first run captures the graphs it needs
            pol = AdaptivePolicy(cfg, costs={b: c / 1e3 for b, c in pol_costs.items()})
            oracle = Oracle(len(prompt), plain.tokens, t.n_vocab)
            runs.append(_run(t, prompt, n, oracle, policy=pol, verifier=ver))
        m = runs[-1].metrics
        out[label] = {
            "tps": round(m.decode_tps, 1),
            "vs_plain": round(m.decode_tps / max(plain.metrics.decode_tps, 1e-9), 2),
            "tokens_per_call": round(m.tokens_per_call, 2),
            "acceptance": round(m.acceptance, 4),
            "equal_to_plain": runs[-1].tokens == plain.tokens,
            "verifier": m.verifier,
        }
    if ctx["device"] == "cuda" and graphs:
        pol = AdaptivePolicy(PolicyConfig(), costs={b: c / 1e3 for b, c in pol_costs.items()})
        oracle = Oracle(len(prompt), plain.tokens, t.n_vocab)
        with SyncCounter() as sc:
            r = _run(t, prompt, n, oracle, policy=pol, verifier=ver)
        steps = r.metrics.target_calls
        out["syncs"] = {
            "total": sc.syncs,
            "event_waits": sc.events,
            "steps": steps,
            "per_step": round((sc.syncs - 2) / max(steps, 1), 3),  # prefill and first token: 2
        }
        out["cuda_peak_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    del t
    return out


def _part(ctx, out: dict, key: str, fn, *args) -> None:
    """Run one part; an exception is recorded (and fails the check) without losing the rest."""
    try:
        out[key] = fn(*args)
    except Exception as e:  # noqa: BLE001
        out[key] = {
            "error": f"{type(e).__name__}: {e}",
            "traceback": traceback.format_exc()[-2000:],
        }
        ctx["rec"].fail(f"{key}: {type(e).__name__}: {e}")
    finally:
        gc.collect()  # the model, its KV cache and its graphs' pool go before the next one
        if ctx["device"] == "cuda":
            torch.cuda.empty_cache()


def model_checks(ctx, name: str, variants: tuple[str, ...], check: bool) -> dict:
    out: dict = {}
    if check:
        _part(ctx, out, "correctness_fp32", correctness, ctx, name)
    for quant in variants:
        modes = (True, False) if quant == "none" else (True,)
        if ctx["device"] != "cuda":
            modes = (False,)
        for graphs in modes:
            key = f"{quant}_{'graphs' if graphs else 'eager'}"
            _part(ctx, out, key, timings, ctx, name, quant, graphs)
    return out


def targets(steps: dict) -> dict:
    """The issue's goals beside what was measured (None: not measured in this run)."""

    def get(*path):
        d = steps
        for p in path:
            if not isinstance(d, dict) or p not in d:
                return None
            d = d[p]
        return d

    kernel = {r["case"]: r for r in (get("kernel", "results") or [])}
    k_us = [kernel[c].get("triton_seeded_us") for c in ("greedy", "sample-lookup") if c in kernel]
    rows = []
    for model in ("model_0.5b", "model_1.5b"):
        m = get(model, "none_graphs") or get(model, "none_eager")  # eager: the CPU smoke run
        if m:
            rows.append((model, m))

    def goal(value, target, ok):
        return {"value": value, "target": target, "met": None if value is None else ok(value)}

    out = {"kernel_us_v151936_k16": goal(max(k_us) if k_us else None, "< 20", lambda v: v < 20)}
    for model, m in rows:
        sync = (m.get("syncs") or {}).get("per_step")
        out[f"{model}_syncs_per_step"] = goal(sync, "<= 1", lambda v: v <= 1)
        ratio = (m.get("spec_adaptive") or {}).get("vs_plain")
        out[f"{model}_self_copy_vs_plain"] = goal(ratio, ">= 5", lambda v: v >= 5)
        out[f"{model}_t32_over_t1_graphs"] = goal(
            m.get("t32_over_t1"), "<= 1.3", lambda v: v <= 1.3
        )
    return out
