"""One metrics object for a generation: the single source for every display.

The decode loop calls ``observe_prefill``, ``observe_step`` and ``time`` (wall time under draft /
verify / sample). The TUI status bar, the server's progress, ``--json`` and the benchmarks read
``snapshot()`` (the full record) or ``progress()`` (the socket protocol's names); nothing else
computes these figures. Definitions:
  * acceptance rate = accepted / drafted; tokens per target call = tokens emitted by decode calls
    / decode target calls (1 for plain decoding); per-position acceptance likewise at position i;
  * *model tokens* (what the target decoded) = ``generated_tokens`` (kept) + ``dropped_tokens``
    (replaced by the caller's text). Every tok/s counts model tokens only; ``inserted_tokens``
    (text the caller wrote with no target call) are reported beside the rate, never in it;
  * decode tok/s = model tokens after the first / seconds after the first token (``recent_tps``:
    the same over a window); e2e tok/s = model tokens / (prefill + decode seconds);
  * the *reading* phase is the prefill (``read_tokens`` of ``read_total`` at ``read_tps``).
A request in stages keeps one object: ``restart()`` starts a stage, ``add(earlier)`` sums them.
"""

from __future__ import annotations

import copy
import time
from collections import Counter, deque
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any


class StopReason(StrEnum):
    """Why a generation ended (``Metrics.stop_reason``; the value is the wire's)."""

    NONE = ""
    """Still running, or never started."""
    EOS = "eos"
    """The model ended its answer."""
    MAX_TOKENS = "max_tokens"
    CONTEXT_FULL = "context_full"
    STOP = "stop"
    """The caller's token callback asked to stop."""
    CANCELLED = "cancelled"
    QUOTE_INSERTED = "quote_inserted"
    """The caller ended it after writing text of its own in place of the model's."""

    @property
    def at_limit(self) -> bool:
        """Cut by a limit (the output's or the context's), not ended by the model."""
        return self in (StopReason.MAX_TOKENS, StopReason.CONTEXT_FULL)


@dataclass
class Metrics:
    """Counters and timers of one generation (mutable, owned by the decode loop)."""

    prompt_tokens: int = 0
    generated_tokens: int = 0
    inserted_tokens: int = 0
    """Output tokens the caller wrote itself, with no target call: in no rate (module
    docstring)."""
    dropped_tokens: int = 0
    """Tokens the target decoded that the output does not keep (text the caller wrote took
    their place): model tokens, counted in the rates."""
    target_calls: int = 0
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    emitted_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens whose KV entries were already cached (not prefilled)."""
    prefill_s: float = 0.0
    decode_s: float = 0.0
    draft_s: float = 0.0
    verify_s: float = 0.0
    sample_s: float = 0.0
    read_total: int = 0
    """Prompt tokens this run has to evaluate (the prompt less what was cached)."""
    read_tokens: int = 0
    """Of those, how many are evaluated so far (the prefill advances in chunks)."""
    exact: bool = True
    speculation: bool = True
    k: int = 0
    stop_reason: StopReason = StopReason.NONE
    off_reason: str = ""
    backend: str = ""
    """The target's backend (``llama.cpp``, ``torch``)."""
    device: str = ""
    """Where the target runs (``CPU``, ``CUDA0 ...``)."""
    verifier: str = ""
    """Which verifier judged the drafts (``numpy``, ``triton``, ``torch``)."""
    drafted_at: list[int] = field(default_factory=list)
    accepted_at: list[int] = field(default_factory=list)
    by_source: Counter = field(default_factory=Counter)
    accepted_by_source: Counter = field(default_factory=Counter)
    steps_by_source: Counter = field(default_factory=Counter)
    recent: deque = field(default_factory=lambda: deque(maxlen=64))
    decode_start: float | None = None
    """perf_counter() when the first token came out (the generating phase began)."""
    _t0: float = field(default_factory=time.perf_counter)

    @contextmanager
    def time(self, what: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            setattr(self, f"{what}_s", getattr(self, f"{what}_s") + time.perf_counter() - t)

    def observe_prefill(self, n_tokens: int, seconds: float) -> None:
        """Book ``n_tokens`` of prompt evaluated in ``seconds`` (one chunk of the prefill)."""
        self.prompt_tokens += n_tokens
        self.read_tokens += n_tokens
        self.prefill_s += seconds

    def start_decoding(self) -> None:
        """The first token is out: the generating phase begins (decode time counts from here)."""
        self.decode_start = time.perf_counter()

    def observe_step(self, drafted: int, accepted: int, emitted: int, source: str = "") -> None:
        """Book one target call: ``drafted`` sent, ``accepted`` kept, ``emitted`` new tokens.

        ``generated_tokens`` is set by the decode loop (EOS and limits trim it).
        """
        self.target_calls += 1
        self.drafted_tokens += drafted
        self.accepted_tokens += accepted
        self.emitted_tokens += emitted
        while len(self.drafted_at) < drafted:
            self.drafted_at.append(0)
            self.accepted_at.append(0)
        for i in range(drafted):
            self.drafted_at[i] += 1
            if i < accepted:
                self.accepted_at[i] += 1
        if drafted:
            src = source or "draft"
            self.by_source[src] += drafted
            self.accepted_by_source[src] += accepted
            self.steps_by_source[src] += 1
        self.recent.append((time.perf_counter(), emitted))

    _SUMMED = (
        "prompt_tokens",
        "generated_tokens",
        "inserted_tokens",
        "dropped_tokens",
        "target_calls",
        "drafted_tokens",
        "accepted_tokens",
        "emitted_tokens",
        "cached_tokens",
        "prefill_s",
        "decode_s",
        "draft_s",
        "verify_s",
        "sample_s",
    )

    def restart(self) -> Metrics:
        """A copy of this stage's figures; this object starts afresh for the next stage."""
        done = copy.deepcopy(self)
        fresh = type(self)()
        for f in fields(self):
            if f.name != "_t0":
                setattr(self, f.name, getattr(fresh, f.name))
        return done

    def add(self, earlier: Metrics) -> None:
        """Count an earlier stage of the same request in these figures (module docstring)."""
        for name in self._SUMMED:
            setattr(self, name, getattr(self, name) + getattr(earlier, name))
        n = max(len(self.drafted_at), len(earlier.drafted_at))
        for mine, theirs in (
            (self.drafted_at, earlier.drafted_at),
            (self.accepted_at, earlier.accepted_at),
        ):
            mine.extend([0] * (n - len(mine)))
            for i, v in enumerate(theirs):
                mine[i] += v
        self.by_source.update(earlier.by_source)
        self.accepted_by_source.update(earlier.accepted_by_source)
        self.steps_by_source.update(earlier.steps_by_source)
        self.exact = self.exact and earlier.exact

    @property
    def acceptance(self) -> float:
        return self.accepted_tokens / self.drafted_tokens if self.drafted_tokens else 0.0

    @property
    def tokens_per_call(self) -> float:
        return self.emitted_tokens / self.target_calls if self.target_calls else 0.0

    @property
    def model_tokens(self) -> int:
        """The tokens the target decoded, kept or dropped (module docstring)."""
        return self.generated_tokens + self.dropped_tokens

    @property
    def decode_tps(self) -> float:
        """Model tokens after the first / seconds after the first token (module docstring)."""
        n = self.model_tokens - 1
        return n / self.decode_s if n > 0 and self.decode_s > 0 else 0.0

    @property
    def e2e_tps(self) -> float:
        """Model tokens over prefill plus decode time (module docstring)."""
        total = self.prefill_s + self.decode_s
        return self.model_tokens / total if total > 0 else 0.0

    @property
    def prefill_tps(self) -> float:
        return self.prompt_tokens / self.prefill_s if self.prefill_s > 0 else 0.0

    read_tps = prefill_tps

    @property
    def phase(self) -> str:
        """``reading`` (the prompt) until the first token, then ``generating``."""
        return "generating" if self.decode_start is not None else "reading"

    def recent_tps(self, window_s: float = 2.0) -> float:
        """The decode rate over the last ``window_s`` seconds (for live displays).

        Tokens emitted inside the window over the window's length, where the window
        never reaches back before the first token: a burst of accepted tokens is
        spread over the time it took, never over the gap between two calls.
        """
        if self.decode_start is None:
            return 0.0
        now = time.perf_counter()
        t0 = max(now - window_s, self.decode_start)
        span = now - t0
        n = sum(k for t, k in list(self.recent) if t > t0)
        return n / span if span > 0.05 else self.decode_tps

    def progress(self) -> dict[str, Any]:
        """The live figures under the socket protocol's names (``rewrite/progress``)."""
        return {
            "phase": self.phase,
            "promptTokens": self.read_total,
            "readTokens": self.read_tokens,
            "readTokPerSec": round(self.read_tps, 2),
            "generatedTokens": self.generated_tokens,
            "tokPerSec": round(self.recent_tps(), 2),
            "acceptance": round(self.acceptance, 4),
            "tokensPerStep": round(self.tokens_per_call, 3),
            "backend": self.backend,
            "device": self.device,
            "verifier": self.verifier,
        }

    def snapshot(self) -> dict[str, Any]:
        """Plain-JSON view of every figure; what all displays read."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "generated_tokens": self.generated_tokens,
            "inserted_tokens": self.inserted_tokens,
            "dropped_tokens": self.dropped_tokens,
            "model_tokens": self.model_tokens,
            "target_calls": self.target_calls,
            "drafted_tokens": self.drafted_tokens,
            "accepted_tokens": self.accepted_tokens,
            "acceptance": round(self.acceptance, 4),
            "tokens_per_call": round(self.tokens_per_call, 3),
            "acceptance_by_position": [
                round(a / d, 4) if d else 0.0
                for a, d in zip(self.accepted_at, self.drafted_at, strict=True)
            ],
            "acceptance_by_source": {
                s: round(self.accepted_by_source[s] / n, 4) for s, n in self.by_source.items() if n
            },
            "drafted_by_source": dict(self.by_source),
            "steps_by_source": dict(self.steps_by_source),
            "cached_tokens": self.cached_tokens,
            "prefill_tps": round(self.prefill_tps, 2),
            "decode_tps": round(self.decode_tps, 2),
            "e2e_tps": round(self.e2e_tps, 2),
            "prefill_s": round(self.prefill_s, 4),
            "decode_s": round(self.decode_s, 4),
            "time_split_s": {
                "draft": round(self.draft_s, 4),
                "verify": round(self.verify_s, 4),
                "sample": round(self.sample_s, 4),
            },
            "exact": self.exact,
            "speculation": self.speculation,
            "backend": self.backend,
            "device": self.device,
            "verifier": self.verifier,
            "k": self.k,
            "off_reason": self.off_reason,
            "stop_reason": self.stop_reason,
        }
