"""Torch / transformers target backend: the GPU path, and a CPU reference for it.

Contract: ``TorchTarget`` implements ``engine.backend.TargetModel`` and ``PrefixCache``.
  * Loads a transformers checkpoint directory, or a GGUF file through
    transformers' GGUF loader (dequantized; needs ``gguf`` and ``accelerate``),
    with ``TorchTarget.from_gguf_or_dir``. Nothing is ever downloaded
    (``local_files_only``). A dequantized GGUF is slow to convert (about 100 s
    for the 0.5B on 2 cores), so the converted checkpoint is saved once under
    ``<models dir>/torch/`` and reloaded from there (``SPECEDIT_TORCH_CACHE=0``
    turns that off).
  * Precision: bf16 (fp16 where bf16 is unsupported) on CUDA, fp32 on CPU.
    ``SPECEDIT_TORCH_DEVICE`` overrides the device.
  * KV cache: one transformers ``DynamicCache``. ``rollback(pos)`` crops it
    (a slice, no recompute); ``eval`` at ``pos`` below the cached length crops
    first, so stale draft entries never leak into a later block; ``eval``
    past it (a gap) is refused. ``cache_tokens`` lists the cached token ids
    by position, for prefix reuse across prompts.
  * ``eval(tokens, pos, want)`` runs one forward pass (in ``n_batch`` chunks
    for long prefills) and projects through ``lm_head`` only the hidden states
    of the requested offsets (``logits_to_keep`` with an index tensor).
    ``eval_device`` returns those rows as a float32 tensor that stays on the
    model's device (for an on-device verifier such as the Triton kernel);
    ``eval`` returns a numpy array: a zero-copy view on CPU, a host copy of
    only the requested rows on CUDA, because the engine's reference verifier
    is numpy.
  * Tokenization uses the model's fast tokenizer; ``special=False`` encodes
    special-token text as plain text (never as control tokens).
    ``detokenize`` returns raw bytes through a per-token byte table, so a
    UTF-8 character split across tokens streams correctly; special tokens
    detokenize to nothing, as in the llama.cpp backend.
  * The chat template is the checkpoint's (the GGUF's for a GGUF), rendered by
    ``models.chat.render_chat`` as in the llama.cpp backend.
  * CUDA graphs are not used: no GPU was available to measure them.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..engine.backend import ModelError

log = logging.getLogger(__name__)

_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def default_device() -> torch.device:
    env = os.environ.get("SPECEDIT_TORCH_DEVICE")
    if env:
        return torch.device(env)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return f"CUDA{device.index or 0} {torch.cuda.get_device_name(device)}"
    return device.type.upper()


def default_dtype(device: torch.device) -> torch.dtype:
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte <-> printable-character map used by byte-level BPE vocabularies."""
    bs = list(range(ord("!"), ord("~") + 1))
    bs += list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs), strict=True))


def byte_table(backend: Any, n_vocab: int) -> list[bytes]:
    """Raw bytes of every token id of a ``tokenizers.Tokenizer`` (specials -> b"")."""
    spec = json.loads(backend.to_str())
    dec = spec.get("decoder") or {}
    kinds = {d.get("type") for d in dec.get("decoders", [dec])}
    byte_level = "ByteLevel" in kinds
    unbyte = {c: b for b, c in _bytes_to_unicode().items()}
    table = [b""] * n_vocab
    for piece, i in backend.get_vocab(with_added_tokens=False).items():
        if i >= n_vocab:
            continue
        m = _BYTE_PIECE.fullmatch(piece)
        if byte_level and all(c in unbyte for c in piece):
            table[i] = bytes(unbyte[c] for c in piece)
        elif m and "ByteFallback" in kinds:
            table[i] = bytes([int(m.group(1), 16)])
        elif "Replace" in kinds or "Metaspace" in kinds:
            table[i] = piece.replace("\u2581", " ").encode("utf-8")
        else:
            table[i] = backend.decode([i], skip_special_tokens=False).encode("utf-8")
    for tok in spec.get("added_tokens", []):
        if tok["id"] < n_vocab:
            table[tok["id"]] = b"" if tok.get("special") else tok["content"].encode("utf-8")
    return table


class TorchTarget:
    """A causal LM on torch, evaluated block by block for speculative decoding."""

    backend = "torch"

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        name: str = "torch-model",
        n_ctx: int = 16384,
        n_batch: int = 512,
        chat_template: str | None = None,
        eos_ids: Sequence[int] = (),
    ) -> None:
        from transformers import DynamicCache

        self.model = model.eval()
        self.name = name
        p = next(model.parameters())
        self.device, self.dtype = p.device, p.dtype
        self.device_name = _device_name(self.device)
        self.n_vocab = int(model.get_output_embeddings().weight.shape[0])
        max_pos = getattr(model.config, "max_position_embeddings", None) or n_ctx
        self.n_ctx = min(n_ctx, int(max_pos))
        self.n_batch = n_batch
        self._cache_cls = DynamicCache
        params = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self._new_cache()
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is None:
            raise ModelError(f"{name}: the torch backend needs a fast (tokenizers) tokenizer")
        self._tok = tokenizer
        self._enc_special = backend
        self._enc_plain = type(backend).from_str(backend.to_str())
        self._enc_plain.encode_special_tokens = True  # special-token text stays text
        self._bytes = byte_table(backend, self.n_vocab)
        self.chat_template = chat_template or getattr(tokenizer, "chat_template", None)
        self.add_bos = bool(getattr(tokenizer, "add_bos_token", False))
        ids = set(int(t) for t in eos_ids)
        gen = getattr(model, "generation_config", None)
        for src in (getattr(gen, "eos_token_id", None), tokenizer.eos_token_id):
            if isinstance(src, int):
                ids.add(src)
            elif src is not None:
                ids.update(int(t) for t in src)
        self.eos_ids = frozenset(t for t in ids if 0 <= t < self.n_vocab)
        log.info(
            "torch target %s: %s %s, ctx %d, vocab %d",
            name,
            self.device,
            self.dtype,
            self.n_ctx,
            self.n_vocab,
        )

    # ---- loading -----------------------------------------------------------------
    @classmethod
    def from_gguf_or_dir(
        cls,
        path: str | Path,
        *,
        n_ctx: int = 16384,
        name: str | None = None,
        device: str | torch.device | None = None,
        dtype: torch.dtype | None = None,
        n_threads: int | None = None,
    ) -> TorchTarget:
        """Load a checkpoint directory or a GGUF file (dequantized) onto ``device``."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:
            raise ModelError(f"the torch backend needs transformers: {e}") from e
        path = Path(path).expanduser()
        dev = torch.device(device) if device is not None else default_device()
        dt = dtype or default_dtype(dev)
        if n_threads and dev.type == "cpu":
            torch.set_num_threads(n_threads)
        template, eos, src, kw = None, (), path, {}
        if path.is_file():
            from .gguf_meta import read_metadata

            info = read_metadata(path)
            template, eos = info.chat_template, info.eos_ids
            name = name or info.name or path.stem
            src, kw = _converted_dir(path, dt), {}
            if src is None:
                src, kw = path.parent, {"gguf_file": path.name}
        elif not path.is_dir():
            raise ModelError(f"model not found: {path}")
        try:
            tok = AutoTokenizer.from_pretrained(src, local_files_only=True, **kw)
            model = AutoModelForCausalLM.from_pretrained(
                src, dtype=dt, local_files_only=True, low_cpu_mem_usage=True, **kw
            ).to(dev)
        except (OSError, ValueError, RuntimeError, KeyError) as e:
            raise ModelError(f"transformers could not load {path}: {e}") from e
        if kw.get("gguf_file"):
            _save_converted(path, dt, model, tok)
        return cls(
            model,
            tok,
            name=name or path.name,
            n_ctx=n_ctx,
            chat_template=template,
            eos_ids=eos,
        )

    # ---- TargetModel -------------------------------------------------------------
    def _new_cache(self) -> None:
        try:
            self._cache = self._cache_cls(config=self.model.config)
        except TypeError:  # older transformers
            self._cache = self._cache_cls()
        self.n_past = 0
        self.cache_tokens: list[int] = []  # token ids in the KV cache, by position

    def rollback(self, pos: int) -> None:
        if pos <= 0:
            self._new_cache()
            return
        have = self._cache.get_seq_length()
        if have > pos:
            self._cache.crop(pos - have)  # a negative count removes that many entries
        self.n_past = min(self.n_past, pos)
        del self.cache_tokens[pos:]

    @torch.inference_mode()
    def eval_device(self, tokens: Sequence[int], pos: int, want: Sequence[int]) -> torch.Tensor:
        """``eval`` with the logits left on the model's device: float32 ``[len(want), V]``."""
        n = len(tokens)
        if n == 0:
            raise ValueError("eval of an empty block")
        if pos + n > self.n_ctx:
            raise ModelError(f"context full: {pos + n} > {self.n_ctx} tokens")
        if pos > self.n_past:
            raise ValueError(f"eval at {pos} leaves a gap after the {self.n_past} cached tokens")
        if pos < self.n_past:
            self.rollback(pos)
        want = [int(w) for w in want]
        ids = torch.as_tensor(np.asarray(tokens, dtype=np.int64), device=self.device)[None]
        rows: list[torch.Tensor] = []
        for s in range(0, n, self.n_batch):
            e = min(n, s + self.n_batch)
            wanted = [w - s for w in want if s <= w < e]
            keep = torch.tensor(wanted, dtype=torch.long, device=self.device) if wanted else 1
            out = self.model(
                input_ids=ids[:, s:e],
                position_ids=torch.arange(pos + s, pos + e, device=self.device)[None],
                use_cache=True,
                logits_to_keep=keep,
                **{self._cache_kw: self._cache},
            )
            self.n_past = pos + e
            self.cache_tokens[pos + s :] = [int(t) for t in tokens[s:e]]
            if wanted:
                rows.append(out.logits[0])
        if not rows:
            return torch.empty((0, self.n_vocab), dtype=torch.float32, device=self.device)
        logits = rows[0] if len(rows) == 1 else torch.cat(rows)
        return logits.float()

    def eval(self, tokens: Sequence[int], pos: int, want: Sequence[int]) -> np.ndarray:
        logits = self.eval_device(tokens, pos, want)
        return logits.numpy() if logits.device.type == "cpu" else logits.cpu().numpy()

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        enc = self._enc_special if special else self._enc_plain
        return enc.encode(text, add_special_tokens=False).ids

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        table = self._bytes
        return b"".join(table[int(t)] for t in tokens)

    def chat_prompt(self, messages: list[dict[str, str]]) -> str:
        from .chat import render_chat

        bos = (self._tok.bos_token or "") if self.add_bos else ""
        return render_chat(self.chat_template, messages, bos)

    def close(self) -> None:
        self._new_cache()


# ---- converted-GGUF cache ----------------------------------------------------------
def _converted_root() -> Path | None:
    if os.environ.get("SPECEDIT_TORCH_CACHE", "1") == "0":
        return None
    from .catalog import models_dir

    return models_dir() / "torch"


def _converted_path(gguf: Path, dtype: torch.dtype) -> Path | None:
    root = _converted_root()
    if root is None:
        return None
    st = gguf.stat()
    tag = str(dtype).removeprefix("torch.")
    return root / f"{gguf.stem}-{st.st_size}-{int(st.st_mtime)}-{tag}"


def _converted_dir(gguf: Path, dtype: torch.dtype) -> Path | None:
    d = _converted_path(gguf, dtype)
    if d is not None and (d / "complete").exists():
        log.info("loading converted %s from %s", gguf.name, d)
        return d
    return None


def _save_converted(gguf: Path, dtype: torch.dtype, model: Any, tok: Any) -> None:
    d = _converted_path(gguf, dtype)
    if d is None:
        return
    try:
        from safetensors.torch import save_model

        d.mkdir(parents=True, exist_ok=True)
        # save_pretrained refuses a GGUF-loaded model; the weights are plain dequantized tensors
        cfg = model.config.to_dict()
        cfg.pop("quantization_config", None)
        (d / "config.json").write_text(json.dumps(cfg, indent=1))
        model.generation_config.save_pretrained(d)
        save_model(model, str(d / "model.safetensors"))
        tok.save_pretrained(d)
        (d / "complete").write_text(str(gguf))
        log.info("saved the converted %s to %s (SPECEDIT_TORCH_CACHE=0 to skip)", gguf.name, d)
    except (OSError, ValueError, RuntimeError) as e:  # a cache is optional
        log.warning("could not save the converted model to %s: %s", d, e)
