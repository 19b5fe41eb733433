"""Canonical prefill: the same batches, so the same logits, whatever the cache holds.

The toy tests use a toy whose cached state depends on the batch a position was evaluated
in, as llama.cpp's CPU kernels do; the model test checks the real backend bit for bit.
"""

from __future__ import annotations

import sysconfig
import threading
from pathlib import Path

import numpy as np
import pytest
from toy import ToyModel

from specedit.engine import prefill as canonical
from specedit.engine.decode import GenConfig, generate, read_prompt
from specedit.engine.lookup import LookupDrafter
from specedit.engine.metrics import Metrics
from specedit.engine.policy import PolicyConfig

C = canonical.CHUNK


class BatchToy(ToyModel):
    """The toy plus llama.cpp's flaw: the last ``L mod 4`` rows of an ``L``-token batch and
    a lone token are computed another way, which shifts their cached state, and every later
    row reads the cached states before it. Logs its batches like the llama.cpp backend."""

    def __init__(self, **kw) -> None:
        super().__init__(vocab=64, **kw)
        self.state: list[float] = []
        self.cache_batches: list[int] = []

    @property
    def cache_tokens(self) -> list[int]:
        return self.toks

    def rollback(self, pos: int) -> None:
        super().rollback(pos)
        del self.state[pos:]
        self.cache_batches = [b for b in self.cache_batches if b < pos]

    def eval(self, tokens, pos, want):
        self.rollback(pos)
        rows = super().eval(tokens, pos, want)
        n = len(tokens)
        self.state += [0.5 if n == 1 or i >= n - n % 4 else 0.0 for i in range(n)]
        self.cache_batches.append(pos)
        drift = np.cumsum(self.state)[[pos + w for w in want]]
        return (rows + drift[:, None] * np.sin(np.arange(self.n_vocab))).astype(np.float32)


def _prompt(n: int, seed: int = 0, tail: int = 0) -> list[int]:
    rng = np.random.default_rng(seed)
    body = list(rng.integers(0, 64, 50))
    ins = list(np.random.default_rng(100 + tail).integers(0, 64, 23))
    return (body * (n // 50 + 1))[:n] + ins


def test_bounds_restart_at_each_mark():
    assert canonical.bounds(300) == [0, C, 2 * C, 300]
    assert canonical.bounds(300, [200]) == [0, C, 200, 300]
    assert canonical.bounds(300, [200, 260, 0, 300, 999]) == [0, C, 200, 260, 300]
    assert canonical.bounds(2 * C) == [0, C, 2 * C]
    assert canonical.bounds(5, [3]) == [0, 3, 5]


def test_the_toy_has_the_flaw():
    """Otherwise the tests below would prove nothing: a prefix evaluated in other batches
    changes the first logits."""
    p, mark = _prompt(301), 301
    t = BatchToy()
    cold = np.array(t.eval(p, 0, [len(p) - 1])[0])
    t.rollback(0)
    t.eval(p[:mark], 0, [])
    split = np.array(t.eval(p[mark:], mark, [len(p) - 1 - mark])[0])
    assert np.abs(cold - split).max() > 0.1


def _first(t, p, marks, start=None):
    m = Metrics()
    row = read_prompt(t, p, m, len(p) if start is None else start, marks)
    return row, m.cached_tokens


@pytest.mark.parametrize("mark", [301, 384, 130])
def test_every_cache_state_gives_the_cold_logits(mark):
    p = _prompt(mark)
    marks = [mark]
    ref, kept = _first(BatchToy(), p, marks)
    assert kept == 0

    # a warm-up to the mark (in batches, as the editors do), then the prefill
    t = BatchToy()
    have, pos = canonical.extend(t, p, mark, marks)
    assert (have, pos) == (0, mark)
    row, kept = _first(t, p, marks)
    assert kept == mark and np.array_equal(row, ref)

    # the previous request: another instruction after the same prefix, then its output
    t = BatchToy()
    other = _prompt(mark, tail=1)
    generate(t, other, GenConfig(max_tokens=30, speculate=False), prefix_marks=marks)
    row, kept = _first(t, p, marks)
    assert kept == mark and np.array_equal(row, ref)

    # the same prompt again: the last batch (the logits row) is evaluated as on a cold run
    t = BatchToy()
    generate(t, p, GenConfig(max_tokens=30, speculate=False), prefix_marks=marks)
    row, kept = _first(t, p, marks)
    assert kept == canonical.bounds(len(p), marks)[-2] and np.array_equal(row, ref)

    # a prefix evaluated in other batches is kept only up to the last boundary they share
    t = BatchToy()
    t.eval(p[:C], 0, [])
    t.eval(p[C:mark], C, [])
    t.eval(p[mark:], mark, [])
    row, kept = _first(t, p, marks)
    assert kept == (mark if mark <= 2 * C else C) and np.array_equal(row, ref)
    t.rollback(0)
    t.eval(p[:mark], 0, [])  # one batch: the old prefill's way
    row, kept = _first(t, p, marks)
    assert kept == 0 and np.array_equal(row, ref)

    # a state restored from disk: batches unknown (as load_state leaves them) until the
    # cache records those of the cold run that saved it
    t = BatchToy()
    canonical.extend(t, p, mark, marks)
    t.cache_batches = []
    assert _first(t, p, marks)[1] == 0
    t.rollback(mark)
    t.cache_batches = []
    canonical.adopt(t, mark)
    row, kept = _first(t, p, marks)
    assert kept == mark and np.array_equal(row, ref)

    # the caller may forbid reuse
    assert _first(t, p, marks, start=0)[1] == 0


def test_an_interrupted_warm_up_is_kept():
    import threading

    p, mark = _prompt(400), 400
    t = BatchToy()
    t.eval(p[:C], 0, [])  # one batch ran, then the rewrite arrived
    stop = threading.Event()
    stop.set()
    assert canonical.extend(t, p, mark, [mark], stop) == (C, C)
    assert _first(t, p, [mark])[1] == C


def test_greedy_plain_and_exact_lookup_agree_whatever_the_cache_holds():
    p, mark = _prompt(420), 420
    marks = [mark]
    ref = generate(BatchToy(), p, GenConfig(max_tokens=60, speculate=False), prefix_marks=marks)
    exact = GenConfig(max_tokens=60, exact_block=1, policy=PolicyConfig(fixed_k=8))
    t = BatchToy()
    for state in ("cold", "warm", "other", "same"):
        if state == "cold":
            t.rollback(0)
        elif state == "warm":
            t.rollback(0)
            canonical.extend(t, p, mark, marks)
        elif state == "other":
            generate(t, _prompt(mark, tail=2), GenConfig(max_tokens=20), prefix_marks=marks)
        for drafter in (None, LookupDrafter(prompt_len=len(p))):
            cfg = exact if drafter else GenConfig(max_tokens=60, speculate=False)
            out = generate(t, p, cfg, drafter, cached_prefix=len(p), prefix_marks=marks)
            assert out.tokens == ref.tokens, state


def test_a_backend_without_a_batch_log_is_trusted_on_the_plan():
    p, mark = _prompt(300), 300
    t = ToyModel()
    t.cache_tokens = t.toks  # shared prefix known, batches not
    t.eval(p[:200], 0, [])
    t.cache_tokens = t.toks
    assert canonical.reusable(t, p, [mark]) == C


@pytest.mark.model
def test_llama_first_logits_are_bit_equal_on_every_path(qwen05, tmp_path, monkeypatch):
    """Cold, after a warm-up, from the disk prompt cache and after another instruction's
    request in the same process: the first logits of a rewrite are the same bits."""
    from specedit.app.edit.prompts import rewrite_prompt
    from specedit.app.edit.rewrite import warm
    from specedit.app.runtime import prompt_cache

    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path))
    src = Path(sysconfig.get_paths()["stdlib"]) / "colorsys.py"
    text = "".join(src.read_text(encoding="utf-8").splitlines(keepends=True)[:35])

    def prompt(instruction):
        return rewrite_prompt(qwen05.target, text, instruction, path="c.py")

    pr = prompt("Rename rgb_to_yiq to rgb2yiq.")
    p, other = list(pr.ids), list(prompt("Add a docstring to every function.").ids)
    marks, keep = pr.marks, pr.prefix_end
    t = qwen05.target

    t.rollback(0)
    ref, kept = _first(t, p, marks)
    assert kept == 0
    rows = {}
    t.rollback(0)
    warm(qwen05, text, path="c.py")
    rows["warm-up"] = _first(t, p, marks)
    t.rollback(0)
    generate(t, other, GenConfig(max_tokens=8, speculate=False), prefix_marks=marks)
    rows["other request"] = _first(t, p, marks)
    key = qwen05.cache_key + "|" + canonical.SCHEME
    assert prompt_cache.store(t, other, keep, key) is not None
    t.rollback(0)
    assert prompt_cache.restore(t, p, key) == keep
    canonical.adopt(t, keep)
    rows["prompt cache"] = _first(t, p, marks)
    for name, (row, kept) in rows.items():
        assert kept == keep, name
        assert np.array_equal(row, ref), name


def test_chunked_prefill_gives_the_same_logits_and_books_each_chunk():
    prompt = [int(t) for t in np.random.default_rng(0).integers(0, 64, 3 * C + 5)]
    whole = ToyModel(64)
    want = whole.eval(prompt, 0, [len(prompt) - 1])[0]
    toy = ToyModel(64)
    toy.eval(prompt[:C], 0, [])  # one batch of the plan cached already
    toy.cache_tokens = toy.toks  # and the toy says which tokens it holds
    m = Metrics()
    seen: list[int] = []
    orig = toy.eval

    def spy(tokens, pos, rows):
        seen.append(m.read_tokens)  # the reading phase's progress before each call
        return orig(tokens, pos, rows)

    toy.eval = spy
    got = read_prompt(toy, prompt, m, start=len(prompt))
    assert np.array_equal(got, want)
    assert toy.calls[1:] == [C, C, 5]
    assert seen == [0, C, 2 * C]
    assert (m.read_tokens, m.read_total, m.cached_tokens) == (len(prompt) - C,) * 2 + (C,)
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
