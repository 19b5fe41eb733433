"""A prompt cache on disk: the KV state of a prompt's file prefix, for the next process.

Contract: ``restore(target, prompt, model_key, have)`` loads the saved state whose token ids are the
longest prefix of ``prompt`` longer than ``have`` (what the target's cache already shares) and
returns how many positions are now cached (``have``, cache untouched, when nothing better was
found). ``store(target, prompt, keep, model_key)`` rolls the cache back to ``keep`` positions and
saves them. Only backends with ``save_state``/``load_state`` (llama.cpp) take part; for others
both are no-ops. The cache may make a run slower, never wrong, never failing: every index entry
and state file (size, sha256) is checked before llama.cpp reads it, and one that does not match
is dropped with a warning and the run prefills cold. Only files the cache names, inside its
folder, are ever deleted.
Files live in ``<state dir>/prompt-cache/`` (0700, files 0600): ``<sha[:32]>.kv`` with an
``index.json`` of ``{file, model, n, sha, bytes, sum}``; at most ``MAX_ENTRIES`` files and
``MAX_BYTES`` (least recently used out first), none under ``MIN_TOKENS``; index updates take a lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ...engine.backend import StatefulCache
from ..store.state import (
    FILE_MODE,
    create_private,
    make_private,
    private_dir,
    state_dir,
    write_private,
)

try:  # POSIX only; elsewhere concurrent index updates are not serialised.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

MAX_ENTRIES = 8
MAX_BYTES = 2 << 30
MIN_TOKENS = 256

_STATE_NAME = re.compile(r"[0-9a-f]{32}\.kv")  # what store() writes, and all it may delete
_TMP_NAME = re.compile(r"[0-9a-f]{32}\.tmp|\.index\.json\.\d+\.tmp")  # only under the lock
_HEX64 = re.compile(r"[0-9a-f]{64}")
_FIELDS = frozenset({"file", "model", "n", "sha", "bytes", "sum"})
_CHUNK = 1 << 20


def cache_dir() -> Path:
    return state_dir() / "prompt-cache"


@contextlib.contextmanager
def _locked(d: Path) -> Iterator[None]:
    if fcntl is None:  # pragma: no cover
        yield
        return
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(d / "index.lock", flags, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _open_dir(create: bool) -> Path | None:
    """The cache folder, made private; None when it is missing (and not ``create``) or unsafe."""
    d = cache_dir()
    if not create and not os.path.lexists(d):
        return None
    try:
        return private_dir(d, follow_symlinks=False)
    except OSError as e:
        log.warning("prompt cache: %s; not used", e)
        return None


# ---- the index -----------------------------------------------------------------------------


def _sha(model_key: str, tokens: Sequence[int]) -> str:
    h = hashlib.sha256(model_key.encode())
    h.update(b"\0" + ",".join(str(int(t)) for t in tokens).encode())
    return h.hexdigest()


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _problem(e: object) -> str | None:
    """Why an index entry cannot be used, or None when it is well formed."""
    if not isinstance(e, dict) or set(e) != _FIELDS:
        return f"fields must be {sorted(_FIELDS)}"
    if not all(isinstance(e[k], str) for k in ("file", "model", "sha", "sum")):
        return "file, model, sha and sum must be strings"
    if not (_HEX64.fullmatch(e["sha"]) and _HEX64.fullmatch(e["sum"])):
        return "sha and sum must be 64 hex digits"
    if not (_STATE_NAME.fullmatch(e["file"]) and e["file"] == e["sha"][:32] + ".kv"):
        return f"file {e['file']!r} is not a name the cache writes"
    if not (_is_int(e["n"]) and e["n"] > 0 and _is_int(e["bytes"]) and e["bytes"] > 0):
        return "n and bytes must be integers > 0"
    return None


def _read_index(d: Path, warn: bool = True) -> tuple[list[dict], int]:
    """The index's valid entries (one per ``sha``) and how many were dropped (each with a
    warning, or quietly when ``warn`` is false: a re-read of what was reported)."""
    say = log.warning if warn else log.debug
    f = d / "index.json"
    if not f.exists():
        return [], 0
    try:
        data = json.loads(f.read_bytes())
    except (OSError, ValueError) as e:
        say("prompt cache: index %s unreadable (%s); starting afresh", f, e)
        return [], 1
    if not isinstance(data, list):
        say("prompt cache: index %s is not a list; starting afresh", f)
        return [], 1
    kept: list[dict] = []
    for e in data:
        why = _problem(e)
        if why is None and any(k["sha"] == e["sha"] for k in kept):
            why = "duplicate"
        if why is not None:
            if isinstance(e, dict) and set(e) == _FIELDS - {"bytes", "sum"}:
                log.info("prompt cache: dropped an entry without a checksum (older specedit)")
            else:
                say("prompt cache: dropped an index entry (%s): %.200r", why, e)
            continue
        kept.append(e)
    return kept, len(data) - len(kept)


def _update(d: Path, change: Callable[[list[dict]], list[dict]]) -> list[dict]:
    """Under the lock: read the valid entries, apply ``change``, evict, write the index."""
    with _locked(d):
        entries = _evict(d, change(_read_index(d, warn=False)[0]))
        _write_index(d, entries)
        return entries


def _write_index(d: Path, entries: list[dict]) -> None:
    write_private(d / "index.json", json.dumps(entries, indent=1).encode())


def _evict(d: Path, entries: list[dict]) -> list[dict]:
    """Keep the most recently used entries that fit; delete every other cache file in ``d``
    (state files and stale temporaries by name only: nothing outside ``d`` is touched)."""

    def regular(e: dict) -> os.stat_result | None:
        try:
            st = os.lstat(d / e["file"])
        except OSError:
            return None
        return st if stat.S_ISREG(st.st_mode) else None

    live = [(st, e) for e in entries if (st := regular(e)) is not None]
    live.sort(key=lambda se: se[0].st_mtime, reverse=True)
    kept, total = [], 0
    for st, e in live:
        if len(kept) < MAX_ENTRIES and total + st.st_size <= MAX_BYTES:
            kept.append(e)
            total += st.st_size
    names = {e["file"] for e in kept}
    for p in d.iterdir():
        if p.name not in names and (_STATE_NAME.fullmatch(p.name) or _TMP_NAME.fullmatch(p.name)):
            try:
                os.unlink(p)  # a symlink goes, never what it points to
            except OSError as e:
                log.warning("prompt cache: could not remove %s: %s", p, e)
    return kept


def _digest(path: Path) -> tuple[str, int]:
    """sha256 and size of a regular file, read without following a symlink."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        h, size = hashlib.sha256(), 0
        while chunk := f.read(_CHUNK):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def _intact(path: Path, e: dict) -> bool:
    try:
        sum_, size = _digest(path)
    except OSError as err:
        log.warning("prompt cache: cannot read %s (%s); dropped", path, err)
        return False
    if size != e["bytes"] or sum_ != e["sum"]:
        log.warning("prompt cache: %s does not match its checksum; dropped", path)
        return False
    return True


# ---- restore and store ---------------------------------------------------------------------


def restore(target, prompt: Sequence[int], model_key: str, have: int = 0) -> int:
    """Load the longest saved prefix of ``prompt`` if it beats ``have``; positions cached."""
    if not isinstance(target, StatefulCache):
        return have
    try:
        return _restore(target, prompt, model_key, have)
    except Exception as e:  # a cache can only help: never fail the rewrite over it
        log.warning("prompt cache: %s; prefilling from scratch", e)
        target.rollback(0)
        return 0


def _restore(target, prompt: Sequence[int], model_key: str, have: int) -> int:
    d = _open_dir(create=False)
    if d is None:
        return have
    entries, dropped = _read_index(d)
    candidates = sorted(
        (
            e
            for e in entries
            if e["model"] == model_key
            and have < e["n"] < len(prompt)
            and _sha(model_key, prompt[: e["n"]]) == e["sha"]
        ),
        key=lambda e: e["n"],
        reverse=True,
    )
    bad: set[str] = set()
    got = have
    for e in candidates:
        path = d / e["file"]
        if not _intact(path, e):
            bad.add(e["sha"])
            continue
        t = time.perf_counter()
        try:
            toks = target.load_state(path, max_tokens=e["n"])
        except Exception as err:
            log.warning("prompt cache: could not load %s: %s", path, err)
            toks = []
        if not toks or toks != list(prompt[: len(toks)]):
            log.warning("prompt cache: %s does not hold this prompt; dropped", path)
            bad.add(e["sha"])
            target.rollback(0)
            got = 0
            break
        took = time.perf_counter() - t
        log.info("prompt cache: %d tokens from %s in %.3f s", len(toks), path.name, took)
        with contextlib.suppress(OSError):
            os.utime(path)  # most recently used
        got = len(toks)
        break
    if bad or dropped:
        try:
            _update(d, lambda es: [e for e in es if e["sha"] not in bad])
        except OSError as err:
            log.warning("prompt cache: could not rewrite the index: %s", err)
    return got


def store(target, prompt: Sequence[int], keep: int, model_key: str) -> Path | None:
    """Save the target's first ``keep`` cached positions (which must be ``prompt[:keep]``)."""
    if not isinstance(target, StatefulCache) or keep < MIN_TOKENS:
        return None
    cached = target.cache_tokens
    if len(cached) < keep or list(cached[:keep]) != list(prompt[:keep]):
        return None
    sha = _sha(model_key, prompt[:keep])
    d = _open_dir(create=True)
    if d is None:
        return None
    path = d / f"{sha[:32]}.kv"
    tmp = path.with_suffix(".tmp")
    try:
        with _locked(d):
            entries, dropped = _read_index(d)
            if any(e["sha"] == sha for e in entries):
                if dropped:
                    _write_index(d, _evict(d, entries))
                return None
            target.rollback(keep)
            tmp.unlink(missing_ok=True)
            create_private(tmp)
            target.save_state(tmp)
            make_private(tmp)
            sum_, size = _digest(tmp)
            os.replace(tmp, path)  # a half-written state file never looks complete
            new = {"file": path.name, "model": model_key, "n": keep, "sha": sha}
            new.update(bytes=size, sum=sum_)
            _write_index(d, _evict(d, [*entries, new]))
        return path
    except Exception as e:
        log.warning("prompt cache: could not save: %s", e)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return None
