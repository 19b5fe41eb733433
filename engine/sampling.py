"""Sampling parameters and the probability transform shared by every verifier.

Contract: ``probs(logits, params)`` turns one row of raw logits into the target
distribution p that speculative decoding must preserve: temperature, then top-k,
then top-p, then softmax. Temperature 0 means greedy (argmax); ``probs`` is not
used then. ``sample(p, noise)`` draws from p with the exponential trick:
``argmax(p / E)`` with ``E ~ Exp(1)`` i.i.d., which equals a categorical draw and
needs no cumulative sum, so a GPU kernel can reproduce it exactly from the same
noise. The module is numpy only and knows nothing of models or text.
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


def exp_noise(rng: np.random.Generator, v: int) -> np.ndarray:
    """Exp(1) noise for one row, strictly positive."""
    return rng.standard_exponential(v)


_MASK = (1 << 64) - 1


def position_uniform(seed: int, position: int, stream: int = 0) -> float:
    """A uniform in [0, 1) that depends only on (seed, position, stream) (splitmix64).

    The engine's sampling draws the randomness for output position t from here, so
    the tokens a seed produces do not depend on how positions were grouped into
    speculative blocks (which the adaptive policy chooses from timing).
    """
    z = seed * 0x9E3779B97F4A7C15 + position * 0xBF58476D1CE4E5B9 + stream * 0x94D049BB133111EB + 1
    z &= _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    z ^= z >> 31
    return (z >> 11) * (1.0 / (1 << 53))


def sample_inverse_cdf(p: np.ndarray, u: float) -> int:
    """Categorical draw from (possibly unnormalised) ``p`` with one uniform ``u``."""
    c = np.cumsum(p)
    i = int(np.searchsorted(c, u * c[-1], side="right"))
    return min(i, len(p) - 1)
