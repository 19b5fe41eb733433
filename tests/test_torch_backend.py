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

from specedit.app.runtime.stream import StreamDecoder  # noqa: E402
from specedit.engine.backend import ModelError, TargetModel  # noqa: E402
from specedit.engine.decode import GenConfig, generate  # noqa: E402
from specedit.engine.exactness import check_batch_exactness  # noqa: E402
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
@pytest.mark.parametrize(
    "model, vocab",
    # the 135M (llama architecture, Q4_1) in the default suite: ~40 s on 2 cores; the 0.5B
    # (qwen2, the default model's architecture, Q8_0) in make test-long: ~80 s
    [("smollm_path", 49152), pytest.param("qwen05_path", 151936, marks=pytest.mark.long)],
)
def test_real_gguf_through_transformers(model, vocab, request):
    """A catalog GGUF, dequantized by transformers, against llama.cpp on the same file."""
    from specedit.models.llama_cpp_backend import LlamaTarget

    path = request.getfixturevalue(model)
    # the GGUF loader itself, not the cache
    t = TorchTarget.from_gguf_or_dir(path, n_ctx=2048, cache=False)
    ref = LlamaTarget(path, n_ctx=2048, n_threads=2)
    try:
        assert t.n_vocab == ref.n_vocab == vocab and t.eos_ids == ref.eos_ids
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


# ---- static cache, quantization, device API -----------------------------------------------
def _pair(**kw):
    from torch_tiny import tiny_tokenizer

    dyn = TorchTarget(tiny_model(), tiny_tokenizer(), n_ctx=512, **kw)
    sta = TorchTarget(tiny_model(), tiny_tokenizer(), n_ctx=512, static=True, **kw)
    return dyn, sta


def test_static_cache_equals_the_dynamic_cache():
    """Logits close and greedy speculative output token for token; rollback just moves pos."""
    dyn, sta = _pair()
    assert sta.describe()["kv_cache"] == "static" and dyn.describe()["kv_cache"] == "dynamic"
    assert sta.kv_bytes == 2 * 2 * 2 * 512 * 16 * 4  # [layers, kv heads, ctx, head dim] x2, fp32
    ids = _loop_prompt(dyn)
    np.testing.assert_allclose(
        sta.eval(ids, 0, range(len(ids))), dyn.eval(ids, 0, range(len(ids))), atol=1e-5
    )
    for t in (dyn, sta):  # a rejected draft, then the real continuation at the same position
        t.eval([5, 6, 7, 8], 20, range(4))
    a, b = sta.eval(ids[20:30], 20, range(10)), dyn.eval(ids[20:30], 20, range(10))
    np.testing.assert_allclose(a, b, atol=1e-5)
    assert sta.cache_tokens == dyn.cache_tokens == ids[:30]
    outs = []
    for t in (dyn, sta):
        t.rollback(0)
        cfg = GenConfig(max_tokens=50, policy=PolicyConfig(fixed_k=5))
        outs.append(generate(t, ids, cfg, LookupDrafter(prompt_len=len(ids))).tokens)
    plain = generate(dyn, ids, GenConfig(max_tokens=50, speculate=False)).tokens
    assert outs[0] == outs[1] == plain


def test_static_cache_padded_rows_never_leak():
    """A block padded to its graph bucket writes past itself; the next block must not see it."""
    from specedit.models.torch_static import _bucket

    _, sta = _pair()
    ids = _loop_prompt(sta)
    ref = sta.eval(ids[:40], 0, range(40)).copy()
    st = sta._static
    sta.rollback(0)
    sta.eval(ids[:30], 0, [])
    # what a graph replay of 5 tokens in an 8-bucket does: 3 garbage rows at 35..37
    padded = torch.tensor(ids[30:35] + [1, 2, 3])
    with torch.inference_mode():
        st._hidden(padded, st.positions[30:38], 38)
    assert _bucket(5) == 8
    sta.n_past = 35
    got = sta.eval(ids[35:40], 35, range(5))
    np.testing.assert_allclose(got, ref[35:40], atol=1e-5)


def test_int8_weight_only_is_close_to_unquantized():
    """int8 on the CPU: logits within a tolerance, greedy output equal on a copy task."""
    from torch_tiny import tiny_tokenizer

    ref = TorchTarget(tiny_model(), tiny_tokenizer(), n_ctx=512)
    q8 = TorchTarget(tiny_model(), tiny_tokenizer(), n_ctx=512, quant="int8")
    assert q8.describe()["quant"] == "int8"
    assert q8.weight_bytes < 0.4 * ref.weight_bytes  # int8 weights + fp32 scales vs fp32
    ids = _loop_prompt(ref)
    a, b = ref.eval(ids, 0, range(len(ids))), q8.eval(ids, 0, range(len(ids)))
    assert np.abs(a - b).max() < 0.02 * np.abs(a).max()
    assert (a.argmax(-1) == b.argmax(-1)).mean() > 0.95
    cfg = GenConfig(max_tokens=40, policy=PolicyConfig(fixed_k=5))
    outs = []
    for t in (ref, q8):
        t.rollback(0)
        outs.append(generate(t, ids, cfg, LookupDrafter(prompt_len=len(ids))).tokens)
    assert outs[0] == outs[1]


def test_int4_linear_matches_its_dequantized_weights():
    """tinygemm's int4 layout on the CPU kernel equals (q - 8) * scale + zero per group."""
    from specedit.models.quant import GROUP, Int4Linear

    torch.manual_seed(0)
    lin = torch.nn.Linear(256, 64, bias=True)
    try:
        q4 = Int4Linear(lin)
    except (RuntimeError, NotImplementedError) as e:
        pytest.skip(f"no int4 CPU kernel in this torch: {e}")
    x = torch.randn(3, 256)
    w = lin.weight.detach().reshape(64, 256 // GROUP, GROUP)
    lo, hi = w.amin(-1, keepdim=True), w.amax(-1, keepdim=True)
    scale = (hi - lo).clamp(min=1e-6) / 15
    deq = (((w - lo) / scale).round().clamp(0, 15) - 8) * scale + (lo + 8 * scale)
    ref = x @ deq.reshape(64, 256).T + lin.bias
    with torch.inference_mode():
        got = q4(x)
    torch.testing.assert_close(got, ref, atol=2e-3, rtol=2e-3)
    assert (got - x @ lin.weight.T - lin.bias).abs().max() < 0.1 * ref.abs().max()


def test_quant_follows_the_gguf_type_unless_given(tmp_path):
    from specedit.models.quant import gguf_file_type, gguf_quant, resolve_quant

    assert [gguf_quant(t) for t in (0, 1, 7, 15, 2, 8, 18, 32, None)] == [
        "none",
        "none",
        "int8",
        "int4",
        "int4",
        "int4",
        "int8",
        "none",
        "none",
    ]  # F32 F16 Q8_0 Q4_K_M Q4_0 Q5_0 Q6_K BF16 unknown
    path = tiny_gguf(tmp_path / "tiny.gguf")
    assert gguf_file_type(path) == 0 and resolve_quant(None, path) == "none"
    assert resolve_quant("int8", path) == "int8" and resolve_quant(None) == "none"
    with pytest.raises(ValueError, match="int4, int8, none"):
        resolve_quant("fp8")


def test_device_api_uploads_and_reads_back(tiny):
    ids = tiny.tokenize("the cat sat on the mat")
    dev = tiny.upload(ids)
    assert dev.dtype == torch.long and dev.tolist() == ids
    again = tiny.upload(ids[:3])
    assert again.data_ptr() == dev.data_ptr()  # the same buffer, no new tensor per call
    tiny.rollback(0)
    logits = tiny.eval_ids(dev[:3], 0, ids[:3])
    assert logits.shape == (3, 320) and tiny.cache_tokens == ids[:3]
    last = tiny.eval_ids(tiny.upload(ids[3:]), 3, None, last_only=True)
    assert last.shape == (1, 320) and tiny.cache_tokens == ids[:3]  # unknown ids: prefix only
    assert tiny.readback(torch.tensor([3, 1, 4])).tolist() == [3, 1, 4]


def test_fused_step_equals_the_model_modules_step():
    """The fused batch-1 step (one qkv and one gate/up matmul over re-pointed weights,
    F.rms_norm, joint RoPE, folded-GQA SDPA) gives the logits of the model's own modules."""
    from specedit.models.torch_static import StaticLM

    t = TorchTarget(tiny_model(), _tok(), n_ctx=512, static=True)
    assert t._static.fused
    ids = _loop_prompt(t)
    fused = t.eval(ids, 0, range(len(ids))).copy()
    t._static = StaticLM(t.model, t.n_ctx, graphs=False, fused=False)
    t.rollback(0)
    np.testing.assert_allclose(t.eval(ids, 0, range(len(ids))), fused, atol=1e-5)
    att = t.model.model.layers[0].self_attn  # re-pointed: one storage, no second copy
    assert att.q_proj.weight.untyped_storage().data_ptr() == (
        att.v_proj.weight.untyped_storage().data_ptr()
    )
    with torch.inference_mode():  # the modules still compute what they did
        x = torch.randn(3, 64)
        torch.testing.assert_close(att.k_proj(x), x @ att.k_proj.weight.T + att.k_proj.bias)


def test_fused_step_with_int8_layers_equals_their_modules():
    from specedit.models.torch_static import StaticLM

    t = TorchTarget(tiny_model(), _tok(), n_ctx=512, static=True, quant="int8")
    ids = _loop_prompt(t)
    fused = t.eval(ids, 0, range(len(ids))).copy()
    t._static = StaticLM(t.model, t.n_ctx, graphs=False, fused=False)
    t.rollback(0)
    np.testing.assert_allclose(t.eval(ids, 0, range(len(ids))), fused, atol=1e-4)


def test_quant_keeps_the_head_where_asked_and_probes_the_activation_dtype():
    from specedit.models.quant import Int8Embedding, _has_int8_kernel, quantize

    model = tiny_model()
    untie = torch.nn.Linear(64, 320, bias=False)
    untie.weight = torch.nn.Parameter(model.lm_head.weight.detach().clone())
    model.lm_head = untie
    quantize(model, "int8", keep_head=True)  # what CUDA gets: a bf16 GEMV, not int8pack_mm
    assert model.get_output_embeddings() is untie
    assert isinstance(model.get_input_embeddings(), Int8Embedding)
    tied = tiny_model()
    head = tied.get_output_embeddings()
    quantize(tied, "int8", keep_head=True)  # tied: the shared table stays as it is
    assert tied.get_output_embeddings() is head and head.weight is tied.model.embed_tokens.weight
    assert _has_int8_kernel("cpu", torch.float32) in (True, False)
    assert _has_int8_kernel.cache_info().currsize >= 1  # probed per (device, dtype)


def _tok():
    from torch_tiny import tiny_tokenizer

    return tiny_tokenizer()
