"""One metrics object for a generation: the single source for every display.

The decode loop calls ``observe_prefill``, ``observe_step`` and ``time`` (a
context manager that books wall time under draft / verify / sample). The TUI
status bar, the socket server's progress notifications, ``--json`` output and
the benchmarks all read ``snapshot()``; nothing else computes these figures.

Definitions:
  * a *target call* is one forward pass of the target over a block;
  * acceptance rate = accepted / drafted (draft tokens kept / draft tokens sent);
  * tokens per target call = tokens emitted by decode calls / decode target
    calls (mean acceptance length: 1 for plain decoding);
  * acceptance per draft position i = accepted at position i / drafted at i.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Metrics:
    """Counters and timers of one generation (mutable, owned by the decode loop)."""

    prompt_tokens: int = 0
    generated_tokens: int = 0
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
    exact: bool = True
    speculation: bool = True
    verifier: str = "numpy"
    """Which verifier judged the logits: numpy (host), triton or torch (on the device)."""
    k: int = 0
    stop_reason: str = ""
    off_reason: str = ""
    drafted_at: list[int] = field(default_factory=list)
    accepted_at: list[int] = field(default_factory=list)
    by_source: Counter = field(default_factory=Counter)
    accepted_by_source: Counter = field(default_factory=Counter)
    recent: deque = field(default_factory=lambda: deque(maxlen=64))
    _t0: float = field(default_factory=time.perf_counter)

    @contextmanager
    def time(self, what: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            setattr(self, f"{what}_s", getattr(self, f"{what}_s") + time.perf_counter() - t)

    def observe_prefill(self, n_tokens: int, seconds: float) -> None:
        self.prompt_tokens += n_tokens
        self.prefill_s += seconds

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
        self.recent.append((time.perf_counter(), emitted))

    @property
    def acceptance(self) -> float:
        return self.accepted_tokens / self.drafted_tokens if self.drafted_tokens else 0.0

    @property
    def tokens_per_call(self) -> float:
        return self.emitted_tokens / self.target_calls if self.target_calls else 0.0

    @property
    def decode_tps(self) -> float:
        return self.generated_tokens / self.decode_s if self.decode_s > 0 else 0.0

    @property
    def prefill_tps(self) -> float:
        return self.prompt_tokens / self.prefill_s if self.prefill_s > 0 else 0.0

    def recent_tps(self, window_s: float = 1.0) -> float:
        """Tokens per second over the last ``window_s`` seconds (for live displays)."""
        now = time.perf_counter()
        pts = [(t, n) for t, n in self.recent if now - t <= window_s]
        if len(pts) < 2:
            return self.decode_tps
        span = pts[-1][0] - pts[0][0]
        return sum(n for _, n in pts[1:]) / span if span > 0 else self.decode_tps

    def snapshot(self) -> dict[str, Any]:
        """Plain-JSON view of every figure; what all displays read."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "generated_tokens": self.generated_tokens,
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
            "cached_tokens": self.cached_tokens,
            "prefill_tps": round(self.prefill_tps, 2),
            "decode_tps": round(self.decode_tps, 2),
            "prefill_s": round(self.prefill_s, 4),
            "decode_s": round(self.decode_s, 4),
            "time_split_s": {
                "draft": round(self.draft_s, 4),
                "verify": round(self.verify_s, 4),
                "sample": round(self.sample_s, 4),
            },
            "exact": self.exact,
            "speculation": self.speculation,
            "verifier": self.verifier,
            "k": self.k,
            "off_reason": self.off_reason,
            "stop_reason": self.stop_reason,
        }
