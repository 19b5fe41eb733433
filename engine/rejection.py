"""Reference verification: the one definition of what speculative decoding accepts.

Vocabulary (vLLM's): *accepted* tokens are drafts that pass the test; the *recovered* token is
sampled at the first rejection; the *bonus* token, after a fully accepted draft, from the next row.
Inputs: target logits ``[n+1, V]`` (row i: the token after block position i, position 0 being the
last accepted token), the draft ``[n]``, optional draft probabilities ``[n, V]``. Output:
``num_accepted`` in ``0..n`` and ``tokens`` (``len == num_accepted + 1``). With ``p_i`` the target
distribution of row i (``sampling.probs``) and ``E`` Exp(1) noise:
  * greedy (T = 0): accept while ``argmax(logits[i]) == draft[i]``; then that row's argmax;
  * no draft probs (one-hot q): accept x_i iff ``argmax(p_i / E_i) == x_i``, else emit it;
  * draft probs q: accept iff ``q(x) > 0`` and ``u_i < min(1, p(x)/q(x))``; on rejection
    ``argmax(max(p - q, 0) / E'_i)`` (p where that is all zero); bonus ``argmax(p_n / E_n)``.
Randomness: explicit ``uniforms [n]`` and ``noise [n+1, V]`` (a pure function, for the kernel
tests), or ``position`` t of row 0 with ``params.seed`` (the engine's mode): row i takes its
numbers at ``t + i`` from ``engine.sampling``'s streams, as every verifier does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .sampling import (
    STREAM_RESIDUAL,
    STREAM_SAMPLE,
    SamplingParams,
    position_noise,
    position_uniform,
    probs,
    sample,
)


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of verifying one draft block."""

    num_accepted: int
    """How many draft tokens were kept (0..n)."""
    tokens: list[int]
    """The accepted drafts followed by one recovered or bonus token."""


class RowVerifier:
    """Step-wise form of ``verify``: feed target rows as they are computed.

    ``feed(rows)`` consumes the next rows of target logits (row i judges
    ``draft[i]``; row n gives the bonus token) and returns the ``VerifyResult``
    as soon as it is decided, or ``None`` when every row so far was accepted and
    more are needed. Each row's randomness depends only on the row's index (its
    position), so feeding a block in one piece or in chunks gives the same
    result. This is how exact mode verifies in sub-blocks.
    """

    def __init__(
        self,
        draft: np.ndarray,
        params: SamplingParams,
        draft_probs: np.ndarray | None = None,
        *,
        uniforms: np.ndarray | None = None,
        noise: np.ndarray | None = None,
        position: int | None = None,
    ) -> None:
        self.draft = np.asarray(draft, dtype=np.int64)
        self.position = position
        self.params = params
        self.draft_probs = draft_probs
        self.uniforms = uniforms
        self.noise = noise
        self.i = 0
        self.accepted: list[int] = []
        explicit = noise is not None and (uniforms is not None or draft_probs is None)
        if not params.greedy and position is None and not explicit:
            raise ValueError("sampling needs a position, or explicit uniforms and noise")

    def feed(self, rows: np.ndarray) -> VerifyResult | None:
        n = len(self.draft)
        if self.params.greedy:
            # one vectorised argmax over the rows, no Python loop over the vocabulary
            top = np.argmax(rows, axis=-1)
            m = min(len(top), n + 1 - self.i)
            d = self.draft[self.i : self.i + m]
            mismatch = np.flatnonzero(top[: len(d)] != d)
            if mismatch.size:
                j = int(mismatch[0])
                self.accepted.extend(int(t) for t in d[:j])
                return VerifyResult(len(self.accepted), self.accepted + [int(top[j])])
            self.accepted.extend(int(t) for t in d)
            self.i += len(d)
            if self.i == n and len(top) > len(d):  # bonus row present
                return VerifyResult(n, self.accepted + [int(top[len(d)])])
            return None
        self._prefetch(len(rows), rows.shape[-1])
        for row in rows:
            res = self._feed_row(row)
            if res is not None:
                return res
        return None

    def _prefetch(self, n_rows: int, v: int) -> None:
        """Draw the sample noise of several rows in one Philox call while rows are short.

        With lookup drafts every row up to the first rejection needs it; a long vocabulary
        is drawn row by row instead, so rows after a rejection cost nothing.
        """
        self._ahead: dict[int, np.ndarray] = {}
        if self.noise is not None or self.draft_probs is not None:
            return
        rows = min(n_rows, len(self.draft) + 1 - self.i, max(1, 65536 // v))
        if rows > 1:
            t = self.position + self.i + np.arange(rows)
            for r, e in enumerate(position_noise(self.params.seed, t, STREAM_SAMPLE, v)):
                self._ahead[self.i + r] = e

    def _noise(self, stream: int, v: int) -> np.ndarray:
        if self.noise is not None:
            return self.noise[self.i]
        if stream == STREAM_SAMPLE and self.i in self._ahead:
            return self._ahead[self.i]
        return position_noise(self.params.seed, self.position + self.i, stream, v)

    def _uniform(self) -> float:
        if self.uniforms is not None:
            return float(self.uniforms[self.i])
        return position_uniform(self.params.seed, self.position + self.i)

    def _feed_row(self, row: np.ndarray) -> VerifyResult | None:
        i, n = self.i, len(self.draft)
        p = probs(row, self.params)
        if i == n or self.draft_probs is None:
            # plain sampling at this position; a deterministic draft is kept iff it is the draw
            y = sample(p, self._noise(STREAM_SAMPLE, len(p)))
            if i < n and y == int(self.draft[i]):
                self.accepted.append(y)
                self.i += 1
                return None
            return VerifyResult(i, self.accepted + [y])
        x = int(self.draft[i])
        qx = float(self.draft_probs[i, x])
        # accept x with probability min(1, p(x) / q(x))
        if qx > 0 and self._uniform() < min(1.0, p[x] / qx):
            self.accepted.append(x)
            self.i += 1
            return None
        # recovered token from the residual norm(max(p - q, 0))
        residual = np.maximum(p - self.draft_probs[i].astype(np.float64), 0.0)
        if residual.sum() <= 0.0:  # p == q exactly: any draw from p is correct
            residual = p
        return VerifyResult(
            i, self.accepted + [sample(residual, self._noise(STREAM_RESIDUAL, len(p)))]
        )


def verify(
    logits: np.ndarray,
    draft: np.ndarray,
    params: SamplingParams,
    draft_probs: np.ndarray | None = None,
    *,
    uniforms: np.ndarray | None = None,
    noise: np.ndarray | None = None,
    position: int | None = None,
) -> VerifyResult:
    """Verify ``draft`` against ``logits [n+1, V]`` under ``params`` (module docstring)."""
    n = len(draft)
    assert logits.shape[0] >= n + 1, (logits.shape, n)
    rv = RowVerifier(draft, params, draft_probs, uniforms=uniforms, noise=noise, position=position)
    res = rv.feed(logits[: n + 1])
    assert res is not None
    return res
