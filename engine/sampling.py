"""Sampling parameters, the target distribution, and the one source of randomness.

Contract: ``probs(logits, params)`` turns one row of raw logits into the target distribution p
that speculative decoding must preserve: temperature, then top-k, then top-p, then softmax
(temperature 0 is greedy: argmax, no ``probs``). ``sample(p, noise)`` is ``argmax(p / E)`` with
``E ~ Exp(1)`` i.i.d., a categorical draw with no cumulative sum.
Randomness is keyed on positions, never on call order: every number is the Philox4x32-10 output
of Triton's ``tl.randint4x(key, counter)`` (``philox4x32``), with ``key = seed & (2**63 - 1)`` and

    counter = ((t * STREAMS + stream) << 32) | (column // 4),  output lane column % 4

for output position ``t`` and a stream (``STREAM_SAMPLE``, ``STREAM_ACCEPT``, ``STREAM_RESIDUAL``,
``STREAM_DRAFT``). ``exp_from_bits``/``uniform_from_bits`` use the kernel's float32 formulas, so
the numpy verifier, the Triton kernel and the torch fallback draw the same numbers: a seed gives
the same text whichever runs and however positions were grouped into blocks. Numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SamplingParams:
    """How the next token is chosen from the target's logits."""

    temperature: float = 0.0
    """0 means greedy (argmax); otherwise logits are divided by it."""
    top_k: int = 0
    """Keep only the k most likely tokens; 0 keeps all."""
    top_p: float = 1.0
    """Keep the smallest set of tokens whose mass reaches top_p; 1.0 keeps all."""
    seed: int = 0
    """Seed of the generator that drives acceptance tests and sampling."""

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0 or self.top_k == 1

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0, got {self.top_k}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")


def probs(logits: np.ndarray, params: SamplingParams) -> np.ndarray:
    """Target distribution for one row of logits ``[V]`` -> ``[V]`` float64, sums to 1."""
    x = np.asarray(logits, dtype=np.float64) / max(params.temperature, 1e-6)
    v = x.shape[-1]
    if 0 < params.top_k < v:
        # keep the k largest; ties at the threshold are kept (same rule as the kernel)
        kth = np.partition(x, v - params.top_k)[v - params.top_k]
        x = np.where(x >= kth, x, -np.inf)
    x = x - x.max()
    p = np.exp(x)
    p /= p.sum()
    if params.top_p < 1.0:
        order = np.argsort(-p, kind="stable")
        sorted_p = p[order]
        # a token is kept while the mass before it is still below top_p
        before = np.cumsum(sorted_p) - sorted_p
        drop = order[before >= params.top_p]
        p[drop] = 0.0
        p /= p.sum()
    return p


def sample(p: np.ndarray, noise: np.ndarray) -> int:
    """Categorical draw from ``p`` given i.i.d. Exp(1) ``noise`` of the same shape."""
    with np.errstate(divide="ignore"):
        return int(np.argmax(p / noise))


# ---- position-keyed Philox ----------------------------------------------------------
STREAMS = 4
"""Streams per position; the counter's high word is ``t * STREAMS + stream``."""
STREAM_SAMPLE = 0
"""Exp(1) noise of the target's draw at t (plain steps, lookup drafts, bonus tokens)."""
STREAM_ACCEPT = 1
"""The acceptance uniform of a probabilistic draft's token at t (column 0)."""
STREAM_RESIDUAL = 2
"""Exp(1) noise of the recovered token's draw after a probabilistic draft is rejected."""
STREAM_DRAFT = 3
"""Exp(1) noise of a draft model's own draw for position t."""

_M32 = 0xFFFFFFFF
_ROUND_A, _ROUND_B = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_KEY_A, _KEY_B = 0x9E3779B9, 0xBB67AE85


def philox_key(seed: int) -> int:
    """The 63-bit Philox key of a sampling seed (the kernel takes it as an int64)."""
    return int(seed) & (2**63 - 1)


def philox_counter(t: int, stream: int) -> int:
    """Counter of column group 0 of ``stream`` at output position ``t`` (see module docstring)."""
    return ((int(t) * STREAMS + stream) & _M32) << 32


def philox4x32(seed: int, counters: np.ndarray) -> np.ndarray:
    """``tl.randint4x(philox_key(seed), counters)`` for int64 ``counters``: uint32 ``[4, ...]``."""
    c = np.asarray(counters, dtype=np.int64)
    shape = c.shape
    c = c.reshape(-1).view(np.uint64)
    m32, s32 = np.uint64(_M32), np.uint64(32)
    c0, c1 = c & m32, c >> s32
    c2, c3 = np.zeros_like(c0), np.zeros_like(c0)
    pa, pb = np.empty_like(c0), np.empty_like(c0)
    key = philox_key(seed)
    k0, k1 = key & _M32, (key >> 32) & _M32
    for _ in range(10):  # in place: this runs over a whole vocabulary per row
        np.multiply(c2, _ROUND_B, out=pb)  # < 2**64: exact in uint64
        np.multiply(c0, _ROUND_A, out=pa)
        np.right_shift(pb, s32, out=c0)
        np.bitwise_xor(c0, c1, out=c0)
        np.bitwise_xor(c0, np.uint64(k0), out=c0)
        np.right_shift(pa, s32, out=c2)
        np.bitwise_xor(c2, c3, out=c2)
        np.bitwise_xor(c2, np.uint64(k1), out=c2)
        np.bitwise_and(pb, m32, out=c1)
        np.bitwise_and(pa, m32, out=c3)
        k0 = (k0 + _KEY_A) & _M32
        k1 = (k1 + _KEY_B) & _M32
    return np.stack([c0, c1, c2, c3]).astype(np.uint32).reshape((4, *shape))


def exp_from_bits(r: np.ndarray) -> np.ndarray:
    """uint32 -> Exp(1) float32, the kernel's formula: v = (r + 1/2) / 2^32, E = -log(1 - v).

    Near v = 0 (where the winner of p / E is decided) a series keeps it accurate.
    """
    v = r.astype(np.float32) * np.float32(2.3283064365386963e-10) + np.float32(
        1.1641532182693481e-10
    )
    small = v * (np.float32(1.0) + v * (np.float32(0.5) + v * np.float32(0.3333333432674408)))
    with np.errstate(divide="ignore"):
        big = -np.log(np.float32(1.0) - v)
    return np.where(v < np.float32(0.0078125), small, big).astype(np.float32)


def uniform_from_bits(r: int | np.ndarray) -> float | np.ndarray:
    """uint32 -> U[0, 1) from its top 24 bits (exact in float32, as in the kernel)."""
    return (np.asarray(r, dtype=np.uint32) >> np.uint32(8)).astype(np.float32) * np.float32(
        5.960464477539063e-08
    )


def position_noise(seed: int, t: int | np.ndarray, stream: int, v: int) -> np.ndarray:
    """Exp(1) noise ``[v]`` (or ``[len(t), v]`` for an array of positions) for ``stream`` at t."""
    ts = np.atleast_1d(np.asarray(t, dtype=np.int64))
    groups = (v + 3) // 4
    base = ((ts * STREAMS + stream) & _M32) << 32
    ctr = base[:, None] + np.arange(groups, dtype=np.int64)[None, :]
    r = philox4x32(seed, ctr)  # [4, rows, groups]
    cols = np.moveaxis(r, 0, -1).reshape(len(ts), groups * 4)[:, :v]
    e = exp_from_bits(cols)
    return e[0] if np.ndim(t) == 0 else e


def position_uniform(seed: int, t: int, stream: int = STREAM_ACCEPT) -> float:
    """The U[0, 1) of ``stream`` at output position ``t`` (lane 0 of column group 0)."""
    r = philox4x32(seed, np.array([philox_counter(t, stream)], dtype=np.int64))[0, 0]
    return float(uniform_from_bits(r))


def sample_at(p: np.ndarray, seed: int, t: int, stream: int = STREAM_SAMPLE) -> int:
    """The draw from ``p`` that position ``t`` makes: ``argmax(p / E_t)``."""
    return sample(p, position_noise(seed, t, stream, len(p)))
