"""Torch target backend: protocol, KV rollback, logits of requested rows only, exactness.

Tiny random Qwen2 checkpoints (``torch_tiny``) keep these fast; one slow test loads the
real 0.5B catalog GGUF through transformers' GGUF loader and compares it with llama.cpp.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from torch_tiny import tiny_dir, tiny_gguf, tiny_model  # noqa: E402

from specedit.app.stream import StreamDecoder  # noqa: E402
from specedit.engine.backend import ModelError, TargetModel  # noqa: E402
from specedit.engine.decode import GenConfig, check_batch_exactness, generate  # noqa: E402
from specedit.engine.lookup import LookupDrafter  # noqa: E402
from specedit.engine.policy import PolicyConfig  # noqa: E402
from specedit.models.torch_backend import TorchTarget  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matmuls: threads only add contention on shared cores
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> TorchTarget:
    d = tiny_dir(tmp_path_factory.mktemp("tiny"))
    return TorchTarget.from_gguf_or_dir(d, n_ctx=4096, name="tiny")


def _full_logits(t: TorchTarget, ids: list[int]) -> np.ndarray:
    with torch.inference_mode():
        return t.model(torch.tensor([ids])).logits[0].float().numpy()


def test_loads_a_checkpoint_dir(tiny):
    assert isinstance(tiny, TargetModel)
    assert tiny.backend == "torch" and tiny.name == "tiny"
    assert tiny.n_vocab == 320 and tiny.n_ctx == 1024  # capped by max_position_embeddings
    assert tiny.dtype == torch.float32 and tiny.device.type == "cpu"
    assert tiny.eos_ids == frozenset({tiny.tokenize("<|im_end|>", special=True)[0]})


def test_eval_returns_only_requested_rows(tiny):
    ids = tiny.tokenize("the cat sat on the mat, then the cat ran")
    ref = _full_logits(tiny, ids)
    tiny.rollback(0)
    got = tiny.eval(ids, 0, [3, len(ids) - 1])
    assert isinstance(got, np.ndarray) and got.shape == (2, 320) and got.dtype == np.float32
    np.testing.assert_allclose(got, ref[[3, len(ids) - 1]], atol=1e-4)
    assert tiny.eval(ids[:4], 0, []).shape == (0, 320)
    dev = tiny.eval_device(ids, 0, [0])
    assert isinstance(dev, torch.Tensor) and dev.shape == (1, 320)


def test_rollback_and_overwrite_without_recompute(tiny):
    ids = tiny.tokenize("speculative decoding drafts tokens")
    ref = _full_logits(tiny, ids)
    tiny.rollback(0)
    tiny.eval(ids[:10], 0, [])
    tiny.eval([5, 6, 7, 8], 10, range(4))  # a rejected draft
    assert tiny.cache_tokens == ids[:10] + [5, 6, 7, 8]
    tiny.rollback(10)
    assert tiny.n_past == 10 and tiny._cache.get_seq_length() == 10
    assert tiny.cache_tokens == ids[:10]
    np.testing.assert_allclose(tiny.eval(ids[10:], 10, [0]), ref[[10]], atol=1e-4)
    # eval below the cached length drops the stale entries by itself
    tiny.eval([1, 2, 3], 12, range(3))
    np.testing.assert_allclose(tiny.eval(ids[12:], 12, range(len(ids) - 12)), ref[12:], atol=1e-4)
    with pytest.raises(ValueError, match="gap"):
        tiny.eval([1], tiny.n_past + 2, [0])
    with pytest.raises(ModelError, match="context full"):
        tiny.eval([1] * 8, tiny.n_ctx - 4, [0])


def test_prefill_in_chunks_equals_one_block(tiny):
    ids = tiny.tokenize("a longer prompt that needs several chunks " * 2)
    tiny.rollback(0)
    one = tiny.eval(ids, 0, range(len(ids))).copy()
    tiny.n_batch = 7
    try:
        tiny.rollback(0)
        chunked = tiny.eval(ids, 0, range(len(ids)))
    finally:
        tiny.n_batch = 512
    np.testing.assert_allclose(chunked, one, atol=1e-4)


def test_tokenize_special_and_bytes(tiny):
    assert len(tiny.tokenize("<|im_end|>", special=True)) == 1
    assert len(tiny.tokenize("<|im_end|>")) > 1  # user text never becomes a control token
    ids = tiny.tokenize(" the héllo 日本")
    assert tiny.detokenize(ids) == " the héllo 日本".encode()
    assert tiny.detokenize(tiny.tokenize("<|im_end|>", special=True)) == b""
    dec = StreamDecoder(tiny)
    assert "".join(dec.feed([t]) for t in tiny.tokenize("é日")) + dec.flush() == "é日"
    prompt = tiny.chat_prompt([{"role": "user", "content": "hi"}])
    assert prompt == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_missing_model_is_a_model_error(tmp_path):
    with pytest.raises(ModelError):
        TorchTarget.from_gguf_or_dir(tmp_path / "nope", n_ctx=64)
    with pytest.raises(ModelError, match="could not load"):
        TorchTarget.from_gguf_or_dir(tmp_path, n_ctx=64)  # an empty directory


def _loop_prompt(t: TorchTarget) -> list[int]:
    text = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n"
    return t.tokenize(text * 3)


@pytest.mark.parametrize("exact", [False, True])
def test_greedy_speculative_equals_plain(tiny, exact):
    prompt = _loop_prompt(tiny)
    exact_block = None
    if exact:
        exact_block, deltas = check_batch_exactness(tiny, prompt)
        assert max(deltas.values()) < 1e-3
    plain = generate(tiny, prompt, GenConfig(max_tokens=60, speculate=False))
    drafter = LookupDrafter(prompt_len=len(prompt))
    cfg = GenConfig(max_tokens=60, policy=PolicyConfig(fixed_k=6), exact_block=exact_block)
    tiny.rollback(0)
    spec = generate(tiny, prompt, cfg, drafter)
    assert spec.tokens == plain.tokens
    assert spec.metrics.drafted_tokens > 0 and spec.metrics.accepted_tokens > 0
    if not exact:  # exact mode's 1-token sub-blocks each count as a target call
        assert spec.metrics.target_calls < plain.metrics.target_calls


def test_gguf_through_transformers_and_the_converted_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECEDIT_MODELS_DIR", str(tmp_path / "models"))
    path = tiny_gguf(tmp_path / "tiny.gguf")
    ref_model = tiny_model()
    first = TorchTarget.from_gguf_or_dir(path, n_ctx=512)
    assert first.name == "tiny-qwen2" and first.n_vocab == 320
    assert first.eos_ids == frozenset({263})
    ids = first.tokenize("the cat sat <|im_end|>", special=True)
    assert ids[-1] == 263
    with torch.inference_mode():
        ref = ref_model(torch.tensor([ids])).logits[0].numpy()
    np.testing.assert_array_equal(first.eval(ids, 0, range(len(ids))), ref)  # F32: exact
    (converted,) = (tmp_path / "models" / "torch").iterdir()
    assert (converted / "complete").exists()
    again = TorchTarget.from_gguf_or_dir(path, n_ctx=512)  # from the converted copy
    np.testing.assert_array_equal(again.eval(ids, 0, range(len(ids))), ref)
    assert again.chat_prompt([{"role": "user", "content": "x"}]) == first.chat_prompt(
        [{"role": "user", "content": "x"}]
    )


@pytest.mark.slow
@pytest.mark.model
def test_real_gguf_through_transformers(qwen05_path, tmp_path, monkeypatch):
    """The 0.5B catalog GGUF, dequantized by transformers: ~100-140 s on 2 shared cores."""
    from specedit.models.llama_cpp_backend import LlamaTarget

    monkeypatch.setenv("SPECEDIT_TORCH_CACHE", "0")  # the GGUF loader itself, not the cache
    t = TorchTarget.from_gguf_or_dir(qwen05_path, n_ctx=2048)
    ref = LlamaTarget(qwen05_path, n_ctx=2048, n_threads=2)
    try:
        assert t.n_vocab == ref.n_vocab == 151936 and t.eos_ids == ref.eos_ids
        msgs = [{"role": "user", "content": "Write a Python function that adds two numbers."}]
        text = t.chat_prompt(msgs)
        assert text == ref.chat_prompt(msgs)
        ids = t.tokenize(text, special=True)
        assert ids == ref.tokenize(text, special=True)
        assert t.detokenize(ids) == ref.detokenize(ids)
        a = t.eval(ids, 0, [len(ids) - 1])[0]
        b = ref.eval(ids, 0, [len(ids) - 1])[0]
        assert int(a.argmax()) == int(b.argmax())
        assert np.corrcoef(a, b)[0, 1] > 0.99  # dequantized fp32 vs quantized kernels
    finally:
        ref.close()
