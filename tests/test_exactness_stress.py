"""Stress: ``--exact`` and plain greedy decoding give the same text whatever the cache holds.

Each plain (``--draft none --exact``) / lookup (``--draft lookup --exact``) pair runs on a
few standard-library files, on the 0.5B model, under these cache states:

  * ``cold``: an empty cache;
  * ``prompt``: a fresh process's cache filled from the disk prompt cache, saved by a run
    with another instruction;
  * ``reuse``: the cache holds another instruction's request and its output (the server and
    the terminal app keep it in memory);
  * ``warm``: after a warm-up (``rewrite/warm``, sent while the user types);
  * ``loaded``: an empty cache, with another process spinning on a CPU.

Every output must equal the file's cold plain output: the equality rate must be 100%. The
rate and the number of pairs are printed. ``SPECEDIT_STRESS_REPS`` repeats the whole set
(default 1: under a minute on 2 cores for the default one file, its first 16 lines; make
test-long runs three files of 60 lines, three times) and ``SPECEDIT_STRESS_TOKENS`` sets
the output length (default 32 tokens, 160 in make test-long).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from specedit.app.edit.rewrite import RewriteOptions, rewrite, warm

pytestmark = [pytest.mark.slow, pytest.mark.model]

LONG = os.environ.get("SPECEDIT_LONG") == "1"
# the default suite: one of the three files the issue saw differ; SPECEDIT_LONG=1 (make
# test-long) all three (tests/conftest.py)
FILES = ("colorsys.py", "sched.py", "nturl2path.py") if LONG else ("colorsys.py",)
INSTRUCTION = "Add a short docstring to every function that has none."
OTHER = "Add a type hint to every parameter."  # another rewrite of the file (a model call)
STATES = ("cold", "prompt", "reuse", "warm", "loaded")
REPS = int(os.environ.get("SPECEDIT_STRESS_REPS", "1"))
TOKENS = int(os.environ.get("SPECEDIT_STRESS_TOKENS", "160" if LONG else "32"))
LINES = 60 if LONG else 16  # of each file: every state but one prefills it again


def _text(name: str, lines: int = LINES) -> str:
    src = Path(sysconfig.get_paths()["stdlib"]) / name
    return "".join(src.read_text(encoding="utf-8").splitlines(keepends=True)[:lines])


def _opts(draft: str, instruction: str = INSTRUCTION, **kw) -> RewriteOptions:
    kw.setdefault("max_tokens", TOKENS)
    return RewriteOptions(instruction=instruction, draft=draft, exact=True, **kw)


@contextlib.contextmanager
def _cpu_load():
    """Another process spinning on a CPU for the duration."""
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spin.kill()
        spin.wait()


def _run_in_state(loaded, text: str, name: str, state: str, draft: str) -> str:
    t = loaded.target
    cache = False
    if state in ("cold", "loaded"):
        t.rollback(0)
    elif state == "prompt":
        t.rollback(0)  # a fresh process: the file's prefix comes from disk
        cache = True
    elif state == "reuse":
        rewrite(loaded, text, _opts("none", OTHER, max_tokens=8), path=name)
    elif state == "warm":
        t.rollback(0)
        assert warm(loaded, text, path=name).status == "done"
    load = _cpu_load() if state == "loaded" else contextlib.nullcontext()
    with load:
        res = rewrite(loaded, text, _opts(draft, prompt_cache=cache), path=name)
    return res.raw


def test_exact_pairs_are_equal_under_every_cache_state(qwen05, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path))
    t = qwen05.target
    runs: list[tuple[str, str, str, bool]] = []  # file, state, draft, equal to the reference
    pairs = equal_pairs = 0
    for _ in range(REPS):
        for name in FILES:
            text = _text(name)
            t.rollback(0)
            ref = rewrite(qwen05, text, _opts("none"), path=name).raw
            # the disk cache holds the file's prefix, saved by a run with another instruction
            t.rollback(0)
            rewrite(qwen05, text, _opts("none", OTHER, max_tokens=4, prompt_cache=True), path=name)
            for state in STATES:
                outs = {d: _run_in_state(qwen05, text, name, state, d) for d in ("none", "lookup")}
                runs += [(name, state, d, out == ref) for d, out in outs.items()]
                pairs += 1
                equal_pairs += outs["none"] == outs["lookup"]
    equal = sum(r[-1] for r in runs)
    differ = sorted({f"{f}:{s}:{d}" for f, s, d, ok in runs if not ok})
    with capsys.disabled():
        print(
            f"\nexactness stress: {pairs} plain/lookup pairs, {equal_pairs / pairs:.0%} equal; "
            f"{equal}/{len(runs)} outputs equal the cold plain output ({TOKENS} tokens each)"
            + (f"; differ: {', '.join(differ)}" if differ else "")
        )
    assert equal == len(runs), differ
