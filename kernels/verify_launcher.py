"""Launcher for the fused Triton verification kernel.

``verify_triton(logits, draft, params, ...)`` is ``specedit.engine.rejection.verify`` on torch
tensors, computed on their device by one launch of ``verify_kernel`` (the kernel's docstring and
the reference give the rules). Randomness is either explicit (``uniforms [n]`` U[0,1) and
``noise [n+1, V]`` Exp(1), the reference's arrays, so both give identical results) or Philox in
the kernel, keyed on ``(seed, position)`` exactly as ``engine.sampling`` keys the numpy
verifier's numbers: row i decides output position ``position + i``. ``verify_triton_async``
returns one int64 device tensor ``out [n+2]`` (``out[0]`` = num_accepted, ``out[1:]`` = tokens)
without a host sync, so a caller reads a step back with one small copy. Importing this module
needs torch and triton; ``specedit.kernels`` itself does not.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import torch
import triton

from ..engine.sampling import SamplingParams, philox_key
from .verify_kernel import verify_kernel

log = logging.getLogger(__name__)

_FLOATS = (torch.float32, torch.float16, torch.bfloat16)
_counters: dict[tuple[str, int], torch.Tensor] = {}


def _interpreting() -> bool:
    return type(verify_kernel).__name__ == "InterpretedFunction"


def _arrival_counter(device: torch.device) -> torch.Tensor:
    """Zeroed int32 counter per (device, stream); the kernel's last program resets it."""
    stream = torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else 0
    key = (str(device), stream)
    if key not in _counters:
        _counters[key] = torch.zeros(1, dtype=torch.int32, device=device)
    return _counters[key]


def _default_splits(n: int, vocab: int, block: int, params: SamplingParams, device) -> int:
    """Column slices per row: fill the SMs when slices are cheap (greedy), fewer otherwise."""
    if device.type != "cuda":
        return 1
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    if params.greedy:
        want = math.ceil(sms / (n + 1))
    elif 0 < params.top_k < vocab or params.top_p < 1.0:
        want = 2  # the radix passes are repeated by every slice: keep the L2 traffic down
    else:
        want = 4
    return max(1, min(want, 64, triton.cdiv(vocab, block)))


def verify_triton_async(
    logits: torch.Tensor,
    draft: torch.Tensor,
    params: SamplingParams,
    draft_probs: torch.Tensor | None = None,
    *,
    seed: int | None = None,
    position: int = 0,
    uniforms: torch.Tensor | None = None,
    noise: torch.Tensor | None = None,
    splits: int | None = None,
    block: int | None = None,
    out: torch.Tensor | None = None,
    scratch: torch.Tensor | None = None,
) -> torch.Tensor:
    """Launch the kernel; returns ``out [n+2] int64``: num_accepted, then ``tokens [n+1]``.

    ``tokens`` holds the accepted drafts, the recovered or bonus token, then -1. Nothing is
    synchronised, so the call can be captured in a CUDA graph (call it once before capturing
    so the arrival counter exists; a captured graph replays the same seed and position).
    ``seed`` defaults to ``params.seed``; ``position`` is the output position of row 0;
    ``splits`` (column slices per row) defaults to a heuristic; ``block`` (columns per step,
    a power of two >= 16) to 2048 on CUDA; ``out`` and ``scratch`` (``verify_scratch``) may be
    given to reuse buffers, so a call allocates nothing (back-to-back timing, graphs).
    """
    assert logits.dim() == 2 and logits.dtype in _FLOATS, (logits.shape, logits.dtype)
    assert logits.stride(1) == 1, "logits must be contiguous along the vocabulary"
    assert draft.dim() == 1 and draft.dtype in (torch.int32, torch.int64), draft.dtype
    assert draft.is_contiguous() and draft.device == logits.device
    n, vocab = draft.shape[0], logits.shape[1]
    assert logits.shape[0] == n + 1, f"logits {tuple(logits.shape)} need n+1 = {n + 1} rows"
    device = logits.device
    if device.type != "cuda" and not _interpreting():
        raise RuntimeError("CPU tensors need TRITON_INTERPRET=1 set before triton is imported")
    if draft_probs is not None:
        assert draft_probs.shape == (n, vocab) and draft_probs.dtype in _FLOATS
        assert draft_probs.stride(1) == 1 and draft_probs.device == device
    explicit = uniforms is not None or noise is not None
    if explicit and not params.greedy:
        assert noise is not None, "explicit randomness needs noise"
        assert noise.shape == (n + 1, vocab) and noise.dtype == torch.float32
        assert noise.stride(1) == 1 and noise.device == device
        if draft_probs is not None:
            assert uniforms is not None, "draft probabilities need uniforms too"
        if uniforms is not None:
            assert uniforms.shape == (n,) and uniforms.dtype == torch.float32
            assert uniforms.is_contiguous() and uniforms.device == device
    seed = philox_key(params.seed if seed is None else seed)
    assert 0 <= position < 2**29, position

    interp = device.type != "cuda"
    pow2 = triton.next_power_of_2(max(vocab, 16))
    if block is None:
        block = min(pow2, 8192 if interp else 2048)
    assert block >= 16 and block & (block - 1) == 0, block
    radix_block = min(block, 8192 if interp else 512)
    if splits is None:
        splits = _default_splits(n, vocab, block, params, device)
    splits = max(1, min(splits, triton.cdiv(vocab, block)))
    split_blocks = triton.cdiv(triton.cdiv(vocab, splits), block)
    splits = triton.cdiv(vocab, split_blocks * block)  # no empty slice

    use_top_k = not params.greedy and 0 < params.top_k < vocab
    use_top_p = not params.greedy and params.top_p < 1.0
    top_p_hi = float(np.float32(params.top_p))
    accept, cand_score, cand_col = _scratch_views(scratch, n, splits, device)
    if out is None:
        out = torch.empty(n + 2, dtype=torch.int64, device=device)
    assert out.shape == (n + 2,) and out.dtype == torch.int64 and out.is_contiguous()
    dummy = logits  # never read when the matching flag is off
    log.debug("verify_kernel n=%d V=%d splits=%d block=%d %s", n, vocab, splits, block, params)
    verify_kernel[(n + 1, splits)](
        logits,
        draft,
        draft_probs if draft_probs is not None else dummy,
        uniforms if uniforms is not None and not params.greedy else dummy,
        noise if explicit and not params.greedy else dummy,
        accept,
        cand_score,
        cand_col,
        _arrival_counter(device),
        out[:1],
        out[1:],
        n,
        vocab,
        logits.stride(0),
        draft_probs.stride(0) if draft_probs is not None else 0,
        noise.stride(0) if explicit and not params.greedy else 0,
        max(params.temperature, 1e-6),
        params.top_k,
        top_p_hi,
        params.top_p - top_p_hi,
        seed,
        position,
        split_blocks,
        GREEDY=params.greedy,
        USE_TOP_K=use_top_k,
        USE_TOP_P=use_top_p,
        HAS_DRAFT_PROBS=draft_probs is not None and not params.greedy,
        EXPLICIT_RANDOMS=explicit and not params.greedy,
        MAX_SPLITS=triton.next_power_of_2(splits),
        BLOCK=block,
        RADIX_BLOCK=radix_block,
        ROWS=min(64, triton.next_power_of_2(n + 1)),
        num_warps=8,
    )
    return out


def _up4(x: int) -> int:
    return (x + 3) // 4 * 4  # int32 elements: 16-byte aligned, as fresh allocations are


def _scratch_len(n: int, splits: int) -> int:
    r = n + 1
    return _up4(r) + _up4(3 * r * splits) + 2 * r * splits


def verify_scratch(n: int, max_splits: int, device) -> torch.Tensor:
    """A reusable int32 workspace for drafts of up to ``n`` tokens and ``max_splits`` slices."""
    return torch.empty(_scratch_len(n, max_splits), dtype=torch.int32, device=device)


def _scratch_views(scratch, n: int, splits: int, device):
    """(accept [n+1] int32, cand_score [n+1, splits, 3] fp32, cand_col [n+1, splits, 2] int32)."""
    r = n + 1
    if scratch is None:
        return (
            torch.empty(r, dtype=torch.int32, device=device),
            torch.empty((r, splits, 3), dtype=torch.float32, device=device),
            torch.empty((r, splits, 2), dtype=torch.int32, device=device),
        )
    assert scratch.dtype == torch.int32 and scratch.is_contiguous() and scratch.device == device
    assert scratch.numel() >= _scratch_len(n, splits), "scratch too small for n and splits"
    a, sc = _up4(r), _up4(3 * r * splits)
    score = scratch[a : a + 3 * r * splits].view(torch.float32).view(r, splits, 3)
    col = scratch[a + sc : a + sc + 2 * r * splits].view(r, splits, 2)
    return scratch[:r], score, col


def verify_triton(
    logits: torch.Tensor,
    draft: torch.Tensor,
    params: SamplingParams,
    draft_probs: torch.Tensor | None = None,
    *,
    seed: int | None = None,
    position: int = 0,
    uniforms: torch.Tensor | None = None,
    noise: torch.Tensor | None = None,
    splits: int | None = None,
    block: int | None = None,
) -> tuple[int, torch.Tensor]:
    """``verify_triton_async`` then one sync: ``(num_accepted, tokens[:num_accepted + 1])``."""
    out = verify_triton_async(
        logits,
        draft,
        params,
        draft_probs,
        seed=seed,
        position=position,
        uniforms=uniforms,
        noise=noise,
        splits=splits,
        block=block,
    )
    host = out.cpu()
    j = int(host[0])
    return j, host[1 : j + 2]
