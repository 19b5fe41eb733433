"""The ``TargetModel`` protocol every backend implements, and streaming detokenization.

Contract of a backend (llama.cpp, torch, or a test model):
  * ``eval(tokens, pos, want)`` appends ``tokens`` to the KV cache at positions
    ``pos .. pos+len(tokens)-1`` (everything at ``>= pos`` is dropped first) and
    returns logits ``[len(want), n_vocab]`` for the block offsets in ``want``
    only. The array may be a view into backend memory that is valid until the
    next ``eval``/``rollback``; copy it to keep it.
  * ``rollback(pos)`` drops cache entries at positions ``>= pos``.
  * ``tokenize(text, special)`` and ``detokenize(tokens) -> bytes``.
  * ``chat_prompt(messages)`` renders the model's chat template and returns the
    prompt text ending where the assistant's reply starts.

``StreamDecoder`` turns a growing token stream into text without ever emitting a
broken UTF-8 sequence across token boundaries.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


class ModelError(RuntimeError):
    """A model could not be found, read or loaded. The message is user-facing."""


@runtime_checkable
class TargetModel(Protocol):
    name: str
    n_vocab: int
    n_ctx: int
    eos_ids: frozenset[int]
    backend: str

    def eval(self, tokens: Sequence[int], pos: int, want: Sequence[int]) -> np.ndarray: ...

    def rollback(self, pos: int) -> None: ...

    def tokenize(self, text: str, special: bool = False) -> list[int]: ...

    def detokenize(self, tokens: Sequence[int]) -> bytes: ...

    def chat_prompt(self, messages: list[dict[str, str]]) -> str: ...


class StreamDecoder:
    """Incremental detokenizer: feed token ids, get complete UTF-8 text back."""

    def __init__(self, model: TargetModel) -> None:
        self._model = model
        self._dec = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, tokens: Sequence[int]) -> str:
        if not tokens:
            return ""
        return self._dec.decode(self._model.detokenize(tokens))

    def flush(self) -> str:
        return self._dec.decode(b"", final=True)
