"""Verification kernel benchmark: fused Triton kernel vs a vectorised torch baseline, on CUDA.

``run(vocab=151936, n=16, ...)`` times one verification of an ``n``-token draft for greedy,
plain sampling (lookup and probabilistic drafts) and top-k + top-p, in the engine's mode
(in-kernel position-keyed Philox), three ways (``time_call``):

  * ``gpu_us``: GPU time, from CUDA-event-timed replays of a CUDA graph that captured one
    call: no Python, no launcher, no allocation in the figure;
  * ``pipelined_us``: back-to-back calls with the buffers allocated once (``out``,
    ``scratch``), CUDA events around all of them: what a stream of launches sustains, the
    larger of the host's launch cost and the GPU time;
  * ``host_us``: one call and a sync, wall clock: the host-inclusive overhead a step pays.

It sweeps the kernel's column slices for greedy (GPU time) and reports whether kernel and baseline agree
on the same uniforms and noise and on the same position-keyed Philox numbers. The baseline is
``kernels.verify_torch`` (the verifier's torch fallback, which syncs nowhere, so it is
captured and timed the same way). On the CPU (interpreter rehearsals) every figure is wall
clock and ``timer`` says so. ``compile_check`` compiles every
kernel variant for a CUDA target without a GPU (``--arch 86 89 90 120``). CLI:
``python -m specedit.bench.kernel_bench [--compile-only] [--arch ...] [--out FILE]``; it
writes one JSON record to stdout.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time

import torch

from ..engine.sampling import SamplingParams

log = logging.getLogger(__name__)

SPLITS = (1, 2, 4, 8, 16)  # column slices per row swept for each case
CASES = {
    "greedy": (SamplingParams(), False),
    "sample-lookup": (SamplingParams(temperature=0.8), False),
    "sample-probs": (SamplingParams(temperature=0.8), True),
    "top-k-top-p-probs": (SamplingParams(temperature=0.7, top_k=50, top_p=0.9), True),
}


def _events(device):
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def _graph_us(fn, reps: int, device: torch.device) -> float:
    """GPU µs per call: replays of a CUDA graph holding one call, timed by CUDA events."""
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(
        side
    ):  # warm-up (compiles, the launcher's counter) on the capture stream
        fn()
        fn()
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        fn()
    graph.replay()
    torch.cuda.synchronize(device)
    start, end = _events(device)
    start.record()
    for _ in range(reps):
        graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000.0 / reps


def time_call(fn, reps: int, device: torch.device, graph: bool = True) -> dict:
    """``gpu_us``, ``pipelined_us``, ``host_us`` of ``fn`` (module docstring); ``timer`` names
    the clock. ``fn`` must allocate nothing for ``pipelined_us`` to mean launch cost."""
    cuda = device.type == "cuda"
    for _ in range(2):
        fn()
    sync = (lambda: torch.cuda.synchronize(device)) if cuda else (lambda: None)
    sync()
    singles = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        singles.append((time.perf_counter() - t0) * 1e6)
    host = statistics.median(singles)
    if not cuda:
        return {
            "gpu_us": round(host, 1),
            "pipelined_us": None,
            "host_us": round(host, 1),
            "timer": "wall clock (CPU)",
        }
    start, end = _events(device)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    end.synchronize()
    piped = start.elapsed_time(end) * 1000.0 / reps
    try:
        gpu = _graph_us(fn, reps, device) if graph else None
    except RuntimeError as e:  # a call that cannot be captured: say so, keep the rest
        log.warning("graph capture failed: %s", e)
        gpu = None
    return {
        "gpu_us": None if gpu is None else round(gpu, 2),
        "pipelined_us": round(piped, 2),
        "host_us": round(host, 1),
        "timer": "CUDA graph replays (gpu_us), CUDA events (pipelined_us), wall clock (host_us)",
    }


def run(
    vocab: int = 151936,
    n: int = 16,
    dtype: str = "bf16",
    reps: int = 50,
    device: str = "cuda",
    cases: tuple[str, ...] = tuple(CASES),
    splits: tuple[int, ...] = SPLITS,
    on_result=None,
) -> dict:
    """Time ``cases`` of ``CASES``; returns the JSON record (``device="cpu"``: smoke runs).

    ``on_result(record)`` is called with each case's record as soon as it is made."""
    from ..kernels.verify_launcher import verify_scratch, verify_triton_async
    from ..kernels.verify_torch import verify_torch

    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("the kernel benchmark needs a CUDA device")
    dt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    g = torch.Generator(device=dev).manual_seed(0)
    logits = (torch.randn(n + 1, vocab, device=dev, generator=g) * 3).to(dt)
    draft = logits[:n].float().argmax(-1)
    draft[n // 2 :] = torch.randint(0, vocab, (n - n // 2,), device=dev, generator=g)
    q = torch.softmax(torch.randn(n, vocab, device=dev, generator=g) * 3, -1)
    u = torch.rand(n, device=dev, generator=g)
    e = torch.empty(n + 1, vocab, device=dev).exponential_(generator=g)
    out = torch.empty(n + 2, dtype=torch.int64, device=dev)
    scratch = verify_scratch(n, 64, dev)
    results = []
    for name in cases:
        params, probs = CASES[name]
        qq = q if probs else None
        log.info("case %s", name)

        def explicit(p=params, qq=qq):
            return verify_triton_async(logits, draft, p, qq, uniforms=u, noise=e)

        def explicit_baseline(p=params, qq=qq):
            return verify_torch(logits, draft, p, qq, uniforms=u, noise=e)

        def seeded(p=params, qq=qq, splits=None):  # the engine's mode; allocates nothing
            return verify_triton_async(
                logits, draft, p, qq, position=1000, splits=splits, out=out, scratch=scratch
            )

        def seeded_baseline(p=params, qq=qq):
            return verify_torch(logits, draft, p, qq, position=1000)

        rec = {
            "case": name,
            "agree": bool(torch.equal(explicit_baseline(), explicit())),
            "agree_seeded": bool(torch.equal(seeded_baseline(), seeded().clone())),
            "triton": time_call(seeded, reps, dev),
            "torch": time_call(seeded_baseline, reps, dev),
        }
        if len(splits) > 1 and params.greedy:  # each slice count is another compile
            rec["triton_gpu_us_by_splits"] = {
                str(k): time_call(lambda k=k: seeded(splits=k), reps, dev)["gpu_us"] for k in splits
            }
        tg, bg = rec["triton"]["gpu_us"], rec["torch"]["gpu_us"]
        rec["speedup_gpu"] = round(bg / tg, 2) if tg and bg else None
        results.append(rec)
        if on_result is not None:
            on_result(rec)
    return {
        "bench": "verify_kernel",
        "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
        "vocab": vocab,
        "n": n,
        "dtype": dtype,
        "reps": reps,
        "torch": torch.__version__,
        "results": results,
    }


def compile_check(arch: int = 90, quick: bool = False) -> dict:
    """Compile every flag combination of the kernel for ``sm_{arch}``; needs no GPU.

    ``quick`` compiles three variants: greedy, plain Philox sampling, every flag on.

    Run it in a process where TRITON_INTERPRET is unset (the interpreter replaces the kernel).
    """
    import itertools

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from ..kernels.verify_kernel import verify_kernel

    names = verify_kernel.arg_names
    ptrs = {
        "logits_ptr": "*bf16",
        "draft_ptr": "*i64",
        "draft_probs_ptr": "*fp32",
        "uniforms_ptr": "*fp32",
        "noise_ptr": "*fp32",
        "accept_ptr": "*i32",
        "cand_score_ptr": "*fp32",
        "cand_col_ptr": "*i32",
        "counter_ptr": "*i32",
        "num_accepted_ptr": "*i64",
        "tokens_ptr": "*i64",
    }
    floats = {"temperature", "top_p_hi", "top_p_lo"}
    flags = ["GREEDY", "USE_TOP_K", "USE_TOP_P", "HAS_DRAFT_PROBS", "EXPLICIT_RANDOMS"]
    signature = {}
    for a in names:
        if a in ptrs:
            signature[a] = ptrs[a]
        elif a in floats:
            signature[a] = "fp32"
        elif a in flags or a in ("MAX_SPLITS", "BLOCK", "RADIX_BLOCK", "ROWS"):
            signature[a] = "constexpr"
        else:
            signature[a] = "i64" if a in ("seed", "position") else "i32"
    aligned = ["V", "stride_l", "stride_q", "stride_e", *ptrs]
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in aligned}
    quick_set = {(True, False, False, False, False), (False,) * 5, (False,) + (True,) * 4}
    compiled = []
    for values in itertools.product([False, True], repeat=len(flags)):
        combo = dict(zip(flags, values, strict=True))
        if combo["GREEDY"] and any(values[1:]):
            continue  # the launcher turns every other flag off when greedy
        if quick and values not in quick_set:
            continue
        consts = dict(combo, MAX_SPLITS=8, BLOCK=2048, RADIX_BLOCK=512, ROWS=32)
        src = ASTSource(
            fn=verify_kernel,
            signature=signature,
            attrs=attrs,
            constexprs={(names.index(k),): v for k, v in consts.items()},
        )
        t0 = time.perf_counter()
        kernel = triton.compile(src, target=GPUTarget("cuda", arch, 32), options={"num_warps": 8})
        compiled.append(
            {
                "flags": combo,
                "seconds": round(time.perf_counter() - t0, 2),
                "shared_bytes": kernel.metadata.shared,
            }
        )
    return {"bench": "verify_kernel_compile", "arch": arch, "variants": compiled}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", type=int, default=151936)
    ap.add_argument("-n", type=int, default=16, help="draft length")
    ap.add_argument("--dtype", choices=["fp32", "fp16", "bf16"], default="bf16")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--compile-only", action="store_true", help="compile for --arch, no GPU")
    ap.add_argument("--arch", type=int, nargs="+", default=[90], help="sm_XX targets to compile")
    ap.add_argument("--quick", action="store_true", help="with --compile-only: 3 variants")
    ap.add_argument("--out", help="also write the JSON record here")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    if args.compile_only:
        records = [compile_check(arch, quick=args.quick) for arch in args.arch]
        record = (
            records[0]
            if len(records) == 1
            else {"bench": "verify_kernel_compile", "archs": records}
        )
    else:
        record = run(args.vocab, args.n, args.dtype, args.reps)
    text = json.dumps(record, indent=1)
    sys.stdout.write(text + "\n")
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
