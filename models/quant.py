"""Weight-only int8 / int4 quantization of a torch causal LM, kept quantized on the device.

Contract: ``quantize(model, mode, keep_head=None)`` replaces, in place, every ``nn.Linear`` of the
decoder layers with ``Int8Linear`` (``"int8"``: per-output-channel symmetric scales) or
``Int4Linear`` (``"int4"``: groups of 128 along the input, asymmetric, tinygemm layout; a shape
tinygemm cannot take stays int8); ``"none"`` changes nothing. With ``keep_head`` (the default on
CUDA) ``lm_head`` stays in the model's dtype and the embedding becomes an ``Int8Embedding`` unless
tied to the head; without it (the CPU) embedding and head share one int8 table when tied, or get
one each. Activations stay in the model's dtype. The matmuls are PyTorch's weight-only kernels
(``aten._weight_int8pack_mm``, ``_weight_int4pack_mm``, ``_weight_int4pack_mm_for_cpu``); where
an int8 kernel is missing for a device and dtype (probed once per pair) the layer dequantizes.
``resolve_quant(quant, gguf)``: ``"int4"|"int8"|"none"`` win; ``None`` takes the nearest to the
GGUF (Q8_0, Q6_K -> int8; Q5, Q4, Q3, Q2, IQ -> int4; F32/F16/BF16 or a checkpoint dir -> none).
``weight_bytes(model)``: the weights' device memory (shared storages counted once).
"""

from __future__ import annotations

import functools
import logging

import torch
import torch.nn.functional as F
from torch import nn

log = logging.getLogger(__name__)

MODES = ("int4", "int8", "none")
GROUP = 128
"""int4 group size along the input dimension."""
INNER_K_TILES = 8

# GGUF general.file_type (llama.cpp's LlamaFileType) name fragments -> nearest option
_INT8_TYPES = ("Q8_0", "Q6_K")
_NONE_TYPES = ("ALL_F32", "MOSTLY_F16", "MOSTLY_BF16")


def gguf_quant(file_type: int | None) -> str:
    """The nearest weight-only mode to a GGUF ``general.file_type`` (None: unknown -> none)."""
    if file_type is None:
        return "none"
    from gguf import LlamaFileType

    try:
        name = LlamaFileType(int(file_type)).name
    except ValueError:
        return "int4"  # a newer low-bit type
    if name in _NONE_TYPES:
        return "none"
    return "int8" if any(t in name for t in _INT8_TYPES) else "int4"


def gguf_file_type(path) -> int | None:
    """``general.file_type`` of a GGUF file (None when the header has none)."""
    import mmap

    from .gguf_meta import scan_header

    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        value = scan_header(buf).fields.get("general.file_type")
    return int(value) if isinstance(value, int) else None


def resolve_quant(quant: str | None, gguf_path=None) -> str:
    """``quant`` if given, else the nearest option to the GGUF's type, else none."""
    if quant is not None:
        if quant not in MODES:
            raise ValueError(f"quant must be one of {', '.join(MODES)}, not {quant!r}")
        return quant
    return gguf_quant(gguf_file_type(gguf_path)) if gguf_path is not None else "none"


@functools.cache
def _has_int8_kernel(device_type: str, dtype: torch.dtype = torch.float32) -> bool:
    """Whether ``_weight_int8pack_mm`` runs on ``device_type`` for activations of ``dtype``."""
    try:
        x = torch.zeros(1, 16, device=device_type, dtype=dtype)
        torch.ops.aten._weight_int8pack_mm(
            x,
            torch.zeros(8, 16, dtype=torch.int8, device=device_type),
            torch.ones(8, device=device_type, dtype=dtype),
        )
        return True
    except (RuntimeError, NotImplementedError) as e:
        log.info(
            "no int8 weight-only kernel on %s for %s (%s): dequantizing per call",
            device_type,
            dtype,
            str(e).splitlines()[0] if str(e) else type(e).__name__,
        )
        return False


def _int8_rows(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row symmetric int8: (q [N, K] int8, scales [N] in w's dtype)."""
    wf = w.detach().float()
    scales = wf.abs().amax(dim=1).clamp(min=1e-8) / 127.0
    q = torch.round(wf / scales[:, None]).clamp(-128, 127).to(torch.int8)
    return q, scales.to(w.dtype)


class Int8Linear(nn.Module):
    """y = x @ (q * scales).T + bias with q int8 [N, K] and per-output-channel scales."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        q, scales = _int8_rows(linear.weight)
        self.register_buffer("weight", q)
        self.register_buffer("scales", scales)
        self.bias = linear.bias
        self.in_features, self.out_features = linear.in_features, linear.out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return int8_matmul(x, self.weight, self.scales, self.bias)


def int8_matmul(x, q, scales, bias=None) -> torch.Tensor:
    """``x [..., K] @ (q [N, K] * scales [N]).T``, in x's dtype."""
    shape = x.shape
    x2 = x.reshape(-1, shape[-1])
    if _has_int8_kernel(x.device.type, x.dtype):
        y = torch.ops.aten._weight_int8pack_mm(x2.contiguous(), q, scales.to(x.dtype))
    else:
        y = F.linear(x2, q.to(x.dtype)) * scales.to(x.dtype)
    if bias is not None:
        y = y + bias
    return y.reshape(*shape[:-1], q.shape[0])


class Int8Embedding(nn.Module):
    """An int8 [V, H] table with per-token scales: looked up as an embedding, multiplied as
    ``lm_head``; a tied model keeps one copy for both."""

    def __init__(self, weight: torch.Tensor) -> None:
        super().__init__()
        q, scales = _int8_rows(weight)
        self.register_buffer("weight", q)
        self.register_buffer("scales", scales)
        self.dtype = weight.dtype

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.weight[ids].to(self.dtype) * self.scales[ids, None]


class Int8Head(nn.Module):
    """``lm_head`` reading an ``Int8Embedding``'s table (shared, not copied)."""

    def __init__(self, table: Int8Embedding, bias: torch.Tensor | None = None) -> None:
        super().__init__()
        self.table = [table]  # a list: not a submodule, so its buffers are counted once
        self.bias = bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.table[0]
        return int8_matmul(x, t.weight, t.scales, self.bias)


def _int4_ok(linear: nn.Linear) -> bool:
    k, n = linear.in_features, linear.out_features
    return k % GROUP == 0 and k % (INNER_K_TILES * 16) == 0 and n % 8 == 0


class Int4Linear(nn.Module):
    """Groupwise asymmetric int4 (tinygemm layout): w = (q - 8) * scale + zero per group."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        w = linear.weight.detach()
        n, k = w.shape
        g = w.float().reshape(n, k // GROUP, GROUP)
        lo, hi = g.amin(dim=-1, keepdim=True), g.amax(dim=-1, keepdim=True)
        scales = (hi - lo).clamp(min=1e-6) / 15.0
        zeros = lo + scales * 8.0
        q = ((g - lo) / scales).round().clamp(0, 15).to(torch.int32).reshape(n, k)
        sz = torch.cat([scales, zeros], dim=-1)  # [N, K/G, 2]
        self.register_buffer("scales_and_zeros", sz.transpose(0, 1).contiguous().to(w.dtype))
        if w.device.type == "cuda":
            packed = (q[:, ::2] << 4 | q[:, 1::2]).to(torch.uint8)
            self.register_buffer(
                "weight", torch.ops.aten._convert_weight_to_int4pack(packed, INNER_K_TILES)
            )
        else:
            self.register_buffer(
                "weight", torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, INNER_K_TILES)
            )
        self.bias = linear.bias
        self.in_features, self.out_features = k, n

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.reshape(-1, shape[-1]).contiguous()
        sz = self.scales_and_zeros
        if x.device.type == "cuda":
            y = torch.ops.aten._weight_int4pack_mm(x2.to(sz.dtype), self.weight, GROUP, sz)
        else:
            y = torch.ops.aten._weight_int4pack_mm_for_cpu(x2, self.weight, GROUP, sz.to(x.dtype))
        y = y.to(x.dtype)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*shape[:-1], self.out_features)


def quantize(model: nn.Module, mode: str, keep_head: bool | None = None) -> nn.Module:
    """Quantize ``model``'s weights in place (module docstring); returns the model.

    ``keep_head`` None: keep ``lm_head`` in the model's dtype when the model is on CUDA."""
    if mode == "none":
        return model
    if mode not in MODES:
        raise ValueError(f"quant must be one of {', '.join(MODES)}, not {mode!r}")
    body = model.get_decoder() if hasattr(model, "get_decoder") else model.model
    for parent in list(body.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear):
                use4 = mode == "int4" and _int4_ok(child)
                setattr(parent, name, Int4Linear(child) if use4 else Int8Linear(child))
    emb = model.get_input_embeddings()
    head = model.get_output_embeddings()
    tied = head is not None and head.weight is emb.weight
    if keep_head is None:
        keep_head = emb.weight.device.type == "cuda"
    if keep_head:
        if not tied:
            model.set_input_embeddings(Int8Embedding(emb.weight))
        log.info(
            "quantized %s weight-only to %s; lm_head kept in %s (tied embeddings: %s)",
            type(model).__name__,
            mode,
            emb.weight.dtype,
            tied,
        )
        return model
    table = Int8Embedding(emb.weight)
    model.set_input_embeddings(table)
    if head is not None:
        bias = getattr(head, "bias", None)
        new_head = Int8Head(table, bias) if tied else Int8Head(Int8Embedding(head.weight), bias)
        if not tied:  # keep the untied table as a real submodule so it moves with the model
            new_head.own_table = new_head.table[0]
        model.set_output_embeddings(new_head)
    log.info(
        "quantized %s weight-only to %s (tied embeddings: %s)", type(model).__name__, mode, tied
    )
    return model


def weight_bytes(model: nn.Module) -> int:
    """Bytes the model's parameters and buffers take, each storage counted once."""
    seen: set[int] = set()
    total = 0
    for t in list(model.parameters()) + list(model.buffers()):
        key = t.untyped_storage().data_ptr()
        if key not in seen:
            seen.add(key)
            total += t.untyped_storage().nbytes()
    return total
