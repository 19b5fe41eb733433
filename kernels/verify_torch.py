"""The verification rules in batched torch ops: the kernel's fallback and its baseline.

Contract: ``verify_torch(logits, draft, params, draft_probs, ...)`` computes what
``engine.rejection.verify`` and the Triton kernel compute (their docstrings give the rules), on
the tensors' device, in a fixed number of torch ops with no host sync (no ``.item()``, no
indexing by a device scalar, no data-dependent shapes; ``tests/test_verify_syncs.py`` counts
them), and returns the kernel's
output format: one int64 tensor ``out [n+2]`` with ``out[0]`` = num_accepted and ``out[1:]`` =
accepted drafts, the recovered or bonus token, then -1. Randomness is explicit (``uniforms``,
``noise``) or position-keyed Philox from ``(seed, position)``: ``philox4x32`` here is Triton's
``tl.randint4x`` in torch ops (int64 arithmetic, products split in 16-bit halves so nothing
overflows), bit for bit equal to ``engine.sampling.philox4x32``, so the same seed gives the
same tokens as the numpy verifier and the kernel. Precision is fp32 like the kernel's.
Depends on torch and ``engine.sampling`` only.
"""

from __future__ import annotations

import torch

from ..engine.sampling import (
    STREAM_ACCEPT,
    STREAM_RESIDUAL,
    STREAM_SAMPLE,
    STREAMS,
    SamplingParams,
    philox_key,
)

_M32 = 0xFFFFFFFF
_ROUND_A, _ROUND_B = 0xD2511F53, 0xCD9E8D57
_KEY_A, _KEY_B = 0x9E3779B9, 0xBB67AE85


def _mul_hi_lo(a: torch.Tensor, b: int) -> tuple[torch.Tensor, torch.Tensor]:
    """High and low 32 bits of ``a * b`` for ``a`` in [0, 2^32) (int64) and a 32-bit ``b``."""
    lo_part = a * (b & 0xFFFF)  # < 2^48
    hi_part = a * (b >> 16)  # < 2^48
    lo = (((hi_part & 0xFFFF) << 16) + lo_part) & _M32
    hi = (hi_part + (lo_part >> 16)) >> 16
    return hi, lo


def philox4x32(seed: int, counters: torch.Tensor) -> torch.Tensor:
    """``tl.randint4x(philox_key(seed), counters)``: int64 ``[4, *counters.shape]`` in [0, 2^32)."""
    c0 = counters & _M32
    c1 = (counters >> 32) & _M32
    c2 = torch.zeros_like(c0)
    c3 = torch.zeros_like(c0)
    key = philox_key(seed)
    k0, k1 = key & _M32, (key >> 32) & _M32
    for _ in range(10):
        hi_b, lo_b = _mul_hi_lo(c2, _ROUND_B)
        hi_a, lo_a = _mul_hi_lo(c0, _ROUND_A)
        c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
        k0 = (k0 + _KEY_A) & _M32
        k1 = (k1 + _KEY_B) & _M32
    return torch.stack([c0, c1, c2, c3])


def exp_from_bits(r: torch.Tensor) -> torch.Tensor:
    """``engine.sampling.exp_from_bits`` in torch (float32)."""
    v = r.to(torch.float32) * 2.3283064365386963e-10 + 1.1641532182693481e-10
    small = v * (1.0 + v * (0.5 + v * 0.3333333432674408))
    return torch.where(v < 0.0078125, small, -torch.log(1.0 - v))


def position_noise(
    seed: int, t: torch.Tensor, stream: torch.Tensor | int, vocab: int
) -> torch.Tensor:
    """Exp(1) noise ``[len(t), vocab]``: row r uses ``stream[r]`` at output position ``t[r]``."""
    groups = (vocab + 3) // 4
    high = (t * STREAMS + stream) & _M32
    ctr = (high[:, None] << 32) + torch.arange(groups, device=t.device)[None, :]
    r = philox4x32(seed, ctr)  # [4, rows, groups]
    cols = r.permute(1, 2, 0).reshape(len(t), groups * 4)[:, :vocab]
    return exp_from_bits(cols)


def position_uniforms(seed: int, t: torch.Tensor) -> torch.Tensor:
    """The acceptance uniforms at output positions ``t`` (float32, 24 bits)."""
    r = philox4x32(seed, ((t * STREAMS + STREAM_ACCEPT) & _M32) << 32)[0]
    return (r >> 8).to(torch.float32) * 5.960464477539063e-08


def target_probs(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """``engine.sampling.probs`` on every row of ``logits [rows, V]`` in fp32."""
    v = logits.shape[-1]
    x = logits.float() / max(params.temperature, 1e-6)
    if 0 < params.top_k < v:
        kth = x.topk(params.top_k, dim=-1).values[:, -1:]
        x = x.masked_fill(x < kth, float("-inf"))
    p = x.softmax(-1)
    if params.top_p < 1.0:
        sp, order = p.sort(dim=-1, descending=True, stable=True)
        drop = (sp.cumsum(-1) - sp) >= params.top_p
        p = p.scatter(-1, order, sp.masked_fill(drop, 0.0))
        p = p / p.sum(-1, keepdim=True)
    return p


def verify_torch(
    logits: torch.Tensor,  # [n+1, V]
    draft: torch.Tensor,  # [n] int64
    params: SamplingParams,
    draft_probs: torch.Tensor | None = None,  # [n, V]
    *,
    uniforms: torch.Tensor | None = None,  # [n]
    noise: torch.Tensor | None = None,  # [n+1, V]
    seed: int | None = None,
    position: int = 0,
) -> torch.Tensor:
    """The reference rules in batched torch ops, no host sync: ``out [n+2]`` (module docstring)."""
    n, v = draft.shape[0], logits.shape[1]
    dev = logits.device
    draft = draft.to(torch.int64)
    rows = torch.arange(n + 1, device=dev)
    if params.greedy:
        extra = logits.argmax(-1)  # [n+1]
        accept = extra[:n] == draft
    else:
        seed = params.seed if seed is None else seed
        p = target_probs(logits, params)
        t = rows + position
        if draft_probs is None:
            e = noise if noise is not None else position_noise(seed, t, STREAM_SAMPLE, v)
            extra = (p / e).argmax(-1)  # each row's own draw; x is kept iff it is that draw
            accept = extra[:n] == draft
        else:
            if noise is not None:
                e = noise
                u = uniforms
            else:
                stream = torch.where(rows < n, STREAM_RESIDUAL, STREAM_SAMPLE)
                e = position_noise(seed, t, stream, v)
                u = position_uniforms(seed, t[:n])
            q = draft_probs.float()
            px = p[:n].gather(1, draft[:, None])[:, 0]
            qx = q.gather(1, draft[:, None])[:, 0]
            ratio = px / torch.where(qx > 0, qx, torch.ones_like(qx))
            accept = (qx > 0) & (u < ratio.clamp(max=1.0))
            residual = torch.cat([(p[:n] - q).clamp_min(0.0), p[n:]])
            empty = residual.sum(-1, keepdim=True) <= 0
            residual = torch.where(empty, p, residual)
            extra = (residual / e).argmax(-1)
    rejected = torch.cat([~accept, accept.new_ones(1)])
    j = rejected.int().argmax()  # first rejection; row n always "rejects"; a 0-dim tensor
    padded = torch.cat([draft, draft.new_zeros(1)])
    # row j takes its own ``extra``: elementwise, never ``extra[j]`` (indexing with a 0-dim
    # device tensor is an ``.item()``, a host sync)
    tokens = torch.where(rows < j, padded, torch.where(rows == j, extra, -1))
    return torch.cat([j.to(torch.int64)[None], tokens])
