"""A ``TargetModel`` that writes scripted answers: for testing what the app does with them.

Tokens are bytes (256 is EOS). The chat template joins the messages and ends with
``\\x01``, so everything after the last ``\\x01`` is the assistant turn: its pre-filled
opening, then what the model wrote. For a prompt whose text contains a rule's key, the
assistant turn is the rule's answer (opening included), then EOS; a prompt no rule knows
gets EOS at once. Rules are tried in order. ``prompts`` records the user text of every
prompt the model was asked to answer, in order (the stages a rewrite ran).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

EOS = 256


class ScriptedModel:
    backend = "scripted"
    device_name = "CPU"

    def __init__(self, rules: Sequence[tuple[str, str]], n_ctx: int = 1 << 16) -> None:
        self.name = "scripted"
        self.n_vocab = 257
        self.n_ctx = n_ctx
        self.eos_ids = frozenset({EOS})
        self.rules = [(k, a.encode()) for k, a in rules]
        self.cache_tokens: list[int] = []
        self.prompts: list[str] = []
        self._started: set[int] = set()

    def _next(self, upto: int) -> int:
        hist = bytes(t for t in self.cache_tokens[: upto + 1] if t < 256)
        prompt, _, turn = hist.rpartition(b"\x01")
        for key, answer in self.rules:
            if key.encode() in prompt:
                if answer.startswith(turn) and len(turn) < len(answer):
                    return answer[len(turn)]
                return EOS
        return EOS

    def eval(self, tokens: Sequence[int], pos: int, want: Sequence[int]) -> np.ndarray:
        assert 0 <= pos <= len(self.cache_tokens)
        self.cache_tokens = self.cache_tokens[:pos] + [int(t) for t in tokens]
        hist = bytes(t for t in self.cache_tokens if t < 256)
        at = hist.rfind(b"\x01")
        if at >= 0 and at not in self._started and len(want) == 1 and len(tokens) > 1:
            self._started.add(at)  # a prefill: a new prompt to answer
            self.prompts.append(hist[:at].decode("utf-8", "replace"))
        rows = np.full((len(want), self.n_vocab), -30.0, dtype=np.float32)
        for r, w in enumerate(want):
            rows[r, self._next(pos + w)] = 30.0
        return rows

    def rollback(self, pos: int) -> None:
        self.cache_tokens = self.cache_tokens[:pos]
        self._started = {a for a in self._started if a < pos}

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return list(text.encode())

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return bytes(int(t) for t in tokens if int(t) < 256)

    def chat_prompt(self, messages: list[dict[str, str]]) -> str:
        return "\x02".join(m["content"] for m in messages) + "\x01"


def scripted_loaded(rules: Sequence[tuple[str, str]], n_ctx: int = 1 << 16):
    """A ``LoadedModel`` around a ``ScriptedModel`` (no files, no calibration)."""
    from specedit.app.runtime.loaded_model import LoadedModel

    return LoadedModel(
        target=ScriptedModel(rules, n_ctx),
        model_name="scripted",
        model_path=Path("scripted"),
        exact_block=1,
        exact_deltas={},
        costs={1: 0.01, 2: 0.011, 4: 0.012, 8: 0.014, 16: 0.018},
        load_s=0.0,
    )
