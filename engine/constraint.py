"""Constrained decoding: the tokens a caller allows after each output prefix, in the loop.

Contract: a ``Constraint`` has ``allowed(out) -> np.ndarray | None``: the token ids that may follow
the generated ids ``out``, as an integer array or a boolean mask over the vocabulary, or None where
any may. It is a pure function of ``out`` (whatever block sizes the policy picked), so greedy
constrained speculative output equals greedy constrained plain decoding, and sampled output keeps
the target's distribution restricted to the allowed ids.

``generate(..., constraint=c)`` wraps the target and the drafter:
  * ``ConstrainedTarget`` tracks the token at each cache position and sets every disallowed logit
    of a returned row to -inf (row p judges the token after ``out = seq[n_prompt:p+1]``), on the
    host or, for a device target, where the rows live (``first_token``'s row too);
  * ``ConstrainedDrafter`` cuts a draft before its first disallowed token (it would be rejected).
The engine knows ids only; what a constraint means (a quote copies its source) is the caller's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from .draft import Draft


class Constraint(Protocol):
    def allowed(self, out: Sequence[int]) -> np.ndarray | None:
        """Token ids allowed after ``out``, or a boolean row over the vocabulary (None: any)."""
        ...


def permits(allowed: np.ndarray | None, token: int) -> bool:
    """``token`` is allowed by ``allowed`` (a ``Constraint.allowed`` answer)."""
    if allowed is None:
        return True
    if allowed.dtype == np.bool_:
        return bool(allowed[token])
    return bool(np.isin(token, allowed))


def _masked_host(rows: np.ndarray, masks: list[np.ndarray | None]) -> np.ndarray:
    rows = np.array(rows, dtype=np.float32, copy=True)
    for i, ids in enumerate(masks):
        if ids is None:
            continue
        if ids.dtype == np.bool_:
            rows[i, ~ids[: rows.shape[-1]]] = -np.inf
        else:
            keep = np.full(rows.shape[-1], -np.inf, dtype=np.float32)
            keep[ids] = 0.0
            rows[i] += keep
    return rows


class ConstrainedTarget:
    """A target whose logits rows are masked by ``constraint`` (module docstring)."""

    def __init__(self, target, prompt: Sequence[int], constraint: Constraint) -> None:
        self._target = target
        self._constraint = constraint
        self._n_prompt = len(prompt)
        self._seq: list[int] = list(prompt)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)

    def _write(self, tokens: Sequence[int], pos: int) -> None:
        del self._seq[max(pos, self._n_prompt) :]
        if pos + len(tokens) > self._n_prompt:
            start = max(pos, self._n_prompt)
            self._seq.extend(int(t) for t in tokens[start - pos :])

    def _masks(self, pos: int, want: Sequence[int]) -> list[np.ndarray | None]:
        out = []
        for w in want:
            p = pos + w  # the row judges the token after position p
            out.append(
                self._constraint.allowed(self._seq[self._n_prompt : p + 1])
                if p + 1 >= self._n_prompt
                else None
            )
        return out

    def rollback(self, pos: int) -> None:
        self._target.rollback(pos)
        del self._seq[max(pos, self._n_prompt) :]

    def eval(self, tokens: Sequence[int], pos: int, want: Sequence[int]) -> np.ndarray:
        want = list(want)
        rows = self._target.eval(tokens, pos, want)
        self._write(tokens, pos)
        masks = self._masks(pos, want)
        return rows if all(m is None for m in masks) else _masked_host(rows, masks)

    def eval_ids(self, ids, pos: int, tokens: Sequence[int] | None = None, last_only=False):
        logits = self._target.eval_ids(ids, pos, tokens, last_only=last_only)
        if tokens is None:
            raise ValueError("a constrained device step needs the block's host token ids")
        self._write(tokens, pos)
        want = [len(tokens) - 1] if last_only else list(range(len(tokens)))
        masks = self._masks(pos, want)
        if all(m is None for m in masks):
            return logits
        import torch

        logits = logits.clone()  # a graph's output buffer must not be written in place
        for i, ids_ok in enumerate(masks):
            if ids_ok is None:
                continue
            if ids_ok.dtype == np.bool_:
                bad = torch.as_tensor(~ids_ok[: logits.shape[-1]], device=logits.device)
                logits[i].masked_fill_(bad, float("-inf"))
            else:
                keep = torch.full_like(logits[i], float("-inf"))
                keep[torch.as_tensor(ids_ok, device=logits.device)] = 0.0
                logits[i] += keep
        return logits


class ConstrainedDrafter:
    """A drafter whose drafts stop before the first token ``constraint`` disallows."""

    def __init__(self, drafter, prompt_len: int, constraint: Constraint) -> None:
        self._drafter = drafter
        self._n_prompt = prompt_len
        self._constraint = constraint

    def __getattr__(self, name: str) -> Any:
        return getattr(self._drafter, name)

    def propose(self, context: Sequence[int], k: int) -> Draft:
        d = self._drafter.propose(context, k)
        out = list(context[self._n_prompt :])
        n = 0
        for t in d.tokens:
            if not permits(self._constraint.allowed(out), int(t)):
                break
            out.append(int(t))
            n += 1
        if n == len(d):
            return d
        probs = d.probs[:n] if d.probs is not None else None
        return Draft(d.tokens[:n], probs, d.source, d.match_len, d.anchored)
