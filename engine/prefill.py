"""Canonical prefill: a prompt is evaluated in the same batches whatever the cache holds.

Contract: ``bounds(n, marks)`` lists where the batches of an ``n``-token prompt begin, then ``n``:
chunks of ``CHUNK`` tokens counted from 0 and again from each mark (where prompts sharing a prefix
part ways). ``reusable(target, prompt, marks)`` is the longest start of the target's KV cache that
equals, bit for bit, a cold evaluation of ``prompt``: it holds ``prompt``'s tokens evaluated in
exactly those batches (the backend's ``cache_batches``; a backend without that log is trusted up
to a boundary). ``prefill`` evaluates the rest in those batches and returns the last position's
logits (the last batch is always evaluated); ``extend`` evaluates the batches ending at or before
a position (a warm-up), stopping between two when interrupted; ``adopt`` records the batches of a
state restored from disk. A prefill is cancellable between batches and reports each.

So greedy output never depends on what the cache held (why: ``docs/notes.md``). Cost: nothing
when the marks are where prompts part ways, else at most ``CHUNK - 1`` tokens evaluated again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from .backend import BatchLog, cached_tokens, shared_prefix

log = logging.getLogger(__name__)

CHUNK = 128
"""Tokens per prefill batch: as fast per token as 512-token batches on llama.cpp's CPU path,
and the longest a warm-up or a prefill keeps the model busy between two checks (a cancel,
a rewrite arriving during a warm-up, waits for one batch at most; ``docs/notes.md``)."""

SCHEME = f"chunks{CHUNK}+marks"
"""Names the batch plan, for caches that outlive the process (``app.runtime.prompt_cache``)."""


def bounds(n: int, marks: Sequence[int] = ()) -> list[int]:
    """Starts of the batches of an ``n``-token prompt, then ``n`` (see module docstring)."""
    cuts = sorted({0, *(m for m in marks if 0 < m < n)}) + [n]
    out: list[int] = []
    for a, b in pairwise(cuts):
        out.extend(range(a, b, CHUNK))
    return out + [n]


def reusable(
    target, prompt: Sequence[int], marks: Sequence[int] = (), limit: int | None = None
) -> int:
    """The longest start of ``target``'s cache, at most ``limit`` positions, that holds
    ``prompt``'s tokens evaluated in their canonical batches (a boundary of the plan)."""
    cache = cached_tokens(target)
    if not cache:
        return 0
    plan = bounds(len(prompt), marks)
    have = min(shared_prefix(cache, prompt), len(prompt) if limit is None else limit)
    batches = target.cache_batches if isinstance(target, BatchLog) else None
    best = 0
    for i, b in enumerate(plan):
        if b > have:
            break
        if batches is not None:
            # every batch below b is the plan's, and one of them ends exactly at b
            ends_here = batches[i] == b if len(batches) > i else len(cache) == b
            if batches[:i] != plan[:i] or not ends_here:
                break
        best = b
    return best


def _run(target, prompt, plan, start: int, end: int, stop=None, fill=None, on_batch=None) -> int:
    """Evaluate the plan's batches from ``start`` (a boundary) up to ``end``, no logits, each
    through ``fill(tokens, pos)`` (``target.eval`` with no rows by default) and reported to
    ``on_batch(tokens, seconds)``; stops before a batch when ``stop`` is set. Returns where
    it got to."""
    i = plan.index(start)
    pos = start
    for a, b in pairwise(plan[i:]):
        if b > end or (stop is not None and stop.is_set()):
            break
        t = time.perf_counter()
        if fill is not None:
            fill(prompt[a:b], a)
        else:
            target.eval(prompt[a:b], a, [])
        if on_batch is not None:
            on_batch(b - a, time.perf_counter() - t)
        pos = b
    return pos


def prefill(
    target,
    prompt: Sequence[int],
    marks: Sequence[int] = (),
    limit: int | None = None,
    *,
    fill: Callable[[Sequence[int], int], None] | None = None,
    last: Callable[[Sequence[int], int], Any] | None = None,
    cancel: threading.Event | None = None,
    on_batch: Callable[[int, float], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
) -> tuple[Any, int]:
    """Evaluate ``prompt`` in its canonical batches, keeping what the cache holds of them (at
    most ``limit`` positions); returns (logits of the last position, positions kept). The
    batches before the last go through ``fill(tokens, pos)`` (``target.eval`` with no rows by
    default), and the last batch is always evaluated, by ``last(tokens, pos)`` (host numpy
    logits of its last row by default; a device verifier's own call on a GPU): its last row is the one output
    row, as on a cold run. ``on_plan(kept)`` is called once the reuse is known,
    ``on_batch(tokens, seconds)`` after each batch; ``cancel`` is checked before each batch,
    and a cancelled prefill returns None logits (what was evaluated stays cached)."""
    if not prompt:
        raise ValueError("empty prompt")
    plan = bounds(len(prompt), marks)
    final = plan[-2]
    kept = reusable(target, prompt, marks, final if limit is None else min(limit, final))
    if on_plan is not None:
        on_plan(kept)
    if _run(target, prompt, plan, kept, final, cancel, fill, on_batch) < final or (
        cancel is not None and cancel.is_set()
    ):
        log.debug("prefill cancelled before the last of %d prompt tokens", len(prompt))
        return None, kept
    t = time.perf_counter()
    tail = prompt[final:]
    if last is not None:
        logits = last(tail, final)
    else:
        logits = np.array(target.eval(tail, final, [len(tail) - 1])[0])
    if on_batch is not None:
        on_batch(len(tail), time.perf_counter() - t)
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
    if isinstance(target, BatchLog) and len(target.cache_tokens) == n:
        target.cache_batches = bounds(n)[:-1]
