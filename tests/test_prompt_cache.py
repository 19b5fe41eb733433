"""The on-disk prompt cache, on the real llama.cpp backend with the 0.5B model."""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

import pytest

from specedit.app import prompt_cache
from specedit.app.options import RewriteOptions
from specedit.app.rewrite import rewrite


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state" / "prompt-cache"


def _text() -> str:
    src = Path(sysconfig.get_paths()["stdlib"]) / "colorsys.py"
    return "".join(src.read_text(encoding="utf-8").splitlines(keepends=True)[:60])


def _opts(instruction: str, cache: bool = True) -> RewriteOptions:
    # the whole-file prompt: its prefix (system text and file) is what the cache keeps
    return RewriteOptions(instruction=instruction, prompt_cache=cache, max_tokens=12, edit="whole")


def test_second_process_prefills_only_the_instruction(qwen05, state):
    t = qwen05.target
    text = _text()
    t.rollback(0)  # as in a fresh process
    cold = rewrite(qwen05, text, _opts("Rename rgb_to_yiq to rgb2yiq.", cache=False), path="c.py")
    assert cold.metrics.cached_tokens == 0
    first = rewrite(qwen05, text, _opts("Rename rgb_to_yiq to rgb2yiq."), path="c.py")
    index = json.loads((state / "index.json").read_text())
    assert len(index) == 1 and (state / index[0]["file"]).stat().st_size > 0
    n = index[0]["n"]
    assert n >= prompt_cache.MIN_TOKENS
    assert first.raw == cold.raw

    t.rollback(0)  # a new process: nothing in memory, the prefix comes from disk
    warm = rewrite(qwen05, text, _opts("Rename rgb_to_yiq to rgb2yiq."), path="c.py")
    assert warm.metrics.cached_tokens == n
    assert warm.metrics.prompt_tokens < 40  # only the instruction and the chat tail
    assert warm.raw == cold.raw

    # another instruction on the same file shares the prefix too
    t.rollback(0)
    other = rewrite(qwen05, text, _opts("Add a module docstring."), path="c.py")
    assert other.metrics.cached_tokens == n
    assert len(json.loads((state / "index.json").read_text())) == 1  # nothing new to save


def test_a_corrupt_state_file_is_ignored(qwen05, state, caplog):
    t = qwen05.target
    text = _text()
    t.rollback(0)
    rewrite(qwen05, text, _opts("Rename hls_to_rgb to hls2rgb."), path="c.py")
    entry = json.loads((state / "index.json").read_text())[0]
    (state / entry["file"]).write_bytes(b"not a llama.cpp state file" * 100)
    t.rollback(0)
    res = rewrite(qwen05, text, _opts("Rename hls_to_rgb to hls2rgb."), path="c.py")
    assert res.status == "ok"
    assert res.metrics.cached_tokens == 0  # prefilled from scratch
    assert "prompt cache" in caplog.text


def test_short_prefixes_and_other_backends_are_not_cached(qwen05, state):
    t = qwen05.target
    t.rollback(0)
    rewrite(qwen05, "x = 1\n", _opts("Set x to 2."), path="x.py")
    assert not (state / "index.json").exists()  # under MIN_TOKENS: prefill is cheap anyway
    assert prompt_cache.restore(object(), [1, 2, 3], "k", have=2) == 2
    assert prompt_cache.store(object(), [1, 2, 3], 3, "k") is None
