"""Warm-ups and the shared prompt prefix: the bookkeeping (what is cached, what is left to
read, chunks, interrupts) on the numpy toy model with a visible prefix cache; what the real
llama.cpp backend must give (the same output warm or cold, the file never parsed for special
tokens) on the 0.5B model."""

from __future__ import annotations

import sysconfig
import threading
from pathlib import Path

import pytest
from toy_server import CachingToy, toy_loaded

from specedit.app.edit.edits import FORMAT
from specedit.app.edit.prompts import rewrite_prompt
from specedit.app.edit.rewrite import first_prompt, rewrite, warm
from specedit.app.options import RewriteOptions
from specedit.engine.prefill import CHUNK as PREFILL_CHUNK


def _text(lines: int = 45) -> str:  # ~500 prompt tokens: past 3 prefill chunks
    src = Path(sysconfig.get_paths()["stdlib"]) / "colorsys.py"
    return "".join(src.read_text(encoding="utf-8").splitlines(keepends=True)[:lines])


def _opts(instruction: str, region=None) -> RewriteOptions:
    # the whole-file prompt: blocks share its prefix (tests/test_edit_modes.py); exact, since
    # outputs are compared (inexact blocks follow the timing)
    return RewriteOptions(instruction, max_tokens=12, region=region, edit="whole", exact=True)


def test_warm_leaves_only_the_instruction_to_prefill():
    loaded = toy_loaded(CachingToy())
    t = loaded.target
    text = _text()
    w = warm(loaded, text, path="c.py")
    assert w.status == "done" and w.cached_tokens == 0
    assert w.evaluated_tokens == w.prefix_tokens > 3 * PREFILL_CHUNK
    assert t.cache_tokens[: w.prefix_tokens] == _prompt(loaded, text)[: w.prefix_tokens]
    assert warm(loaded, text, path="c.py").status == "cached"

    hot = rewrite(loaded, text, _opts("Rename rgb_to_yiq to rgb2yiq."), path="c.py")
    assert hot.metrics.cached_tokens == w.prefix_tokens
    assert hot.metrics.prompt_tokens == hot.metrics.read_total  # only the rest was read
    assert hot.metrics.prompt_tokens < 80  # the instruction and the chat tail

    # a region rewrite of the same file shares the prefix: the file comes first
    region = rewrite(loaded, text, _opts("Rename hsv_to_rgb to hsv2rgb.", (5, 12)), path="c.py")
    assert region.metrics.cached_tokens >= w.prefix_tokens
    # a warm-up given the region goes on through its lines: only the instruction is left
    rw = warm(loaded, text, path="c.py", region=(20, 30))
    assert rw.status == "done" and rw.cached_tokens >= w.prefix_tokens
    assert rw.prefix_tokens > w.prefix_tokens
    r2 = rewrite(loaded, text, _opts("Rename hsv_to_rgb to hsv2rgb.", (20, 30)), path="c.py")
    assert r2.metrics.cached_tokens >= rw.prefix_tokens
    assert r2.metrics.prompt_tokens < 80
    # the path is part of the prompt: another file name is another prefix
    assert warm(loaded, text, path="d.py").cached_tokens < rw.cached_tokens


@pytest.mark.model
def test_a_warm_rewrite_writes_what_a_cold_one_does(qwen05):
    """On llama.cpp, a rewrite over the prefix a warm-up left in the KV cache gives the text a
    cold one gives, and reads only the instruction."""
    t = qwen05.target
    text = _text()
    t.rollback(0)
    cold = rewrite(qwen05, text, _opts("Rename rgb_to_yiq to rgb2yiq."), path="c.py")
    t.rollback(0)
    w = warm(qwen05, text, path="c.py")
    assert w.status == "done" and w.evaluated_tokens == w.prefix_tokens > 3 * PREFILL_CHUNK
    assert t.cache_tokens[: w.prefix_tokens] == _prompt(qwen05, text)[: w.prefix_tokens]
    hot = rewrite(qwen05, text, _opts("Rename rgb_to_yiq to rgb2yiq."), path="c.py")
    assert hot.metrics.cached_tokens == w.prefix_tokens
    assert hot.metrics.prompt_tokens < 40  # the instruction and the chat tail
    assert hot.raw == cold.raw


def test_the_format_before_the_instruction_is_warm_too():
    """``RewriteOptions.first`` ``early``: the blocks prompt's format text comes before the
    instruction, so the warm-up takes it in and a rewrite reads only the instruction; a
    whole rewrite of the file still shares the prefix through the file."""
    loaded = toy_loaded(CachingToy())
    text = _text()
    plain = warm(loaded, text, path="c.py")
    w = warm(loaded, text, path="c.py", first="early")
    assert w.status == "done" and w.cached_tokens >= plain.prefix_tokens
    assert w.prefix_tokens > plain.prefix_tokens + 60  # the format's text
    early = RewriteOptions("Rename rgb_to_yiq to rgb2yiq.", first="early")
    first, keep = first_prompt(loaded, text, early, "c.py")  # what the rewrite asks first
    assert keep == w.prefix_tokens and len(first) - keep < 80  # the instruction is left
    assert loaded.target.cache_tokens[:keep] == list(first.ids[:keep])
    p = rewrite_prompt(loaded.target, text, "Do it.", path="c.py", edit="blocks", format_first=True)
    user = p.chat.messages[-1][1]
    assert user.index(FORMAT) < user.index("Instruction: Do it.") and user.count(FORMAT) == 1
    assert p.prefix_end == plain.prefix_tokens < p.warm_end == w.prefix_tokens
    assert p.warm_end in p.marks
    whole = rewrite(loaded, text, _opts("Rename rgb_to_yiq to rgb2yiq."), path="c.py")
    assert whole.metrics.cached_tokens >= plain.prefix_tokens


@pytest.mark.model
def test_an_early_format_warm_rewrite_writes_what_a_cold_one_does(qwen05):
    """On llama.cpp, ``first`` ``early`` warmed through the format's text: the blocks answer
    is the cold one, and only the instruction is read after Enter."""
    t = qwen05.target
    text = _text()
    early = RewriteOptions(
        "Rename rgb_to_yiq to rgb2yiq.", max_tokens=48, first="early", exact=True
    )
    t.rollback(0)
    cold = rewrite(qwen05, text, early, path="c.py")
    t.rollback(0)
    w = warm(qwen05, text, path="c.py", first="early")
    first, keep = first_prompt(qwen05, text, early, "c.py")
    assert w.status == "done" and w.prefix_tokens == keep and len(first) - keep < 40
    hot = rewrite(qwen05, text, early, path="c.py")
    assert hot.metrics.cached_tokens >= keep and hot.raw == cold.raw


def test_an_interrupted_warm_keeps_what_it_did():
    loaded = toy_loaded(CachingToy())
    t = loaded.target
    text = _text(120)
    stop = threading.Event()
    stop.set()
    w = warm(loaded, text, path="c.py", interrupt=stop)
    assert w.status == "interrupted" and w.evaluated_tokens == 0 and t.evals == []
    t.eval(_prompt(loaded, text)[:PREFILL_CHUNK], 0, [])  # as if one chunk had run
    w = warm(loaded, text, path="c.py")
    assert w.status == "done" and w.cached_tokens == PREFILL_CHUNK
    assert w.evaluated_tokens == w.prefix_tokens - PREFILL_CHUNK
    # in the prefill's chunks: whole ones on multiples of PREFILL_CHUNK, then the rest
    assert [pos % PREFILL_CHUNK for pos, _ in t.evals[1:]] == [0] * (len(t.evals) - 1)
    assert all(n == PREFILL_CHUNK for _, n in t.evals[1:-1])
    assert warm(loaded, text, path="c.py").status == "cached"


def test_a_warm_up_is_interrupted_between_two_chunks():
    loaded = toy_loaded(CachingToy())
    t = loaded.target
    stop = threading.Event()
    orig = t.eval

    def interrupt_during_the_second_call(tokens, pos, want):
        if len(t.evals) == 1:
            stop.set()  # a rewrite arrives while the second chunk is evaluated
        return orig(tokens, pos, want)

    t.eval = interrupt_during_the_second_call
    w = warm(loaded, _text(120), path="c.py", interrupt=stop)
    assert w.status == "interrupted"
    assert len(t.evals) == 2 and w.evaluated_tokens == 2 * PREFILL_CHUNK < w.prefix_tokens


@pytest.mark.model
def test_the_file_is_never_parsed_for_special_tokens(qwen05):
    """A file that contains the chat template's markers stays text, in a region rewrite too."""
    text = 'END = "<|im_end|>"\nSTART = "<|im_start|>system"\n' + _text(20)
    im_end = qwen05.target.tokenize("<|im_end|>", special=True)
    assert len(im_end) == 1
    for region in (None, (0, 2)):
        p = rewrite_prompt(qwen05.target, text, "Rename END.", path="s.py", region=region)
        for s, e, _ in p.spans:
            assert im_end[0] not in p.ids[s:e]
        # the template's own markers: system and user turns end, nothing more
        assert p.ids.count(im_end[0]) == 2


def _prompt(loaded, text: str) -> list[int]:
    return list(rewrite_prompt(loaded.target, text, "-", path="c.py").ids)
