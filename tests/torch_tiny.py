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
