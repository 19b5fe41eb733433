"""The on-disk prompt cache, on the real llama.cpp backend with the 0.5B model."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sysconfig
from pathlib import Path

import pytest

from specedit.app.edit.rewrite import rewrite
from specedit.app.options import RewriteOptions
from specedit.app.runtime import prompt_cache


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state" / "prompt-cache"


def _text() -> str:
    src = Path(sysconfig.get_paths()["stdlib"]) / "colorsys.py"
    # 40 lines: 362 tokens, past MIN_TOKENS (and _prefilled's 300) with the system text
    return "".join(src.read_text(encoding="utf-8").splitlines(keepends=True)[:40])


def _opts(instruction: str, cache: bool = True) -> RewriteOptions:
    # the whole-file prompt: its prefix (system text and file) is what the cache keeps;
    # exact, since outputs are compared (inexact blocks follow the timing)
    return RewriteOptions(instruction, prompt_cache=cache, max_tokens=12, edit="whole", exact=True)


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
    assert res.status in ("ok", "truncated") and res.raw  # 12 tokens: cut, but it ran
    assert res.metrics.cached_tokens == 0  # prefilled from scratch
    assert "prompt cache" in caplog.text


def test_short_prefixes_and_other_backends_are_not_cached(qwen05, state):
    t = qwen05.target
    t.rollback(0)
    rewrite(qwen05, "x = 1\n", _opts("Set x to 2."), path="x.py")
    assert not (state / "index.json").exists()  # under MIN_TOKENS: prefill is cheap anyway
    assert prompt_cache.restore(object(), [1, 2, 3], "k", have=2) == 2
    assert prompt_cache.store(object(), [1, 2, 3], 3, "k") is None


# --- a broken cache: a warning and a cold run, never a failure or a different output ---------


def _index(state: Path) -> list[dict]:
    return json.loads((state / "index.json").read_text())


def _entry(sha: str, **fields) -> dict:
    e = {"file": sha[:32] + ".kv", "model": "k", "n": 300, "sha": sha, "bytes": 1, "sum": sha}
    return {**e, **fields}


def _prefilled(target, n: int = 300) -> list[int]:
    """The target's cache holding the first ``n`` tokens of a real file (as after a prefill)."""
    toks = target.tokenize(_text())
    assert len(toks) > n + 20
    target.rollback(0)
    target.eval(toks[:n], 0, [])
    return toks


def test_a_malformed_index_entry_means_a_cold_run(qwen05, state, caplog):
    """Issue 12, item 10: ``"n": "abc"`` crashed every rewrite until the index was deleted."""
    state.mkdir(parents=True)
    bad = _entry("a" * 64, n="abc", model=qwen05.cache_key)
    (state / "index.json").write_text(json.dumps([bad]))
    qwen05.target.rollback(0)
    res = rewrite(qwen05, _text(), _opts("Rename rgb_to_yiq to rgb2yiq."), path="c.py")
    assert res.raw and res.metrics.cached_tokens == 0
    assert "dropped an index entry" in caplog.text
    index = _index(state)
    assert [e["sha"] for e in index] != [bad["sha"]] and len(index) == 1  # the new state only


def test_random_bytes_in_a_state_file_mean_a_cold_run_with_the_same_output(qwen05, state, caplog):
    """Issue 12, item 10: 4 KiB of random bytes in the middle of a .kv file were loaded and
    changed the output. Now the file's sha256 is checked first."""
    t = qwen05.target
    text = _text()
    t.rollback(0)
    cold = rewrite(qwen05, text, _opts("Rename hls_to_rgb to hls2rgb."), path="c.py")
    (entry,) = _index(state)
    kv = state / entry["file"]
    assert hashlib.sha256(kv.read_bytes()).hexdigest() == entry["sum"]
    assert kv.stat().st_size == entry["bytes"]
    with kv.open("r+b") as f:
        f.seek(entry["bytes"] // 2)
        f.write(os.urandom(4096))
    assert kv.stat().st_size == entry["bytes"]
    t.rollback(0)
    again = rewrite(qwen05, text, _opts("Rename hls_to_rgb to hls2rgb."), path="c.py")
    assert again.metrics.cached_tokens == 0  # prefilled cold
    assert again.raw == cold.raw
    assert "does not match its checksum" in caplog.text
    (fresh,) = _index(state)  # the corrupt state was dropped, and this run saved a good one
    assert hashlib.sha256((state / fresh["file"]).read_bytes()).hexdigest() == fresh["sum"]


def test_eviction_never_deletes_a_file_outside_the_cache(qwen05, state, tmp_path, monkeypatch):
    """Issue 12, item 10: an index entry naming a file outside the cache got it deleted."""
    monkeypatch.setattr(prompt_cache, "MAX_ENTRIES", 1)  # any older entry is evicted
    state.mkdir(parents=True)
    victims = [tmp_path / f"victim{i}.txt" for i in range(3)]
    for v in victims:
        v.write_text("precious")
        os.utime(v, (1, 1))  # older than anything in the cache
    link = state / ("c" * 32 + ".kv")
    link.symlink_to(victims[2])
    (state / "index.json").write_text(
        json.dumps(
            [
                _entry("a" * 64, file="../victim0.txt"),
                _entry("b" * 64, file=str(victims[1])),
                _entry("c" * 64),  # a symlink out of the cache
            ]
        )
    )
    toks = _prefilled(qwen05.target)
    assert prompt_cache.store(qwen05.target, toks, 300, "k") is not None
    assert all(v.read_text() == "precious" for v in victims)
    (entry,) = _index(state)
    assert entry["n"] == 300 and entry["file"] != link.name
    assert not os.path.lexists(link)  # the link itself went, not what it points to


_MALFORMED = [
    {"n": "abc"},
    {"n": 0},
    {"n": -5},
    {"n": True},
    {"n": 1.5},
    {"n": None},
    {"file": "../x.kv"},
    {"file": "/etc/passwd"},
    {"file": "sub/" + "d" * 32 + ".kv"},
    {"file": "e" * 32 + ".kv"},  # not the name the cache gives this sha
    {"sha": "zz"},
    {"sum": "not hex"},
    {"bytes": "1"},
    {"model": 3},
    {"extra": 1},
]


def test_every_malformed_entry_is_dropped_and_a_good_one_still_used(qwen05, state, caplog):
    t = qwen05.target
    toks = _prefilled(t)
    assert prompt_cache.store(t, toks, 300, "k") is not None
    (good,) = _index(state)
    bad = [{**_entry("d" * 64, n=200, model="k"), **b} for b in _MALFORMED]
    older = {k: v for k, v in _entry("f" * 64, n=200).items() if k not in ("bytes", "sum")}
    (state / "index.json").write_text(json.dumps([*bad, good, ["a list"], "text", older]))
    t.rollback(0)
    assert prompt_cache.restore(t, toks, "k") == 300  # the good entry still loads
    assert t.cache_tokens == toks[:300]
    assert caplog.text.count("dropped an index entry") == len(bad) + 2  # older: no warning
    assert _index(state) == [good]  # rewritten without them


def test_an_unreadable_index_means_a_cold_run(qwen05, state):
    state.mkdir(parents=True)
    t = qwen05.target
    toks = _prefilled(t)
    for content in ("not json", '{"a": 1}', "[1, 2]", ""):
        (state / "index.json").write_text(content)
        assert prompt_cache.restore(t, toks, "k", have=300) == 300  # the cache is untouched
        assert t.cache_tokens == toks[:300]
        assert prompt_cache.store(t, toks, 300, "k") is not None  # and it is rebuilt
        assert len(_index(state)) == 1


def test_the_cache_is_private(qwen05, state):
    """Issue 12, item 9: the token ids decode back to the user's source verbatim."""
    state.mkdir(parents=True, mode=0o755)
    os.chmod(state, 0o755)  # as an older specedit left it
    toks = _prefilled(qwen05.target)
    path = prompt_cache.store(qwen05.target, toks, 300, "k")
    assert path is not None
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    for f in state.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f.name
    assert {f.name for f in state.iterdir()} == {path.name, "index.json", "index.lock"}


def test_a_cache_folder_that_is_a_symlink_is_not_used(qwen05, state, tmp_path, caplog):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    state.parent.mkdir(parents=True)
    state.symlink_to(elsewhere)
    t = qwen05.target
    toks = _prefilled(t)
    assert prompt_cache.store(t, toks, 300, "k") is None
    assert prompt_cache.restore(t, toks, "k", have=300) == 300
    assert list(elsewhere.iterdir()) == []
    assert "not a directory" in caplog.text and "not used" in caplog.text
