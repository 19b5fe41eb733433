"""Tiny random transformers models for fast torch-backend tests (no weights downloaded).

``tiny_dir(path, seed)`` saves a 2-layer Qwen2 (vocab 320, hidden 64) and a byte-level
BPE tokenizer (256 byte tokens, a few merges, ChatML specials) as an ordinary
checkpoint directory, so tests exercise ``TorchTarget.from_gguf_or_dir`` on a
directory exactly as a user's checkpoint would be loaded.
"""

from __future__ import annotations

from pathlib import Path

import torch

from specedit.models.chat import CHATML
from specedit.models.torch_backend import _bytes_to_unicode

VOCAB = 320
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
MERGES = (("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"))


def tiny_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = _bytes_to_unicode()
    vocab = {chars[b]: b for b in range(256)}
    for a, b in MERGES:
        vocab[a + b] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=list(MERGES)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(list(SPECIALS))
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    fast.chat_template = CHATML
    return fast


def tiny_model(seed: int = 0, layers: int = 2):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        eos_token_id=tiny_tokenizer().convert_tokens_to_ids("<|im_end|>"),
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(cfg)
    with torch.no_grad():  # larger logits: a peaked, LM-like distribution
        model.lm_head.weight.mul_(40.0)
    return model.eval()


def tiny_dir(path: Path, seed: int = 0) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    tiny_model(seed).save_pretrained(path)
    tiny_tokenizer().save_pretrained(path)
    return path


def tiny_gguf(path: Path, seed: int = 0) -> Path:
    """The tiny model written as an F32 qwen2 GGUF (llama.cpp's tensor and key names)."""
    import gguf
    import numpy as np

    model, tok = tiny_model(seed), tiny_tokenizer()
    cfg = model.config
    w = gguf.GGUFWriter(str(path), "qwen2")
    w.add_name("tiny-qwen2")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_rope_freq_base(float(cfg.rope_parameters["rope_theta"]))
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    vocab = tok.backend_tokenizer.get_vocab(with_added_tokens=True)
    pieces = [p for p, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    pieces += [f"[PAD{i}]" for i in range(len(pieces), VOCAB)]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(pieces)
    w.add_token_types(
        [
            gguf.TokenType.CONTROL
            if p in SPECIALS
            else gguf.TokenType.NORMAL
            if i < 256 + len(MERGES)
            else gguf.TokenType.USER_DEFINED
            for i, p in enumerate(pieces)
        ]
    )
    w.add_token_merges([f"{a} {b}" for a, b in MERGES])
    w.add_eos_token_id(vocab["<|im_end|>"])
    w.add_bos_token_id(vocab["<|endoftext|>"])
    w.add_add_bos_token(False)
    w.add_chat_template(CHATML)
    names = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
    }
    per_layer = {
        "input_layernorm.weight": "attn_norm.weight",
        "post_attention_layernorm.weight": "ffn_norm.weight",
        "self_attn.q_proj.weight": "attn_q.weight",
        "self_attn.q_proj.bias": "attn_q.bias",
        "self_attn.k_proj.weight": "attn_k.weight",
        "self_attn.k_proj.bias": "attn_k.bias",
        "self_attn.v_proj.weight": "attn_v.weight",
        "self_attn.v_proj.bias": "attn_v.bias",
        "self_attn.o_proj.weight": "attn_output.weight",
        "mlp.gate_proj.weight": "ffn_gate.weight",
        "mlp.up_proj.weight": "ffn_up.weight",
        "mlp.down_proj.weight": "ffn_down.weight",
    }
    for i in range(cfg.num_hidden_layers):
        for k, v in per_layer.items():
            names[f"model.layers.{i}.{k}"] = f"blk.{i}.{v}"
    for k, t in model.state_dict().items():
        w.add_tensor(names[k], t.detach().float().numpy().astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
