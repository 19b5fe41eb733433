"""A GGUF's tokenizer and chat template without its weights: the local half of a remote target.

Contract: :class:`VocabTarget` is a ``TargetModel`` (``engine.backend``) that tokenizes,
detokenizes and renders chat prompts as the model would (llama.cpp loaded with
``vocab_only``), and whose ``eval`` refuses with a ``ModelError``: every prompt of a run on
a remote engine (``app.runtime.remote_engine``) is built and measured as a local run's, and the
model reads it on the server.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..engine.backend import ModelError


class VocabTarget:
    """A GGUF's tokenizer and chat template, without its weights: the local half of a
    remote target (``TargetModel`` whose ``eval`` refuses)."""

    backend = "remote"

    def __init__(self, path: Path, *, n_ctx: int, name: str, device: str) -> None:
        import llama_cpp

        from .gguf_meta import read_metadata

        self.info = read_metadata(path)
        self.path, self.name, self.device_name = path, name, device
        try:
            self._llama = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        except Exception as e:
            raise ModelError(f"llama.cpp could not read the tokenizer of {path}: {e}") from e
        self.n_vocab = self._llama.n_vocab()
        self.n_ctx = min(n_ctx, self.info.context_length or n_ctx)
        self.eos_ids = frozenset(
            int(t)
            for t in (*self.info.eos_ids, self._llama.token_eos())
            if t is not None and t >= 0
        )
        self.add_bos = self._llama.metadata.get("tokenizer.ggml.add_bos_token", "false") == "true"

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return self._llama.detokenize(list(tokens))

    def text_of(self, tokens: Sequence[int]) -> str:
        """The prompt's text, special tokens spelled out (the server parses them back)."""
        return self._llama.detokenize(list(tokens), special=True).decode("utf-8", "replace")

    def chat_prompt(self, messages: list[dict[str, str]]) -> str:
        from .chat import render_chat

        bos = self.text_of([self._llama.token_bos()]) if self.add_bos else ""
        return render_chat(self.info.chat_template, messages, bos)

    def eval(self, tokens: Sequence[int], pos: int, want: Sequence[int]) -> np.ndarray:
        raise ModelError("the model runs on a remote engine: it reads prompts there")

    def rollback(self, pos: int) -> None:
        pass

    def describe(self) -> dict:
        return {"device": self.device_name, "engine": self.device_name}

    def close(self) -> None:
        self._llama.close()
