"""Canonical prefill: a prompt is evaluated in the same batches whatever the cache holds.

Contract: ``bounds(n, marks)`` lists where the batches of an ``n``-token prompt begin,
then ``n``: chunks of ``CHUNK`` tokens counted from 0 and counted again from each mark
(a position where prompts that share a prefix part ways, e.g. after the system text and
the file, after a region's lines). ``reusable(target, prompt, marks)`` is the longest
start of the target's KV cache that equals, bit for bit, what a cold evaluation of
``prompt`` computes: it holds ``prompt``'s tokens and was evaluated in exactly the
batches ``bounds`` gives (the backend's ``cache_batches`` log says where each of its
batches began). ``prefill`` evaluates the rest in those batches and returns the last
position's logits; ``extend`` evaluates the batches that end at or before a position (a
warm-up), stopping between two when interrupted; ``adopt`` records the batches of a
state restored from disk (saved from a cold evaluation up to one of its marks).

Why: llama.cpp's CPU kernels do not compute a position the same way in every batch. On
qwen2.5-coder-0.5b the last ``L mod 4`` rows of an ``L``-token batch, and a token evaluated
alone, go through other kernels and their logits move by up to 0.65 (the same rows in
batches of the same start and size are bit-identical across processes, thread counts and
machine load). A prompt whose prefix came from a warm-up, the disk prompt cache or the
previous request had been evaluated in other batches than a cold run, so its greedy
output, ``--exact`` included, depended on what the cache held. Now every path evaluates
every position in the same batch. Cost: nothing when the caller's marks are where its
prompts part ways; a reused prefix is otherwise kept up to the last boundary both agree on
(at most ``CHUNK - 1`` tokens are evaluated again). The last batch (which holds the row
whose logits are read) is always evaluated: one output row, as on a cold run.

A backend without a batch log (``cache_batches``) is trusted up to a boundary of the plan.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

CHUNK = 128
"""Tokens per prefill batch: as fast per token as 512-token batches on llama.cpp's CPU path,
and the longest a warm-up or a prefill keeps the model busy between two checks."""

SCHEME = f"chunks{CHUNK}+marks"
"""Names the batch plan, for caches that outlive the process (``app.prompt_cache``)."""


def bounds(n: int, marks: Sequence[int] = ()) -> list[int]:
    """Starts of the batches of an ``n``-token prompt, then ``n`` (see module docstring)."""
    cuts = sorted({0, *(m for m in marks if 0 < m < n)}) + [n]
    out: list[int] = []
    for a, b in pairwise(cuts):
        out.extend(range(a, b, CHUNK))
    return out + [n]


def _shared(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def reusable(
    target, prompt: Sequence[int], marks: Sequence[int] = (), limit: int | None = None
) -> int:
    """The longest start of ``target``'s cache, at most ``limit`` positions, that holds
    ``prompt``'s tokens evaluated in their canonical batches (a boundary of the plan)."""
    cache = getattr(target, "cache_tokens", None)
    if not cache:
        return 0
    plan = bounds(len(prompt), marks)
    have = min(_shared(cache, prompt), len(prompt) if limit is None else limit)
    log = getattr(target, "cache_batches", None)
    best = 0
    for i, b in enumerate(plan):
        if b > have:
            break
        if log is not None:
            # every batch below b is the plan's, and one of them ends exactly at b
            ends_here = log[i] == b if len(log) > i else len(cache) == b
            if log[:i] != plan[:i] or not ends_here:
                break
        best = b
    return best


def _run(target, prompt, plan, start: int, end: int, interrupt=None) -> int:
    """Evaluate the plan's batches from ``start`` (a boundary) up to ``end``; no logits."""
    i = plan.index(start)
    pos = start
    for a, b in pairwise(plan[i:]):
        if b > end or (interrupt is not None and interrupt.is_set()):
            break
        target.eval(prompt[a:b], a, [])
        pos = b
    return pos


def prefill(
    target, prompt: Sequence[int], marks: Sequence[int] = (), limit: int | None = None
) -> tuple[np.ndarray, int]:
    """Evaluate ``prompt`` in its canonical batches, keeping what the cache holds of them (at
    most ``limit`` positions); returns (logits of the last position, positions kept). The
    last batch is always evaluated: its last row is the one output row, as on a cold run."""
    if not prompt:
        raise ValueError("empty prompt")
    plan = bounds(len(prompt), marks)
    last = plan[-2]
    kept = reusable(target, prompt, marks, last if limit is None else min(limit, last))
    _run(target, prompt, plan, kept, last)
    logits = np.array(target.eval(prompt[last:], last, [len(prompt) - 1 - last])[0])
    return logits, kept


def extend(
    target,
    prompt: Sequence[int],
    end: int,
    marks: Sequence[int] = (),
    interrupt: threading.Event | None = None,
) -> tuple[int, int]:
    """Evaluate ``prompt``'s canonical batches that end at or before ``end`` (a warm-up),
    stopping between two when ``interrupt`` is set; returns (positions kept, reached)."""
    plan = bounds(len(prompt), marks)
    kept = reusable(target, prompt, marks, end)
    return kept, _run(target, prompt, plan, kept, end, interrupt)


def adopt(target, n: int) -> None:
    """Record that the ``n`` positions ``target``'s cache holds were restored from a state
    saved after a canonical evaluation whose prompt had a mark at ``n``."""
    if hasattr(target, "cache_batches") and len(getattr(target, "cache_tokens", ())) == n:
        target.cache_batches = bounds(n)[:-1]
