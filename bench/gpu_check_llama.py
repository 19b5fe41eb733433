"""The llama.cpp GPU check's measurements: offload, the cost curve, plain vs speculative.

Run by ``bench/gpu_check_llama.sh`` on a GPU machine (with random-weight GGUFs of the
catalog's shapes, ``bench/random_gguf.py``), and by the tests on the CPU with a tiny one:

    python -m specedit.bench.gpu_check_llama --gguf FILE [--gguf FILE ...] --out DIR
        [--gpu-layers all] [--tokens 512] [--sizes 1-128] [--threads N]

For each model it records what ran where (``LlamaTarget.describe()``; with ``--gpu-layers
all`` a CPU-only build or a run that stays on the CPU fails), the block-cost curve t(b)
(fastest of 3 calls of b tokens with logits at every row, as verification asks, after a
256-token prefix) and a self-copy task: plain greedy decoding of ``--tokens`` tokens, then
the same prompt decoded speculatively with the model's own greedy output as the draft
(``SelfDrafter``), so acceptance is high by construction and what is left is what the
block costs allow: the adaptive policy (seeded with the measured curve, as a loaded model
seeds it) and fixed k = 7..127. EOS is ignored so every run has the same length. Writes
``DIR/gpu_check_llama.json``; exits 1 when a model fails to load, stays on the CPU when
offload was asked for, or speculation never accepts a token. With ``--jsonl FILE`` every
figure also goes to FILE as it is measured (``bench/gpu_check_results.Results``, step
``model_<size>``, e.g. ``model_0.5b``), with the checks and the targets t(32)/t(1) <= 1.3 and
self-copy (adaptive) >= 5x plain, so a run killed half way keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..engine.backend import ModelError
from ..engine.decode import GenConfig, generate
from ..engine.draft import Draft
from ..engine.policy import AdaptivePolicy, PolicyConfig
from ..models.llama_build import gguf_layer_count, llama_build, resolve_gpu_layers
from .gpu_check_results import Results

log = logging.getLogger("specedit.bench.gpu_check_llama")

PROMPT = (
    "Rewrite the following function so that it uses a dictionary instead of a list.\n\n"
    "def count_words(text):\n    words = []\n    for w in text.split():\n"
    "        words.append(w.lower())\n    return len(set(words))\n"
)
POLICY_SIZES = (1, 4, 16, 32, 64, 128)  # what a load calibrates (app/runtime/loaded_model.py)
FIXED_K = (7, 15, 31, 63, 127)


class SelfDrafter:
    """Drafts the reference output (the model's own greedy output) after the prompt.

    Once the output diverges from the reference (a batched evaluation flipped a near-tie),
    it drafts nothing more: the rest of the run is plain decoding.
    """

    def __init__(self, prompt_len: int, reference: Sequence[int]) -> None:
        self.prompt_len = prompt_len
        self.ref = list(reference)
        self.diverged_at: int | None = None

    def propose(self, context: Sequence[int], k: int) -> Draft:
        out = list(context[self.prompt_len :])  # accepted output, the last not yet evaluated
        n = len(out)
        if self.diverged_at is not None or out != self.ref[:n]:
            if self.diverged_at is None:
                self.diverged_at = next(
                    (i for i, (a, b) in enumerate(zip(out, self.ref, strict=False)) if a != b), n
                )
            return Draft()
        toks = np.asarray(self.ref[n : n + k], dtype=np.int64)
        return Draft(toks, None, "self", match_len=n, anchored=True)


class CountingTarget:
    """A target that counts the block sizes of its decoding calls (what the policy picked)."""

    def __init__(self, target, prompt_len: int) -> None:
        self._t = target
        self._prompt_len = prompt_len
        self.blocks: Counter[int] = Counter()

    def eval(self, tokens, pos, want):
        if pos >= self._prompt_len:  # not the prefill (read in batches, engine.prefill)
            self.blocks[len(tokens)] += 1
        return self._t.eval(tokens, pos, want)

    def __getattr__(self, name):
        return getattr(self._t, name)


def cost_curve(target, sizes: Sequence[int], prefix: int = 256, repeats: int = 3) -> dict:
    """t(b) in seconds for each size: fastest of ``repeats`` calls after a ``prefix``."""
    vocab = target.n_vocab
    rng = np.random.default_rng(0)
    toks = [int(t) for t in rng.integers(0, vocab, size=prefix + max(sizes))]
    target.rollback(0)
    target.eval(toks[:prefix], 0, [prefix - 1])
    target.eval(toks[prefix : prefix + max(sizes)], prefix, range(max(sizes)))  # warm-up
    curve = {}
    for b in sizes:
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            target.eval(toks[prefix : prefix + b], prefix, range(b))
            best = min(best, time.perf_counter() - t)
        curve[b] = best
    target.rollback(0)
    return curve


def _run(target, prompt, cfg, drafter=None, policy=None) -> tuple[list[int], dict]:
    target.rollback(0)
    counting = CountingTarget(target, len(prompt))
    res = generate(counting, prompt, cfg, drafter, policy=policy)
    snap = res.metrics.snapshot()
    keep = ("generated_tokens", "target_calls", "acceptance", "tokens_per_call", "decode_tps")
    out = {k: snap[k] for k in keep}
    out["blocks"] = {str(b): n for b, n in sorted(counting.blocks.items())}
    return res.tokens, out


def self_copy(target, n_tokens: int, curve: dict, emit=None) -> dict:
    """Plain greedy decoding, then speculative decoding with that output as the draft."""
    prompt = target.tokenize(PROMPT)
    plain_cfg = GenConfig(max_tokens=n_tokens, speculate=False)
    ref, plain = _run(target, prompt, plain_cfg)  # warm: the first run pays allocations
    ref, plain = _run(target, prompt, plain_cfg)
    if emit:
        emit("plain", plain)
    costs = {b: curve[b] for b in POLICY_SIZES if b in curve}
    runs = {}
    for name, k in [("adaptive", None), *((f"k{k}", k) for k in FIXED_K)]:
        drafter = SelfDrafter(len(prompt), ref)
        cfg = GenConfig(max_tokens=n_tokens, policy=PolicyConfig(fixed_k=k))
        pol = AdaptivePolicy(cfg.policy, costs=costs)
        toks, r = _run(target, prompt, cfg, drafter, pol)
        r["equal_to_plain"] = toks == ref
        r["diverged_at"] = drafter.diverged_at
        r["speedup"] = round(r["decode_tps"] / plain["decode_tps"], 3)
        runs[name] = r
        if emit:
            emit(f"speculative_{name}", r)
    return {"prompt_tokens": len(prompt), "plain": plain, "speculative": runs}


def model_label(path: Path) -> str:
    """``qwen2.5-coder-0.5b.gguf`` -> ``0.5b`` (the size the plan's step names use)."""
    m = re.search(r"(\d+(?:\.\d+)?b)$", path.stem.lower())
    return m.group(1) if m else path.stem


def check_model(
    path: Path,
    gpu_layers: str,
    n_tokens: int,
    sizes: Sequence[int],
    threads: int | None,
    res=None,
) -> dict:
    from ..models.llama_cpp_backend import LlamaTarget

    build = llama_build()
    n_layers = gguf_layer_count(path)
    n, why = resolve_gpu_layers(gpu_layers, build, n_layers)
    t0 = time.perf_counter()
    target = LlamaTarget(path, n_ctx=4096, n_threads=threads, n_gpu_layers=n)
    load_s = time.perf_counter() - t0
    try:
        target.eos_ids = frozenset()  # random weights: run every task to its full length
        log.info("%s: %s, %s layers on %s", path.name, why, target.gpu_layers, target.device_name)
        placement = {"backend": target.backend, **target.describe()}
        if res:
            res.figure("placement", placement)
        on_cpu = gpu_layers != "auto" and n and target.device_name == "CPU"
        if res:
            res.check("offloaded", not on_cpu, asked=gpu_layers, device=target.device_name)
        if on_cpu:
            raise ModelError(f"{path.name}: asked for {gpu_layers} layers, ran on the CPU")
        curve = cost_curve(target, sizes)
        t1 = curve[1]
        if res:
            res.figure("cost_curve_ms", {str(b): round(v * 1e3, 4) for b, v in curve.items()})
            if 32 in curve:
                res.target(
                    f"llama_{model_label(path)}_t32_over_t1", round(curve[32] / t1, 3), "<= 1.3"
                )
        log.info(
            "%s: t(1) %.2f ms; t(b)/t(1): %s",
            path.name,
            t1 * 1e3,
            ", ".join(f"{b}: {curve[b] / t1:.2f}" for b in POLICY_SIZES if b in curve),
        )
        task = self_copy(target, n_tokens, curve, res.figure if res else None)
    finally:
        target.close()
    spec = task["speculative"]["adaptive"]
    if res:
        best = max(r["tokens_per_call"] for r in task["speculative"].values())
        res.check("speculation_accepts", best > 1.0, best_tokens_per_call=best)
        res.target(f"llama_{model_label(path)}_self_copy_vs_plain", spec["speedup"], ">= 5")
    log.info(
        "%s: plain %.1f tok/s, speculative %.1f tok/s (%.2fx, %.1f tokens/call, blocks %s)",
        path.name,
        task["plain"]["decode_tps"],
        spec["decode_tps"],
        spec["speedup"],
        spec["tokens_per_call"],
        spec["blocks"],
    )
    return {
        "model": path.name,
        "file_bytes": path.stat().st_size,
        "resolve": why,
        "placement": placement,
        "load_s": round(load_s, 3),
        "cost_curve_s": {str(b): round(v, 6) for b, v in curve.items()},
        "cost_ratio": {str(b): round(v / t1, 3) for b, v in curve.items()},
        "self_copy": task,
    }


def _sizes(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi) + 1)) if hi else [int(x) for x in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="gpu_check_llama", description=__doc__.split("\n")[0])
    p.add_argument("--gguf", type=Path, action="append", required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--gpu-layers", default="all", help="auto, all or N (all: fail on the CPU)")
    p.add_argument("--tokens", type=int, default=512, help="length of the self-copy task")
    p.add_argument("--sizes", type=_sizes, default=list(range(1, 129)), help="e.g. 1-128")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: all)")
    p.add_argument("--jsonl", type=Path, help="append each figure here as it is made")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="gpu_check_llama: %(message)s")
    a.out.mkdir(parents=True, exist_ok=True)
    build = llama_build()
    record: dict = {"build": build.to_json(), "models": [], "failures": []}
    sizes = sorted(set(a.sizes) | {b for b in POLICY_SIZES if b <= max(a.sizes)})
    for path in a.gguf:
        res = Results(a.jsonl, f"model_{model_label(path)}") if a.jsonl else None
        try:
            record["models"].append(
                check_model(path, a.gpu_layers, a.tokens, sizes, a.threads, res)
            )
        except (ModelError, OSError, ValueError) as e:
            log.error("%s: %s", path.name, e)
            record["failures"].append(f"{path.name}: {e}")
            if res:
                res.error(f"{path.name}: {e}")
    for m in record["models"]:
        runs = m["self_copy"]["speculative"]
        if max(r["tokens_per_call"] for r in runs.values()) <= 1.0:
            record["failures"].append(f"{m['model']}: speculation never accepted a token")
        m["best_speedup"] = max(r["speedup"] for r in runs.values())
        m["median_speedup"] = statistics.median(r["speedup"] for r in runs.values())
    out = a.out / "gpu_check_llama.json"
    out.write_text(json.dumps(record, indent=1) + "\n")
    log.info("wrote %s; %s", out, "; ".join(record["failures"]) or "no failures")
    return 1 if record["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
