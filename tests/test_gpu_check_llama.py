"""The llama.cpp GPU check's parts, on the CPU: random-weight GGUFs of real shapes
(bench/random_gguf.py), the measurements (bench/gpu_check_llama.py, run with a tiny model of
the catalog architecture: the code the GPU machine runs, minus the GPU) and the trimmed
llama-cpp-python source tree it builds from (bench/trim_llama_sdist.py)."""

from __future__ import annotations

import io
import json
import tarfile

import numpy as np
import pytest

from specedit.bench import gpu_check_llama, random_gguf, trim_llama_sdist
from specedit.models.gguf_meta import scan_header

SHAPES = json.loads(random_gguf.SHAPES.read_text())
tiny_vocab, tiny_shapes = random_gguf.tiny_vocab, random_gguf.tiny_shapes


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory):
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    info = random_gguf.write_random_gguf("tiny", path, tiny_vocab(), tiny_shapes())
    assert info["tensors"] == 3 + 2 * 12 and info["bytes"] == path.stat().st_size
    return path


@pytest.mark.parametrize("qtype", ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K"])
def test_random_blocks_dequantize_to_centred_weights_of_the_asked_std(qtype):
    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize

    rng = np.random.default_rng(1)
    data, raw = random_gguf.random_tensor("w", [256, 512], qtype, rng, std=0.02)
    assert raw == GGMLQuantizationType[qtype] and data.dtype == np.uint8
    w = dequantize(data, raw)
    assert w.shape == (512, 256) and np.isfinite(w).all()
    assert abs(float(w.mean())) < 0.004
    assert 0.015 < float(w.std()) < 0.025, float(w.std())


def test_unsupported_type_is_one_clear_line():
    with pytest.raises(ValueError, match=r"random blocks of IQ2_XS are not supported \(Q4_0"):
        random_gguf.random_tensor("w", [256, 4], "IQ2_XS", np.random.default_rng(0))


def test_norms_are_ones_and_biases_zeros():
    rng = np.random.default_rng(0)
    assert (random_gguf.random_tensor("blk.0.attn_norm.weight", [8], "F32", rng)[0] == 1).all()
    assert (random_gguf.random_tensor("blk.0.attn_q.bias", [8], "F32", rng)[0] == 0).all()


@pytest.mark.model
def test_committed_shapes_match_the_real_headers(qwen05_path):
    import mmap

    with qwen05_path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        scan = scan_header(mm)
    spec = SHAPES["qwen2.5-coder-0.5b"]
    assert len(spec["tensors"]) == scan.n_tensors == 291
    for key, _, value in spec["kv"]:
        assert scan.fields[key] == pytest.approx(value), key
    assert set(SHAPES) == {"qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"}


def test_tiny_random_model_loads_in_llama_cpp(tiny_gguf):
    from specedit.models.llama_cpp_backend import LlamaTarget

    t = LlamaTarget(tiny_gguf, n_ctx=256, n_threads=1)
    try:
        assert (t.n_vocab, t.n_layers, t.device_name) == (260, 3, "CPU")
        ids = t.tokenize("def f(x):\n    return x\n")
        logits = t.eval(ids, 0, range(len(ids)))
        assert logits.shape == (len(ids), 260) and np.isfinite(logits).all()
        assert t.detokenize(ids).decode() == "def f(x):\n    return x\n"
        assert 256 in ids  # "re", by the merge
    finally:
        t.close()


def test_self_drafter_drafts_the_reference_until_a_divergence():
    d = gpu_check_llama.SelfDrafter(prompt_len=2, reference=[5, 6, 7, 8, 9])
    assert list(d.propose([1, 2, 5], 2).tokens) == [6, 7]
    assert d.propose([1, 2, 5, 6, 7, 8, 9], 4).tokens.size == 0  # the end of the reference
    assert d.propose([1, 2, 5, 6], 3).match_len == 2
    assert len(d.propose([1, 2, 5, 4], 3)) == 0 and d.diverged_at == 1
    assert len(d.propose([1, 2, 5], 3)) == 0  # once diverged, plain decoding


def test_gpu_check_measures_on_the_cpu(tiny_gguf, tmp_path):
    rc = gpu_check_llama.main(
        ["--gguf", str(tiny_gguf), "--out", str(tmp_path), "--gpu-layers", "auto"]
        + ["--tokens", "48", "--sizes", "1-8", "--threads", "1"]
    )
    rec = json.loads((tmp_path / "gpu_check_llama.json").read_text())
    assert rc == 0, rec["failures"]
    (m,) = rec["models"]
    assert m["placement"]["device"] == "CPU" and m["placement"]["gpu_layers"] == "0/3"
    assert [int(b) for b in m["cost_curve_s"]] == list(range(1, 9))
    assert all(v > 0 for v in m["cost_curve_s"].values()) and m["cost_ratio"]["1"] == 1.0
    task = m["self_copy"]
    assert task["plain"]["generated_tokens"] == 48 and task["plain"]["tokens_per_call"] == 1.0
    assert set(task["speculative"]) == {"adaptive", "k7", "k15", "k31", "k63", "k127"}
    k15 = task["speculative"]["k15"]
    assert k15["generated_tokens"] == 48
    if k15["equal_to_plain"]:  # the draft is the output itself: every block is accepted
        assert k15["acceptance"] == 1.0 and k15["target_calls"] == 3  # 16 + 16 + 16 tokens
        assert k15["blocks"] == {"16": 3}
    assert m["best_speedup"] > 0


def test_gpu_check_fails_when_offload_is_impossible(tiny_gguf, tmp_path):
    from specedit.models.llama_build import llama_build

    if llama_build().gpu_offload:
        pytest.skip("needs the CPU-only build")
    argv = ["--gguf", str(tiny_gguf), "--out", str(tmp_path), "--tokens", "8", "--threads", "1"]
    rc = gpu_check_llama.main(argv)
    assert rc == 1
    (failure,) = json.loads((tmp_path / "gpu_check_llama.json").read_text())["failures"]
    assert failure.startswith("tiny.gguf: --gpu-layers all needs a GPU build of llama.cpp")


SDIST_FILES = [
    "CMakeLists.txt",
    "pyproject.toml",
    "llama_cpp/__init__.py",
    "llama_cpp/server/app.py",
    "docs/index.md",
    "tests/test_llama.py",
    "vendor/llama.cpp/CMakeLists.txt",
    "vendor/llama.cpp/LICENSE",
    "vendor/llama.cpp/cmake/common.cmake",
    "vendor/llama.cpp/src/llama.cpp",
    "vendor/llama.cpp/common/arg.cpp",
    "vendor/llama.cpp/vendor/nlohmann/json.hpp",
    "vendor/llama.cpp/models/ggml-vocab-qwen2.gguf",
    "vendor/llama.cpp/docs/build.md",
    "vendor/llama.cpp/tools/mtmd/clip.cpp",
    "vendor/llama.cpp/ggml/CMakeLists.txt",
    "vendor/llama.cpp/ggml/src/ggml.c",
    "vendor/llama.cpp/ggml/src/CMakeLists.txt",
    "vendor/llama.cpp/ggml/src/ggml-cpu/ggml-cpu.c",
    "vendor/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu",
    "vendor/llama.cpp/ggml/src/ggml-vulkan/ggml-vulkan.cpp",
    "vendor/llama.cpp/ggml/src/ggml-metal/ggml-metal.cpp",
]


def _kept(tmp_path, backend: str) -> set[str]:
    sdist = tmp_path / "sdist.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        for name in SDIST_FILES:
            data = name.encode()
            info = tarfile.TarInfo(f"llama_cpp_python-0.3.36/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    out = tmp_path / f"{backend}.tar.gz"
    info = trim_llama_sdist.trim(sdist, out, backend)
    with tarfile.open(out) as tar:
        names = {m.name.partition("/")[2] for m in tar}
        for m in tar:  # contents travel unchanged
            assert tar.extractfile(m).read() == m.name.partition("/")[2].encode()
    assert info["kept"] == len(names) and info["kept"] + info["dropped"] == len(SDIST_FILES)
    return names


def test_trimmed_tree_keeps_the_build_and_one_gpu_backend(tmp_path):
    dropped = {
        "docs/index.md",
        "tests/test_llama.py",
        "vendor/llama.cpp/models/ggml-vocab-qwen2.gguf",
        "vendor/llama.cpp/docs/build.md",
        "vendor/llama.cpp/tools/mtmd/clip.cpp",
        "vendor/llama.cpp/ggml/src/ggml-vulkan/ggml-vulkan.cpp",
        "vendor/llama.cpp/ggml/src/ggml-metal/ggml-metal.cpp",
    }
    assert _kept(tmp_path, "cuda") == set(SDIST_FILES) - dropped
    vulkan = _kept(tmp_path, "vulkan")
    assert "vendor/llama.cpp/ggml/src/ggml-vulkan/ggml-vulkan.cpp" in vulkan
    assert "vendor/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu" not in vulkan
    cpu = _kept(tmp_path, "cpu")
    assert "vendor/llama.cpp/ggml/src/ggml-cpu/ggml-cpu.c" in cpu
    assert not any("ggml-cuda" in n or "ggml-vulkan" in n for n in cpu)


def test_trim_rejects_an_unknown_backend(tmp_path):
    with pytest.raises(ValueError, match="backend 'rocm': use cuda, vulkan, metal, cpu"):
        trim_llama_sdist.trim(tmp_path / "x.tar.gz", tmp_path / "y.tar.gz", "rocm")


def test_shapes_agree_with_the_torch_checks_model_configs():
    """bench/qwen_shapes.json (transformers configs, for the torch GPU check) and
    bench/gguf_shapes.json (every GGUF tensor, for llama.cpp) describe the same models."""
    hf = json.loads((random_gguf.SHAPES.parent / "qwen_shapes.json").read_text())
    assert set(hf) == set(SHAPES)
    for name, cfg in hf.items():
        kv = {k: v for k, _, v in SHAPES[name]["kv"]}
        tensors = {t: dims for t, dims, _ in SHAPES[name]["tensors"]}
        assert cfg["hidden_size"] == kv["qwen2.embedding_length"]
        assert cfg["intermediate_size"] == kv["qwen2.feed_forward_length"]
        assert cfg["num_hidden_layers"] == kv["qwen2.block_count"]
        assert cfg["num_attention_heads"] == kv["qwen2.attention.head_count"]
        assert cfg["num_key_value_heads"] == kv["qwen2.attention.head_count_kv"]
        assert cfg["max_position_embeddings"] == kv["qwen2.context_length"]
        assert cfg["rope_theta"] == pytest.approx(kv["qwen2.rope.freq_base"])
        assert cfg["vocab_size"] == tensors["token_embd.weight"][1]
        assert cfg["tie_word_embeddings"] == ("output.weight" not in tensors)


def test_call_2_rehearses_on_the_cpu(tmp_path):
    """``SPECEDIT_GPU_CHECK_CPU=1 bash bench/gpu_check.sh llama``: the installed llama_cpp,
    tiny random models under the catalog names, every step recorded, the same verdict rules
    (complete and correct; the CPU misses the GPU targets: exit 2)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from specedit.bench import gpu_check_results as gr

    root = Path(__file__).resolve().parents[1]
    env = {
        **os.environ,
        "OUT": str(tmp_path),
        "PYTHON": sys.executable,
        "SPECEDIT_GPU_CHECK_CPU": "1",
        "GPU_CHECK_WORK": str(tmp_path / "work"),
        "GPU_CHECK_SIZES": "1-32",
    }
    proc = subprocess.run(
        ["bash", str(root / "bench" / "gpu_check.sh"), "llama"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    s = json.loads((tmp_path / "gpu_check_llama.json").read_text())
    assert proc.returncode == 2 and s["verdict"] == "targets missed", (s["reasons"], proc.stdout)
    planned = [name for name, _, _ in gr.PLANS["llama"]]
    assert all(s["steps"][name]["status"] == "ok" for name in planned), s["steps"]
    assert set(s["checks"].values()) == {True}
    fig = s["figures"]["model_0.5b"]
    assert set(fig["cost_curve_ms"]) >= {"1", "32"} and "speculative_adaptive" in fig
    assert "llama_0.5b_self_copy_vs_plain" in s["targets"]
