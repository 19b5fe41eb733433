"""A static-KV-cache forward for Llama/Qwen2 checkpoints, with CUDA graphs per block bucket.

Contract: ``StaticLM(model, max_ctx)`` wraps a transformers ``LlamaForCausalLM`` or
``Qwen2ForCausalLM`` (quantized or not: it calls the model's own modules) and owns a KV cache of
``[layers, kv_heads, max_ctx, head_dim]`` for keys and for values.
  * ``hidden(ids, pos)`` runs ``ids [b]`` (device) at positions ``pos .. pos+b-1`` under the causal
    mask ``key_pos <= query_pos``: entries past the position are never read, so rollback moves
    it; ``logits(ids, pos, last_only)`` adds the final norm and ``lm_head``.
  * ``graphs=True`` (CUDA only): a block padded to a ``BUCKETS`` size and the attended length to a
    power of two >= 256, each pair captured once and replayed; eager where a graph cannot (CPU,
    a block past the largest bucket or too close to ``max_ctx``).
  * ``fused=True`` (the default) runs the batch-1 step as a few large kernels over weights shared
    with the layers' own modules; ``fused=False`` runs the model's own modules (the reference).
``supports(model)`` says whether a checkpoint can take this path (Llama-like attention, RoPE
independent of the sequence length); others use transformers' dynamic cache.
"""

from __future__ import annotations

import logging

import torch
import torch.nn.functional as F
from torch import nn

log = logging.getLogger(__name__)

BUCKETS = (1, 2, 3, 4, 8, 16, 24, 32, 48, 64, 96, 128)
"""Block sizes a verify step is padded to: 1 (plain) and the policy's k + 1."""
MIN_KV = 256
"""Smallest attended length of a graph; lengths are powers of two from here."""


def supports(model) -> tuple[bool, str]:
    """(True, "") when ``StaticLM`` can run ``model``, else (False, why)."""
    kind = getattr(model.config, "model_type", "")
    if kind not in ("llama", "qwen2"):
        return False, f"the static cache supports llama and qwen2 checkpoints, not {kind!r}"
    rope = getattr(getattr(model, "model", None), "rotary_emb", None)
    rope_type = getattr(rope, "rope_type", "default")
    if rope is None or rope_type not in ("default", "linear", "llama3"):
        return False, f"RoPE type {rope_type!r} depends on the sequence length"
    if getattr(model.config, "use_sliding_window", False):
        return False, "sliding-window attention is not supported by the static cache"
    return True, ""


def _bucket(b: int) -> int | None:
    return next((x for x in BUCKETS if x >= b), None)


def _kv_bucket(n: int, max_ctx: int) -> int:
    size = MIN_KV
    while size < n:
        size *= 2
    return min(size, max_ctx)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class StaticLM:
    """Static-cache forward over a transformers model's own modules (module docstring)."""

    def __init__(
        self, model, max_ctx: int, *, graphs: bool | None = None, fused: bool = True
    ) -> None:
        ok, why = supports(model)
        if not ok:
            raise ValueError(why)
        self.model = model
        cfg = model.config
        p = next(model.parameters())
        self.device, self.dtype = p.device, _compute_dtype(model)
        self.max_ctx = max_ctx
        self.layers = model.model.layers
        self.n_heads = cfg.num_attention_heads
        self.n_kv = getattr(cfg, "num_key_value_heads", None) or self.n_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.n_heads
        shape = (len(self.layers), self.n_kv, max_ctx, self.head_dim)
        self.k_cache = torch.zeros(shape, dtype=self.dtype, device=self.device)
        self.v_cache = torch.zeros(shape, dtype=self.dtype, device=self.device)
        self.positions = torch.arange(max_ctx, device=self.device)  # [max_ctx]
        with torch.inference_mode():
            probe = torch.zeros(1, dtype=self.dtype, device=self.device)
            cos, sin = model.model.rotary_emb(probe, self.positions[None])
        self.cos, self.sin = cos[0].to(self.dtype), sin[0].to(self.dtype)  # [max_ctx, head_dim]
        half = self.head_dim // 2
        self.sin_signed = torch.cat([-self.sin[:, :half], self.sin[:, half:]], dim=-1)
        self.group = self.n_heads // self.n_kv
        self.fused = fused
        if fused:
            self._qkv = [
                _fuse([lay.self_attn.q_proj, lay.self_attn.k_proj, lay.self_attn.v_proj])
                for lay in self.layers
            ]
            self._gate_up = [_fuse([lay.mlp.gate_proj, lay.mlp.up_proj]) for lay in self.layers]
        self.graphs = self.device.type == "cuda" if graphs is None else graphs
        if self.graphs and self.device.type != "cuda":
            raise ValueError("CUDA graphs need a CUDA device")
        self._graphs: dict[tuple[int, int], tuple[torch.cuda.CUDAGraph, torch.Tensor]] = {}
        self._pool = None
        self._g_ids = torch.zeros(BUCKETS[-1], dtype=torch.long, device=self.device)
        self._g_pos = torch.zeros(BUCKETS[-1], dtype=torch.long, device=self.device)
        self.replays = 0  # graph replays so far (for tests and stats)

    @property
    def kv_bytes(self) -> int:
        return 2 * self.k_cache.numel() * self.k_cache.element_size()

    # ---- eager forward ----------------------------------------------------------------
    def _attn_ref(self, layer, i: int, h: torch.Tensor, pos: torch.Tensor, kv_len: int):
        att = layer.self_attn
        b = h.shape[0]
        q = att.q_proj(h).view(b, self.n_heads, self.head_dim).transpose(0, 1)  # [nh, b, hd]
        k = att.k_proj(h).view(b, self.n_kv, self.head_dim).transpose(0, 1)  # [nkv, b, hd]
        v = att.v_proj(h).view(b, self.n_kv, self.head_dim).transpose(0, 1)
        cos, sin = self.cos[pos], self.sin[pos]  # [b, hd]
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        self.k_cache[i].index_copy_(1, pos, k.to(self.dtype))
        self.v_cache[i].index_copy_(1, pos, v.to(self.dtype))
        keys = self.k_cache[i, :, :kv_len]  # [nkv, kv_len, hd]
        vals = self.v_cache[i, :, :kv_len]
        mask = self.positions[:kv_len][None, :] <= pos[:, None]  # [b, kv_len]
        out = F.scaled_dot_product_attention(
            q[None], keys[None], vals[None], attn_mask=mask[None, None], enable_gqa=True
        )  # [1, nh, b, hd]
        return att.o_proj(out[0].transpose(0, 1).reshape(b, self.n_heads * self.head_dim))

    def _hidden(self, ids: torch.Tensor, pos: torch.Tensor, kv_len: int) -> torch.Tensor:
        """Final hidden states ``[b, H]`` of ``ids [b]`` at positions ``pos [b]`` (device)."""
        x = self.model.model.embed_tokens(ids).to(self.dtype)
        if not self.fused:
            for i, layer in enumerate(self.layers):
                x = x + self._attn_ref(layer, i, layer.input_layernorm(x), pos, kv_len)
                x = x + layer.mlp(layer.post_attention_layernorm(x))
            return self.model.model.norm(x)
        b, nh, nkv, hd, g = x.shape[0], self.n_heads, self.n_kv, self.head_dim, self.group
        cos, sin = self.cos[pos][:, None], self.sin_signed[pos][:, None]  # [b, 1, hd], once
        keep = self.positions[:kv_len][None, :] <= pos[:, None]  # [b, kv_len]
        mask = torch.zeros(keep.shape, dtype=self.dtype, device=x.device)
        mask = mask.masked_fill_(~keep, float("-inf"))[:, None].expand(b, g, kv_len)
        mask = mask.reshape(b * g, kv_len)  # row b_i * g + g_i: query head g_i of token b_i
        for i, layer in enumerate(self.layers):
            att = layer.self_attn
            qkv = self._qkv[i](_norm(layer.input_layernorm, x))  # [b, (nh + 2 nkv) hd]
            qk = qkv[:, : (nh + nkv) * hd].view(b, nh + nkv, hd)
            qk = torch.addcmul(qk * cos, qk.roll(hd // 2, -1), sin)  # RoPE on q and k at once
            k = qk[:, nh:].transpose(0, 1)  # [nkv, b, hd]
            v = qkv[:, (nh + nkv) * hd :].view(b, nkv, hd).transpose(0, 1)
            self.k_cache[i].index_copy_(1, pos, k.to(self.dtype))
            self.v_cache[i].index_copy_(1, pos, v.to(self.dtype))
            # the g query heads of a kv head become g * b query rows of that head
            q = qk[:, :nh].reshape(b, nkv, g, hd).permute(1, 0, 2, 3).reshape(nkv, b * g, hd)
            out = F.scaled_dot_product_attention(
                q[None],
                self.k_cache[i, :, :kv_len][None],
                self.v_cache[i, :, :kv_len][None],
                attn_mask=mask[None, None],
            )  # [1, nkv, b*g, hd]
            out = out[0].reshape(nkv, b, g, hd).permute(1, 0, 2, 3).reshape(b, nh * hd)
            x = x + att.o_proj(out)
            gate, up = self._gate_up[i](_norm(layer.post_attention_layernorm, x)).chunk(2, -1)
            x = x + layer.mlp.down_proj(layer.mlp.act_fn(gate) * up)
        return _norm(self.model.model.norm, x)

    def _head(self, h: torch.Tensor) -> torch.Tensor:
        return self.model.lm_head(h)

    # ---- entry point ------------------------------------------------------------------
    @torch.inference_mode()
    def logits(self, ids: torch.Tensor, pos: int, last_only: bool = False) -> torch.Tensor:
        """Logits of ``ids [b]`` (device) at ``pos``: ``[b, V]`` (``[1, V]`` if last_only)."""
        b = ids.shape[0]
        if pos + b > self.max_ctx:
            raise ValueError(f"{pos + b} positions exceed the static cache's {self.max_ctx}")
        bucket = _bucket(b)
        if self.graphs and not last_only and bucket is not None and pos + bucket <= self.max_ctx:
            return self._replay(ids, pos, bucket)[:b]
        h = self._hidden(ids, self.positions[pos : pos + b], pos + b)
        return self._head(h[-1:] if last_only else h)

    def _replay(self, ids: torch.Tensor, pos: int, bucket: int) -> torch.Tensor:
        kv_len = _kv_bucket(pos + bucket, self.max_ctx)
        key = (bucket, kv_len)
        b = ids.shape[0]
        self._g_ids[:b].copy_(ids)  # device to device; padded rows keep stale ids
        self._g_pos[:bucket].copy_(self.positions[pos : pos + bucket])
        if key not in self._graphs:
            self._graphs[key] = self._capture(bucket, kv_len)
        graph, out = self._graphs[key]
        graph.replay()
        self.replays += 1
        return out

    def _capture(self, bucket: int, kv_len: int):
        ids, pos = self._g_ids[:bucket], self._g_pos[:bucket]
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):  # warm-up (cuBLAS workspaces, lazy inits) off-graph
            self._head(self._hidden(ids, pos, kv_len))
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self._pool):
            out = self._head(self._hidden(ids, pos, kv_len))
        if self._pool is None:
            self._pool = graph.pool()
        log.debug("captured a CUDA graph: block %d, attended length %d", bucket, kv_len)
        return graph, out

    def warm(self, sizes=BUCKETS, lengths=(MIN_KV,)) -> None:
        """Capture the graphs of ``sizes`` x ``lengths`` now (not on first use)."""
        if not self.graphs:
            return
        with torch.inference_mode():
            for kv_len in lengths:
                for b in sizes:
                    key = (b, _kv_bucket(kv_len, self.max_ctx))
                    if key not in self._graphs and b <= key[1]:
                        self._graphs[key] = self._capture(*key)


def _norm(mod, x: torch.Tensor) -> torch.Tensor:
    """An RMSNorm module's output through ``F.rms_norm`` (one fused op where torch has it)."""
    w = getattr(mod, "weight", None)
    eps = getattr(mod, "variance_epsilon", None) or getattr(mod, "eps", None)
    if w is None or eps is None or not hasattr(F, "rms_norm"):
        return mod(x)
    return F.rms_norm(x, (x.shape[-1],), w, eps)


def _fuse(mods: list) -> callable:
    """One matmul for several projections of the same input: ``x -> cat(m(x) for m)``.

    ``nn.Linear`` and ``Int8Linear`` layers of one kind get a concatenated weight (and scales,
    bias) and are re-pointed at their rows of it (nothing stored twice); anything else (int4,
    mixed kinds, mixed biases) is called one by one.
    """
    from .quant import Int8Linear, int8_matmul

    kinds = {type(m) for m in mods}
    has_bias = {getattr(m, "bias", None) is not None for m in mods}
    if len(kinds) != 1 or len(has_bias) != 1 or kinds.pop() not in (nn.Linear, Int8Linear):
        return lambda x: torch.cat([m(x) for m in mods], dim=-1)
    names = ["weight", "bias"] if isinstance(mods[0], nn.Linear) else ["weight", "scales", "bias"]
    if True not in has_bias:
        names.remove("bias")
    with torch.no_grad():
        whole = {n: torch.cat([getattr(m, n).detach() for m in mods]) for n in names}
        off = 0
        for m in mods:
            rows = m.out_features
            for n in names:
                part = whole[n][off : off + rows]
                if isinstance(getattr(m, n), nn.Parameter):
                    part = nn.Parameter(part, requires_grad=False)
                setattr(m, n, part)  # a parameter or a registered buffer, now a view
            off += rows
    w, b = whole["weight"], whole.get("bias")
    if isinstance(mods[0], nn.Linear):
        return lambda x: F.linear(x, w, b)
    scales = whole["scales"]
    return lambda x: int8_matmul(x, w, scales, b)


def _compute_dtype(model) -> torch.dtype:
    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.float32
