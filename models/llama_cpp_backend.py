"""llama.cpp target backend through llama-cpp-python's low-level API.

Contract: ``LlamaTarget`` implements ``engine.backend.TargetModel`` and ``StatefulCache``.
  * ``eval`` decodes one ``llama_batch`` (logits flagged only for the requested offsets) after
    removing entries ``>= pos``, and returns a numpy *view* ``[len(want), V]`` of
    ``llama_get_logits``, valid until the next call; ``rollback(pos)`` removes entries ``>= pos``.
  * ``cache_tokens``: the cached ids by position; ``cache_batches``: where each batch of them
    began (``engine.prefill``), empty after ``load_state`` until the caller records it.
  * ``save_state(path)`` / ``load_state(path)``: the cached sequence (KV entries and ids) in
    llama.cpp's sequence state files, for a later process.
  * Metadata comes from ``models.gguf_meta`` before llama.cpp is touched (a bad file is a
    ``ModelError``); the chat template is the GGUF's own, rendered with jinja2.
  * Offload: ``n_gpu_layers`` (0 = CPU, -1 = all, N = the first N) goes to llama.cpp as is
    (``models.llama_build.resolve_gpu_layers`` makes it); ``device_name``, ``gpu_layers``
    (``"25/25"``), ``n_gpu_layers``, ``n_layers``, ``threads`` and ``describe()`` say where.
"""

from __future__ import annotations

import bisect
import ctypes
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..engine.backend import ModelError
from .gguf_meta import read_metadata
from .llama_build import device_label, llama_build, resolve_gpu_layers

__all__ = ["LlamaTarget", "llama_build", "resolve_gpu_layers"]

log = logging.getLogger(__name__)


class LlamaTarget:
    """A GGUF model on llama.cpp, evaluated block by block for speculative decoding."""

    backend = "llama.cpp"

    def __init__(
        self,
        path: str | Path,
        *,
        n_ctx: int,
        n_threads: int | None = None,
        n_batch: int = 512,
        name: str | None = None,
        n_gpu_layers: int = 0,
    ) -> None:
        self.info = read_metadata(Path(path))
        import llama_cpp

        self._lc = llama_cpp
        self.path = Path(path)
        self.name = name or self.info.name or self.path.stem
        threads = n_threads or max(1, os.cpu_count() or 1)
        ctx_len = min(n_ctx, self.info.context_length or n_ctx)
        try:
            self._llama = llama_cpp.Llama(
                model_path=str(self.path),
                n_ctx=ctx_len,
                n_batch=n_batch,
                n_ubatch=n_batch,
                n_threads=threads,
                n_threads_batch=threads,
                n_gpu_layers=n_gpu_layers,
                logits_all=False,
                verbose=False,
            )
        except Exception as e:  # llama.cpp raises ValueError with little detail
            raise ModelError(f"llama.cpp could not load {self.path}: {e}") from e
        self._ctx = self._llama.ctx
        self._model = self._llama.model
        self.threads = threads
        self.n_layers = int(self._lc.llama_model_n_layer(self._model)) + 1  # blocks + output
        build = llama_build()
        offload = self.n_layers if n_gpu_layers < 0 else min(n_gpu_layers, self.n_layers)
        can_offload = build.gpu_offload and (build.gpu_devices or build.device_source != "ggml")
        self.n_gpu_layers = offload if can_offload else 0
        self.gpu_layers = f"{self.n_gpu_layers}/{self.n_layers}"
        self.device_name = device_label(build, self.n_gpu_layers, self.n_layers)
        self._build_label = build.label
        self.n_ctx = self._llama.n_ctx()
        self.n_vocab = self._llama.n_vocab()
        self.n_batch = n_batch
        self.eos_ids = frozenset(
            int(t)
            for t in (*self.info.eos_ids, self._llama.token_eos())
            if t is not None and t >= 0
        )
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self._mem = llama_cpp.llama_get_memory(self._ctx)
        self.n_past = 0
        self.cache_tokens: list[int] = []  # token ids in the KV cache, by position
        self.cache_batches: list[int] = []  # where each batch of those entries began
        self.add_bos = bool(
            self._llama.metadata.get("tokenizer.ggml.add_bos_token", "false") == "true"
        )
        log.info(
            "loaded %s: ctx %d, vocab %d, threads %d, on %s (%s layers offloaded)",
            self.name,
            self.n_ctx,
            self.n_vocab,
            threads,
            self.device_name,
            self.gpu_layers,
        )

    def describe(self) -> dict:
        """Where it runs: device, layers offloaded (of total), threads and the build."""
        return {
            "device": self.device_name,
            "gpu_layers": self.gpu_layers,
            "threads": self.threads,
            "llama_cpp": self._build_label,
        }

    def close(self) -> None:
        if getattr(self, "_batch", None) is not None:
            self._lc.llama_batch_free(self._batch)
            self._batch = None
        if getattr(self, "_llama", None) is not None:
            self._llama.close()
            self._llama = None

    def __del__(self) -> None:  # pragma: no cover
        try:
            self.close()
        except Exception:
            pass

    # ---- TargetModel ------------------------------------------------------------
    def rollback(self, pos: int) -> None:
        self._lc.llama_memory_seq_rm(self._mem, 0, pos, -1)
        self.n_past = min(self.n_past, pos)
        del self.cache_tokens[pos:]
        del self.cache_batches[bisect.bisect_left(self.cache_batches, pos) :]

    def eval(self, tokens: Sequence[int], pos: int, want: Sequence[int]) -> np.ndarray:
        n = len(tokens)
        if n == 0:
            raise ValueError("eval of an empty block")
        if pos + n > self.n_ctx:
            raise ModelError(f"context full: {pos + n} > {self.n_ctx} tokens")
        want = list(want)
        if pos > self.n_past:
            raise ModelError(f"eval at {pos} leaves a gap after the {self.n_past} cached tokens")
        if pos < self.n_past:
            self.rollback(pos)
        b = self._batch
        rows = None
        # long inputs (prefill) go through in n_batch pieces; logits only where asked
        for s in range(0, n, self.n_batch):
            chunk = tokens[s : s + self.n_batch]
            wanted = [w - s for w in want if s <= w < s + len(chunk)]
            flags = set(wanted)
            b.n_tokens = len(chunk)
            for i, t in enumerate(chunk):
                b.token[i] = int(t)
                b.pos[i] = pos + s + i
                b.n_seq_id[i] = 1
                b.seq_id[i][0] = 0
                b.logits[i] = i in flags
            rc = self._lc.llama_decode(self._ctx, b)
            if rc != 0:
                raise ModelError(f"llama_decode failed with status {rc} at position {pos + s}")
            self.n_past = pos + s + len(chunk)
            self.cache_tokens[pos + s :] = [int(t) for t in chunk]
            self.cache_batches.append(pos + s)
            if wanted:
                ptr = self._lc.llama_get_logits(self._ctx)
                view = np.ctypeslib.as_array(ptr, shape=(len(wanted), self.n_vocab))
                rows = view if rows is None else np.concatenate([rows, view])
        if rows is None:
            return np.empty((0, self.n_vocab), dtype=np.float32)
        return rows

    # ---- state files (a prompt cache across processes) ----------------------------
    def save_state(self, path: str | Path) -> int:
        """Write the cached sequence (KV and token ids) to ``path``; returns bytes written."""
        n = len(self.cache_tokens)
        arr = (self._lc.llama_token * max(n, 1))(*self.cache_tokens)
        written = self._lc.llama_state_seq_save_file(self._ctx, str(path).encode(), 0, arr, n)
        if not written:
            raise ModelError(f"llama.cpp could not save its state to {path}")
        return int(written)

    def load_state(self, path: str | Path, max_tokens: int | None = None) -> list[int]:
        """Replace the cache with the sequence saved in ``path``; returns its token ids.

        A file that does not fit (or is not a state file of this model) leaves an
        empty cache and returns ``[]``.
        """
        cap = max_tokens or self.n_ctx
        arr = (self._lc.llama_token * cap)()
        count = ctypes.c_size_t(0)
        self.rollback(0)
        read = self._lc.llama_state_seq_load_file(
            self._ctx, str(path).encode(), 0, arr, cap, ctypes.byref(count)
        )
        if not read or count.value == 0:
            self.rollback(0)
            return []
        toks = [int(t) for t in arr[: count.value]]
        self.cache_tokens = list(toks)
        self.cache_batches = []  # how they were evaluated is the caller's knowledge
        self.n_past = len(toks)
        return toks

    def tokenize(self, text: str, special: bool = False, add_bos: bool = False) -> list[int]:
        return self._llama.tokenize(text.encode("utf-8"), add_bos=add_bos, special=special)

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        return self._llama.detokenize(list(tokens))

    def chat_prompt(self, messages: list[dict[str, str]]) -> str:
        from .chat import render_chat

        bos = (
            self.detokenize([self._llama.token_bos()]).decode(errors="ignore")
            if self.add_bos
            else ""
        )
        return render_chat(self.info.chat_template, messages, bos)
