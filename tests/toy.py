"""A tiny deterministic ``TargetModel`` for fast engine tests (numpy, no weights).

Logits at a position depend only on the tokens up to it: a hashed bigram term
plus an induction term that favours the token which followed the most recent
earlier occurrence of the last two tokens. So it copies like a real LM does,
prompt lookup has something to find, and results are batch-invariant unless
``inexact_from`` asks for llama.cpp-like drift on blocks of that size or more.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class ToyModel:
    backend = "toy"
    device_name = "CPU"

    def __init__(
        self,
        vocab: int = 64,
        *,
        seed: int = 0,
        eos: int | None = None,
        n_ctx: int = 4096,
        copy_bonus: float = 8.0,
        inexact_from: int | None = None,
    ) -> None:
        self.name = "toy"
        self.n_vocab = vocab
        self.n_ctx = n_ctx
        self.eos_ids = frozenset() if eos is None else frozenset({eos})
        self.seed = seed
        self.copy_bonus = copy_bonus
        self.inexact_from = inexact_from
        self.toks: list[int] = []
        self.calls: list[int] = []  # block sizes evaluated

    def _row(self, upto: int) -> np.ndarray:
        ctx = self.toks[: upto + 1]
        a = ctx[-2] if len(ctx) >= 2 else -1
        b = ctx[-1]
        rng = np.random.default_rng((self.seed * 1_000_003 + (a + 7) * 7919 + b) & 0xFFFFFFFF)
        row = rng.normal(0.0, 1.5, self.n_vocab)
        for i in range(len(ctx) - 2, 0, -1):  # induction: copy what followed (a, b) before
            if ctx[i - 1] == a and ctx[i] == b:
                row[ctx[i + 1]] += self.copy_bonus
                break
        return row.astype(np.float32)

    def eval(self, tokens: Sequence[int], pos: int, want: Sequence[int]) -> np.ndarray:
        assert 0 <= pos <= len(self.toks), (pos, len(self.toks))
        self.toks = self.toks[:pos] + [int(t) for t in tokens]
        self.calls.append(len(tokens))
        rows = np.stack([self._row(pos + w) for w in want]) if len(want) else np.empty((0, 1))
        if self.inexact_from is not None and len(tokens) >= self.inexact_from:
            rows = rows + np.float32(0.75) * np.sin(np.arange(self.n_vocab, dtype=np.float32))
        return rows

    def rollback(self, pos: int) -> None:
        self.toks = self.toks[:pos]

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return [b % self.n_vocab for b in text.encode()]

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return bytes(int(t) % 256 for t in tokens)

    def chat_prompt(self, messages: list[dict[str, str]]) -> str:
        return "".join(m["content"] for m in messages)
