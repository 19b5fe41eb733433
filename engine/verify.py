"""Reference verification: the one definition of what speculative decoding accepts.

Vocabulary (as in vLLM's rejection sampler):
  * *accepted* tokens are draft tokens that pass the test and are kept;
  * the *recovered* token is sampled at the first rejection from the adjusted
    distribution;
  * the *bonus* token is sampled after a fully accepted draft, from the row that
    follows the last draft token.

Inputs are target logits ``[n+1, V]`` (row i is the distribution of the token
that follows block position i, where position 0 is the last already-accepted
token), the draft ``[n]`` and optionally draft probabilities ``[n, V]``.
Output: ``num_accepted`` in ``0..n`` and ``tokens`` = accepted drafts plus one
recovered or bonus token, so ``len(tokens) == num_accepted + 1``.

Rules:
  * greedy (temperature 0): accept while ``argmax(logits[i]) == draft[i]``; the
    extra token is ``argmax`` of the first mismatching (or last) row.
  * deterministic drafts (``draft_probs is None``, i.e. q = one-hot): accept x
    with probability p(x); on rejection sample from p with x removed,
    renormalised.
  * probabilistic drafts: accept with probability min(1, p(x)/q(x)); on
    rejection sample from norm(max(p - q, 0)).

Randomness comes from one of three sources:
  * explicit ``uniforms [n]`` and ``noise [n+1, V]`` (Exp(1)): the result is a
    pure function of its inputs; the Triton kernel is tested against this mode;
  * ``rng`` (drawn lazily, only for rows that are reached);
  * ``position`` (``RowVerifier`` only): per-output-position uniforms from
    ``position_uniform(seed, t)``, with deterministic drafts verified by
    coupling (accept x iff the inverse-CDF draw from p equals x), so a seed's
    output does not depend on the block sizes the adaptive policy picked. This
    is the engine's CPU path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .sampling import (
    SamplingParams,
    exp_noise,
    position_uniform,
    probs,
    sample,
    sample_inverse_cdf,
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
    more are needed. Random numbers are drawn once per row, so feeding a block
    in one piece or in chunks gives the same result for the same ``rng`` state.
    This is how exact mode verifies in sub-blocks.
    """

    def __init__(
        self,
        draft: np.ndarray,
        params: SamplingParams,
        draft_probs: np.ndarray | None = None,
        rng: np.random.Generator | None = None,
        *,
        uniforms: np.ndarray | None = None,
        noise: np.ndarray | None = None,
        position: int | None = None,
    ) -> None:
        self.draft = np.asarray(draft, dtype=np.int64)
        # coupled mode: randomness per absolute output position (see _feed_row_coupled)
        self.position = position
        self.params = params
        self.draft_probs = draft_probs
        self.rng = rng
        self.uniforms = uniforms
        self.noise = noise
        self.i = 0
        self.accepted: list[int] = []
        if (
            not params.greedy
            and position is None
            and rng is None
            and (uniforms is None or noise is None)
        ):
            raise ValueError("sampling needs position, rng, or both uniforms and noise")

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
        feed_row = self._feed_row if self.position is None else self._feed_row_coupled
        for row in rows:
            res = feed_row(row)
            if res is not None:
                return res
        return None

    def _feed_row_coupled(self, row: np.ndarray) -> VerifyResult | None:
        """Position-coupled verification: what the engine's CPU path runs.

        Row i decides output position ``position + i`` with uniforms drawn from
        ``position_uniform(seed, position + i, stream)``. For a deterministic draft
        x the target token is drawn by inverse CDF and x is accepted iff it equals
        that token: accepted with probability p(x), and otherwise the token is a
        draw from p with x removed, renormalised: the rule of the module
        docstring, coupled so that the output equals plain sampling's for the same
        seed whatever the block sizes were. Drafts with probabilities q use the
        min(1, p/q) test and the residual norm(max(p - q, 0)).
        """
        i, n = self.i, len(self.draft)
        seed, t = self.params.seed, self.position + i
        p = probs(row, self.params)
        if i == n or self.draft_probs is None:
            tok = sample_inverse_cdf(p, position_uniform(seed, t))
            if i < n and tok == int(self.draft[i]):
                self.accepted.append(tok)
                self.i += 1
                return None
            return VerifyResult(i, self.accepted + [tok])
        x = int(self.draft[i])
        qx = float(self.draft_probs[i, x])
        if qx > 0 and position_uniform(seed, t, 1) < min(1.0, p[x] / qx):
            self.accepted.append(x)
            self.i += 1
            return None
        residual = np.maximum(p - self.draft_probs[i].astype(np.float64), 0.0)
        if residual.sum() <= 0.0:
            residual = p
        return VerifyResult(
            i, self.accepted + [sample_inverse_cdf(residual, position_uniform(seed, t, 2))]
        )

    def _noise(self, i: int, v: int) -> np.ndarray:
        return self.noise[i] if self.noise is not None else exp_noise(self.rng, v)

    def _feed_row(self, row: np.ndarray) -> VerifyResult | None:
        i, n = self.i, len(self.draft)
        p = probs(row, self.params)
        if i == n:  # every draft token accepted: bonus token from this row
            return VerifyResult(n, self.accepted + [sample(p, self._noise(i, len(p)))])
        x = int(self.draft[i])
        # accept x with probability min(1, p(x)/q(x)); q = one-hot for lookup drafts
        qx = 1.0 if self.draft_probs is None else float(self.draft_probs[i, x])
        u = float(self.uniforms[i]) if self.uniforms is not None else self.rng.random()
        if qx > 0 and u < min(1.0, p[x] / qx):
            self.accepted.append(x)
            self.i += 1
            return None
        # recovered token from the residual norm(max(p - q, 0))
        if self.draft_probs is None:
            residual = p.copy()
            residual[x] = 0.0
        else:
            residual = np.maximum(p - self.draft_probs[i].astype(np.float64), 0.0)
        if residual.sum() <= 0.0:  # p == q exactly: any draw from p is correct
            residual = p
        return VerifyResult(i, self.accepted + [sample(residual, self._noise(i, len(p)))])


def verify(
    logits: np.ndarray,
    draft: np.ndarray,
    params: SamplingParams,
    draft_probs: np.ndarray | None = None,
    rng: np.random.Generator | None = None,
    *,
    uniforms: np.ndarray | None = None,
    noise: np.ndarray | None = None,
) -> VerifyResult:
    """Verify ``draft`` against ``logits [n+1, V]`` under ``params`` (module docstring)."""
    n = len(draft)
    assert logits.shape[0] >= n + 1, (logits.shape, n)
    rv = RowVerifier(draft, params, draft_probs, rng, uniforms=uniforms, noise=noise)
    res = rv.feed(logits[: n + 1])
    assert res is not None
    return res


def sample_one(logits: np.ndarray, params: SamplingParams, rng: np.random.Generator | None) -> int:
    """Plain decoding's draw from one row of logits (argmax when greedy)."""
    return verify(logits[None, :], np.empty(0, dtype=np.int64), params, rng=rng).tokens[0]


def verify_greedy(logits: np.ndarray, draft: np.ndarray) -> VerifyResult:
    """Greedy verification: longest prefix where the target's argmax equals the draft."""
    return verify(logits, draft, SamplingParams())
