"""The chunked, cancellable prefill (``engine.decode.prefill``), on the numpy toy model."""

from __future__ import annotations

import threading

import numpy as np
from toy import ToyModel

from specedit.engine.decode import PREFILL_CHUNK, GenConfig, generate, prefill, prefill_chunks
from specedit.engine.metrics import Metrics

C = PREFILL_CHUNK


def test_chunk_boundaries_are_multiples_of_the_chunk_in_absolute_positions():
    assert list(prefill_chunks(0, 2 * C + 44)) == [(0, C), (C, 2 * C), (2 * C, 2 * C + 44)]
    # a cached prefix: the first chunk runs to the next multiple, then whole chunks
    assert list(prefill_chunks(50, 2 * C + 1)) == [(50, C), (C, 2 * C), (2 * C, 2 * C + 1)]
    assert list(prefill_chunks(C, 2 * C)) == [(C, 2 * C)]
    assert list(prefill_chunks(7, 9)) == [(7, 9)]
    assert list(prefill_chunks(9, 9)) == []


def test_chunked_prefill_gives_the_same_logits_and_books_each_chunk():
    prompt = [int(t) for t in np.random.default_rng(0).integers(0, 64, 3 * C + 5)]
    whole = ToyModel(64)
    want = whole.eval(prompt, 0, [len(prompt) - 1])[0]
    toy = ToyModel(64)
    toy.eval(prompt[:40], 0, [])  # 40 tokens cached already
    m = Metrics()
    seen: list[int] = []
    orig = toy.eval

    def spy(tokens, pos, rows):
        seen.append(m.read_tokens)  # the reading phase's progress before each call
        return orig(tokens, pos, rows)

    toy.eval = spy
    got = prefill(toy, prompt, m, start=40)
    assert np.array_equal(got, want)
    assert toy.calls[1:] == [C - 40, C, C, 5]
    assert seen == [0, C - 40, 2 * C - 40, 3 * C - 40]
    assert (m.read_tokens, m.read_total, m.cached_tokens) == (len(prompt) - 40,) * 2 + (40,)
    assert m.phase == "reading"


def test_a_cancel_stops_the_prefill_after_the_chunk_in_flight():
    prompt = [i % 64 for i in range(10 * C)]
    toy = ToyModel(64)
    cancel = threading.Event()
    orig = toy.eval

    def first_chunk_then_cancel(tokens, pos, rows):
        out = orig(tokens, pos, rows)
        cancel.set()  # the user cancels while the first chunk is evaluated
        return out

    toy.eval = first_chunk_then_cancel
    res = generate(toy, prompt, GenConfig(max_tokens=50), cancel=cancel)
    assert toy.calls == [C]  # one chunk of ten, and no decode step
    assert res.tokens == [] and res.metrics.stop_reason == "cancelled"
    assert res.metrics.read_tokens == C and res.metrics.read_total == 10 * C
    # a cancel before the prefill evaluates nothing
    toy2 = ToyModel(64)
    res = generate(toy2, prompt, GenConfig(max_tokens=50), cancel=cancel)
    assert toy2.calls == [] and res.metrics.stop_reason == "cancelled"
