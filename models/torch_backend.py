"""Torch / transformers target backend: the GPU path, and a CPU reference for it.

Contract: ``TorchTarget`` implements ``engine.backend.TargetModel``, ``PrefixCache`` and
``DeviceTarget`` (the device verifier's and the device drafter's API).
  * ``from_gguf_or_dir(path, device=, quant=)`` loads a transformers checkpoint directory or a
    GGUF (dequantized by transformers; needs ``gguf`` and ``accelerate``); nothing is downloaded.
    A converted GGUF is cached under ``<models dir>/torch/`` unless ``cache=False``.
  * bf16 (fp16 where unsupported) on CUDA, fp32 on CPU; ``device=None`` is CUDA when present.
    ``quant`` (``models.quant``): ``None`` is the nearest to the GGUF on CUDA, none on the CPU.
  * KV cache: ``models.torch_static`` with CUDA graphs on CUDA for llama/qwen2, else a
    ``DynamicCache``; ``eval`` below the cached length drops the stale tail, past it is refused.
  * ``upload(tokens)`` reuses a device buffer; ``eval_ids(ids, pos, tokens=None,
    last_only=False)`` leaves logits in the model's dtype on the device; ``readback`` syncs once;
    ``eval`` returns float32 numpy rows (zero-copy on CPU). ``special=False`` tokenizes
    special-token text as plain text; ``detokenize`` returns raw bytes (special tokens: nothing).
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
        n_ctx: int,
        n_batch: int = 512,
        chat_template: str | None = None,
        eos_ids: Sequence[int] = (),
        quant: str = "none",
        static: bool | None = None,
        graphs: bool | None = None,
        verifier: str = "",
    ) -> None:
        from .quant import quantize, weight_bytes
        from .torch_static import StaticLM, supports

        self.model = model.eval()
        self.name = name
        self.verifier = verifier  # engine.backend.DeviceTarget.verifier
        p = next(model.parameters())
        self.device, self.dtype = p.device, p.dtype
        self.device_name = _device_name(self.device)
        self.n_vocab = int(model.get_output_embeddings().weight.shape[0])
        max_pos = getattr(model.config, "max_position_embeddings", None) or n_ctx
        self.n_ctx = min(n_ctx, int(max_pos))
        self.n_batch = n_batch
        self.quant = quant
        quantize(model, quant)
        self.weight_bytes = weight_bytes(model)
        ok, why = supports(model)
        if static is None:
            static = ok and self.device.type == "cuda"
            if self.device.type == "cuda" and not ok:
                log.warning("%s: dynamic KV cache, no CUDA graphs: %s", name, why)
        self._static = StaticLM(model, self.n_ctx, graphs=graphs) if static else None
        self._positions = torch.arange(self.n_ctx, device=self.device)
        params = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self._stage: torch.Tensor | None = None  # pinned host staging of token ids
        self._ids: torch.Tensor | None = None  # their device copy
        self._out: torch.Tensor | None = None  # pinned host buffer for read-backs
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
        log.info("torch target %s: %s", name, self.describe())

    # ---- loading -----------------------------------------------------------------
    @classmethod
    def from_gguf_or_dir(
        cls,
        path: str | Path,
        *,
        n_ctx: int,
        name: str | None = None,
        device: str | torch.device | None = None,
        dtype: torch.dtype | None = None,
        n_threads: int | None = None,
        quant: str | None = None,
        static: bool | None = None,
        graphs: bool | None = None,
        verifier: str = "",
        cache: bool = True,
    ) -> TorchTarget:
        """Load a checkpoint directory or a GGUF file onto ``device``, quantized per ``quant``
        (``"int4"|"int8"|"none"``; None: on CUDA the nearest option to the GGUF's own type,
        on the CPU none). ``cache``: keep a converted GGUF under ``<models dir>/torch/``;
        ``verifier`` forces the verifier of this target (``DeviceTarget.verifier``)."""
        from .quant import resolve_quant

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:
            raise ModelError(f"the torch backend needs transformers: {e}") from e
        path = Path(path).expanduser()
        try:
            dev = torch.device(device) if device is not None else default_device()
        except RuntimeError as e:
            raise ModelError(f"unknown torch device {device!r}: {e}") from e
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ModelError(f"device {dev} requested but torch sees no CUDA device")
        dt = dtype or default_dtype(dev)
        if n_threads and dev.type == "cpu":
            torch.set_num_threads(n_threads)
        template, eos, src, kw = None, (), path, {}
        if path.is_file():
            from .gguf_meta import read_metadata

            info = read_metadata(path)
            template, eos = info.chat_template, info.eos_ids
            name = name or info.name or path.stem
            src, kw = (_converted_dir(path, dt) if cache else None), {}
            if src is None:
                src, kw = path.parent, {"gguf_file": path.name}
        elif not path.is_dir():
            raise ModelError(f"model not found: {path}")
        try:
            # the CPU path is the unquantized reference unless asked otherwise
            mode = resolve_quant(quant, path if path.is_file() and dev.type == "cuda" else None)
        except ValueError as e:
            raise ModelError(str(e)) from e
        try:
            tok = AutoTokenizer.from_pretrained(src, local_files_only=True, **kw)
            model = AutoModelForCausalLM.from_pretrained(
                src, dtype=dt, local_files_only=True, low_cpu_mem_usage=True, **kw
            ).to(dev)
        except (OSError, ValueError, RuntimeError, KeyError) as e:
            raise ModelError(f"transformers could not load {path}: {e}") from e
        if kw.get("gguf_file") and cache:
            _save_converted(path, dt, model, tok)
        return cls(
            model,
            tok,
            name=name or path.name,
            n_ctx=n_ctx,
            chat_template=template,
            eos_ids=eos,
            quant=mode,
            static=static,
            graphs=graphs,
            verifier=verifier,
        )

    # ---- what it takes -------------------------------------------------------------
    @property
    def kv_bytes(self) -> int:
        """Bytes of the preallocated static KV cache (0 for the dynamic cache, which grows)."""
        return self._static.kv_bytes if self._static is not None else 0

    def describe(self) -> dict[str, Any]:
        """Device, dtype, quantization, cache kind and memory, for stats and ``doctor``."""
        st = self._static
        return {
            "device": str(self.device),
            "dtype": str(self.dtype).removeprefix("torch."),
            "quant": self.quant,
            "kv_cache": "static" if st is not None else "dynamic",
            "cuda_graphs": bool(st is not None and st.graphs),
            "weights_mib": round(self.weight_bytes / 2**20, 1),
            "kv_cache_mib": round(self.kv_bytes / 2**20, 1),
        }

    # ---- TargetModel -------------------------------------------------------------
    def _new_cache(self) -> None:
        self._cache = None
        if self._static is None:
            from transformers import DynamicCache

            try:
                self._cache = DynamicCache(config=self.model.config)
            except TypeError:  # older transformers
                self._cache = DynamicCache()
        self.n_past = 0
        self.cache_tokens: list[int] = []  # known token ids in the KV cache, by position

    def rollback(self, pos: int) -> None:
        if pos <= 0:
            self._new_cache()
            return
        if self._cache is not None:
            have = self._cache.get_seq_length()
            if have > pos:
                self._cache.crop(pos - have)  # a negative count removes that many entries
        self.n_past = min(self.n_past, pos)
        del self.cache_tokens[pos:]

    def upload(self, tokens: Sequence[int]) -> torch.Tensor:
        """Token ids as a device int64 tensor (a view of a reused buffer, valid until the next
        ``upload``), copied from a pinned host buffer without blocking."""
        n = len(tokens)
        if self._stage is None or self._stage.shape[0] < n:
            size = max(n, 256)
            pin = self.device.type == "cuda"
            self._stage = torch.empty(size, dtype=torch.long, pin_memory=pin)
            self._ids = torch.empty(size, dtype=torch.long, device=self.device)
        elif self.device.type == "cuda" and not self._upload_done.query():
            self._upload_done.synchronize()  # the last copy out of the staging buffer is due
        self._stage.numpy()[:n] = tokens
        ids = self._ids[:n]
        ids.copy_(self._stage[:n], non_blocking=True)
        if self.device.type == "cuda":
            self._upload_done = torch.cuda.Event()
            self._upload_done.record()
        return ids

    def readback(self, t: torch.Tensor) -> np.ndarray:
        """A small device tensor's values on the host: one copy, one sync."""
        if t.device.type != "cuda":
            return t.numpy().copy()
        n = t.numel()
        if self._out is None or self._out.numel() < n:
            self._out = torch.empty(max(n, 256), dtype=torch.long, pin_memory=True)
        host = self._out[:n]
        host.copy_(t.reshape(-1), non_blocking=True)
        torch.cuda.current_stream(self.device).synchronize()
        return host.numpy().copy()

    def synchronize(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    @torch.inference_mode()
    def eval_ids(
        self,
        ids: torch.Tensor,
        pos: int,
        tokens: Sequence[int] | None = None,
        last_only: bool = False,
    ) -> torch.Tensor:
        """Logits of device ids ``[b]`` at ``pos``: ``[b, V]`` (``[1, V]`` with ``last_only``),
        in the model's dtype, on the device. ``tokens`` (their host values) keep
        ``cache_tokens`` complete; without them the known prefix ends at ``pos``."""
        n = int(ids.shape[0])
        if n == 0:
            raise ValueError("eval of an empty block")
        if pos + n > self.n_ctx:
            raise ModelError(f"context full: {pos + n} > {self.n_ctx} tokens")
        if pos > self.n_past:
            raise ValueError(f"eval at {pos} leaves a gap after the {self.n_past} cached tokens")
        if pos < self.n_past:
            self.rollback(pos)
        rows: list[torch.Tensor] = []
        for s in range(0, n, self.n_batch):
            e = min(n, s + self.n_batch)
            if self._static is not None:
                out = self._static.logits(ids[s:e], pos + s, last_only=last_only)
            else:
                out = self._dynamic(ids[s:e], pos + s, last_only)
            if not last_only or e == n:  # an earlier chunk's last row is not wanted
                rows.append(out)
        self.n_past = pos + n
        del self.cache_tokens[pos:]
        if tokens is not None and len(self.cache_tokens) == pos:
            self.cache_tokens.extend(int(t) for t in tokens)
        return rows[0] if len(rows) == 1 else torch.cat(rows)

    def _dynamic(self, ids: torch.Tensor, pos: int, last_only: bool) -> torch.Tensor:
        b = ids.shape[0]
        out = self.model.model(
            input_ids=ids[None],
            position_ids=self._positions[pos : pos + b][None],
            use_cache=True,
            **{self._cache_kw: self._cache},
        )
        h = out.last_hidden_state[0]
        return self.model.lm_head(h[-1:] if last_only else h)

    def eval_device(self, tokens: Sequence[int], pos: int, want: Sequence[int]) -> torch.Tensor:
        """``eval`` with the logits left on the model's device: float32 ``[len(want), V]``."""
        want = [int(w) for w in want]
        n = len(tokens)
        last_only = not want or want == [n - 1]
        logits = self.eval_ids(self.upload(tokens), pos, tokens, last_only=last_only)
        if not want:
            return logits[:0].float()
        if last_only:
            return logits.float()
        lo = want[0]
        if want == list(range(lo, lo + len(want))):
            return logits[lo : lo + len(want)].float()  # a slice: no index tensor
        return logits[want].float()

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
def _converted_path(gguf: Path, dtype: torch.dtype) -> Path:
    from .catalog import models_dir

    root = models_dir() / "torch"
    st = gguf.stat()
    tag = str(dtype).removeprefix("torch.")
    return root / f"{gguf.stem}-{st.st_size}-{int(st.st_mtime)}-{tag}"


def _converted_dir(gguf: Path, dtype: torch.dtype) -> Path | None:
    d = _converted_path(gguf, dtype)
    if (d / "complete").exists():
        log.info("loading converted %s from %s", gguf.name, d)
        return d
    return None


def _save_converted(gguf: Path, dtype: torch.dtype, model: Any, tok: Any) -> None:
    d = _converted_path(gguf, dtype)
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
        log.info(
            "saved the converted %s to %s (SPECEDIT_TORCH_CACHE=0 or cache=False to skip)",
            gguf.name,
            d,
        )
    except (OSError, ValueError, RuntimeError) as e:  # a cache is optional
        log.warning("could not save the converted model to %s: %s", d, e)
