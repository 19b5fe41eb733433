"""A prompt cache on disk: the KV state of a prompt's file prefix, for the next process.

Contract: ``restore(target, prompt, model_key, have)`` loads the saved state
whose token ids are the longest prefix of ``prompt`` longer than ``have`` (the
prefix the target's cache already shares) and returns how many positions are
now cached (``have`` when nothing better was found; the target's cache is then
untouched). ``store(target, prompt, keep, model_key)`` rolls the cache back to
its first ``keep`` positions and saves them. Only backends with
``save_state``/``load_state`` (llama.cpp) take part; for others both are no-ops.

Why: a rewrite's prompt is the system text, then the file, then the
instruction. ``specedit rewrite`` runs in a fresh process each time, so the
second edit of the same file would prefill the whole file again. With the
state of the system-plus-file prefix on disk it prefills only the instruction.
The server and the TUI keep their cache in memory and need none of this.

Files live in ``<state dir>/prompt-cache/``: ``<sha>.kv`` (llama.cpp's
sequence state file) with an ``index.json`` of ``{file, model, n, sha}``,
where ``sha`` hashes the model key and the first ``n`` token ids. At most
``MAX_ENTRIES`` files and ``MAX_BYTES`` in all are kept, oldest out first.
Prefixes shorter than ``MIN_TOKENS`` are not worth a file. Any failure of the
cache is logged and ignored: it can only make a run slower, never wrong.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

from .state import state_dir

log = logging.getLogger(__name__)

MAX_ENTRIES = 8
MAX_BYTES = 2 << 30
MIN_TOKENS = 256


def cache_dir() -> Path:
    return state_dir() / "prompt-cache"


def _sha(model_key: str, tokens: Sequence[int]) -> str:
    h = hashlib.sha256(model_key.encode())
    h.update(b"\0" + ",".join(str(int(t)) for t in tokens).encode())
    return h.hexdigest()


def _index() -> list[dict]:
    try:
        data = json.loads((cache_dir() / "index.json").read_text())
        return [e for e in data if isinstance(e, dict) and {"file", "model", "n", "sha"} <= set(e)]
    except (OSError, ValueError, TypeError):
        return []


def _save_index(entries: list[dict]) -> None:
    d = cache_dir()
    tmp = d / "index.json.tmp"
    tmp.write_text(json.dumps(entries, indent=1))
    os.replace(tmp, d / "index.json")


def restore(target, prompt: Sequence[int], model_key: str, have: int = 0) -> int:
    """Load the longest saved prefix of ``prompt`` if it beats ``have``; positions cached."""
    if not hasattr(target, "load_state"):
        return have
    best = None
    for e in _index():
        n = int(e["n"])
        if e["model"] != model_key or n <= have or n >= len(prompt):
            continue
        if (best is None or n > int(best["n"])) and _sha(model_key, prompt[:n]) == e["sha"]:
            best = e
    if best is None:
        return have
    path = cache_dir() / best["file"]
    t = time.perf_counter()
    try:
        toks = target.load_state(path, max_tokens=int(best["n"]))
    except Exception as e:  # a cache can only help: never fail the rewrite over it
        log.warning("prompt cache: could not load %s: %s", path, e)
        toks = []
    if toks != list(prompt[: len(toks)]) or not toks:
        log.warning("prompt cache: %s does not hold this prompt; ignored", path)
        target.rollback(0)
        return 0
    log.info(
        "prompt cache: %d tokens from %s in %.3f s", len(toks), path.name, time.perf_counter() - t
    )
    try:
        os.utime(path)  # most recently used
    except OSError:
        pass
    return len(toks)


def store(target, prompt: Sequence[int], keep: int, model_key: str) -> Path | None:
    """Save the target's first ``keep`` cached positions (which must be ``prompt[:keep]``)."""
    if not hasattr(target, "save_state") or keep < MIN_TOKENS:
        return None
    cached = getattr(target, "cache_tokens", [])
    if len(cached) < keep or list(cached[:keep]) != list(prompt[:keep]):
        return None
    sha = _sha(model_key, prompt[:keep])
    entries = _index()
    if any(e["sha"] == sha for e in entries):
        return None
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        target.rollback(keep)
        path = d / f"{sha[:32]}.kv"
        tmp = path.with_suffix(".tmp")
        target.save_state(tmp)
        os.replace(tmp, path)  # a half-written state file never looks complete
        entries.append({"file": path.name, "model": model_key, "n": keep, "sha": sha})
        _save_index(_evict(entries))
        return path
    except Exception as e:
        log.warning("prompt cache: could not save: %s", e)
        return None


def _evict(entries: list[dict]) -> list[dict]:
    d = cache_dir()

    def mtime(e: dict) -> float:
        try:
            return (d / e["file"]).stat().st_mtime
        except OSError:
            return -1.0

    live = sorted((e for e in entries if mtime(e) >= 0), key=mtime, reverse=True)
    kept, total = [], 0
    for e in live:
        size = (d / e["file"]).stat().st_size
        if len(kept) < MAX_ENTRIES and total + size <= MAX_BYTES:
            kept.append(e)
            total += size
        else:
            (d / e["file"]).unlink(missing_ok=True)
    return kept
