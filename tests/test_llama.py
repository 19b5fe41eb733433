"""The llama.cpp backend and the engine on the real 0.5B catalog model."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from specedit.app.edit.rewrite import rewrite
from specedit.app.options import RewriteOptions
from specedit.app.runtime.prompt import splice
from specedit.app.runtime.stream import StreamDecoder
from specedit.engine.backend import TargetModel
from specedit.engine.decode import GenConfig, generate
from specedit.engine.lookup import LookupDrafter
from specedit.engine.policy import PolicyConfig
from specedit.engine.sampling import SamplingParams

pytestmark = pytest.mark.model
STDLIB = Path(sysconfig.get_paths()["stdlib"])

LONG = os.environ.get("SPECEDIT_LONG") == "1"  # make test-long (tests/conftest.py)


def _head(name: str, lines: int) -> str:
    return "".join((STDLIB / name).read_text().splitlines(keepends=True)[:lines])


def test_backend_implements_protocol_and_returns_only_wanted_rows(qwen05):
    t = qwen05.target
    assert isinstance(t, TargetModel)
    ids = t.tokenize("def add(a, b):\n    return a + b\n")
    full = t.eval(ids, 0, range(len(ids)))
    assert full.shape == (len(ids), t.n_vocab)
    last = np.array(full[-1])
    t.rollback(0)
    one = t.eval(ids, 0, [len(ids) - 1])
    assert one.shape == (1, t.n_vocab)
    # same block: asking for fewer rows only changes the output layer's batch
    assert np.allclose(one[0], last, atol=1e-3)
    # rollback, then the same tail block again reproduces its logits bit for bit
    t.rollback(0)
    t.eval(ids[:-3], 0, [0])
    first = np.array(t.eval(ids[-3:], len(ids) - 3, [2])[0])
    t.rollback(len(ids) - 3)
    again = t.eval(ids[-3:], len(ids) - 3, [2])
    assert np.array_equal(again[0], first)
    assert int(np.argmax(again[0])) == int(np.argmax(last))
    assert not again.flags.owndata  # a view into llama.cpp's logits buffer, not a copy
    t.rollback(0)


def test_stream_decoder_never_splits_utf8(qwen05):
    t = qwen05.target
    text = "naïve café 日本語 😀 done"
    ids = t.tokenize(text)
    dec = StreamDecoder(t)
    pieces = [dec.feed([i]) for i in ids] + [dec.flush()]
    assert "".join(pieces) == text
    assert all("\ufffd" not in p for p in pieces)


def test_exactness_self_check_ran(qwen05):
    assert qwen05.exact_block >= 1
    assert set(qwen05.exact_deltas) == {2, 4, 8, 16, 32}
    if qwen05.batch_exact:
        assert qwen05.exact_block == 32


@pytest.mark.parametrize(
    "name",
    # one file in the default suite; the other two in make test-long (tests/conftest.py)
    [
        pytest.param("textwrap.py", marks=pytest.mark.long),
        "bisect.py",
        pytest.param("colorsys.py", marks=pytest.mark.long),
    ],
)
def test_greedy_speculative_equals_plain_exact_mode(qwen05, name):
    text = _head(name, 30 if LONG else 18)
    instr = "Output the file exactly as it is."
    # the whole file written out (edit blocks would write next to nothing to compare)
    plain = rewrite(qwen05, text, RewriteOptions(instr, draft="none", edit="whole"), path=name)
    exact = rewrite(qwen05, text, RewriteOptions(instr, exact=True, edit="whole"), path=name)
    assert exact.raw == plain.raw  # bit-exact sub-blocks: token-identical to plain decoding
    s = exact.metrics.snapshot()
    assert s["exact"] and s["generated_tokens"] > 60
    assert plain.metrics.snapshot()["tokens_per_call"] == 1.0
    if qwen05.exact_block > 1:
        assert s["tokens_per_call"] > 1.5, s
    # the 0.5B model copies nearly verbatim (it may drop a comment line)
    assert len(plain.hunks) <= 2 and abs(len(plain.new_text) - len(text)) < 0.1 * len(text)


def test_default_mode_copies_many_tokens_per_call(qwen05):
    qwen05.target.rollback(0)  # a cold cache: the run pays its own prefill
    text = _head("bisect.py", 30)
    # a fixed k: the adaptive policy picks blocks from measured call times (and its guard may
    # turn speculation off on a loaded machine), which belongs to benchmarks
    opts = RewriteOptions("Output the file exactly as it is.", edit="whole", k=15)
    fast = rewrite(qwen05, text, opts)
    f = fast.metrics.snapshot()
    assert not f["exact"]
    assert f["tokens_per_call"] > 2.0, f  # copying: many tokens per target call
    assert f["acceptance_by_source"].get("file", 0) > 0.5, f  # drafts come from the file


def test_edit_changes_only_the_asked_lines(qwen05):
    # the two YIQ functions (the module docstring would be most of the file's head)
    text = "".join(_head("colorsys.py", 55).splitlines(keepends=True)[36:])
    # exact: the model's text is asserted (inexact blocks could change it)
    # whole: the 0.5B's blocks for this rename are malformed, and auto falls back to it
    instruction = "Rename the function rgb_to_yiq to rgb_to_yiq_space."
    res = rewrite(qwen05, text, RewriteOptions(instruction, exact=True, edit="whole"), path="c.py")
    assert res.status == "ok"
    assert "def rgb_to_yiq_space(" in res.new_text
    assert 1 <= len(res.hunks) <= 6  # the small model sometimes renames a sibling too
    assert res.diff.startswith("--- a/c.py")


def test_sampling_run_is_seeded(qwen05):
    t = qwen05.target
    prompt = t.tokenize("Once upon a time")
    sp = SamplingParams(temperature=0.9, top_p=0.95, seed=3)
    # the same seed, the same blocks: exact sub-blocks (adaptive blocks follow the timing)
    cfg = GenConfig(max_tokens=24, sampling=sp, exact_block=qwen05.exact_block)
    t.rollback(0)
    a = generate(t, prompt, cfg, LookupDrafter())
    t.rollback(0)
    b = generate(t, prompt, cfg, LookupDrafter())
    assert a.tokens == b.tokens and len(a.tokens) == 24


def test_region_rewrite_keeps_the_rest_byte_identical(qwen05):
    text = _head("bisect.py", 40)
    lines = text.splitlines(keepends=True)
    opts = RewriteOptions(instruction="Output this part exactly as it is.", region=(2, 12))
    res = rewrite(qwen05, text, opts, path="bisect.py")
    assert res.status == "ok"
    new_lines = res.new_text.splitlines(keepends=True)
    assert new_lines[:2] == lines[:2]
    assert new_lines[-(len(lines) - 12) :] == lines[12:]


def test_prompt_spans_label_the_file(qwen05):
    msgs = [{"role": "user", "content": "Look: \x00SPECEDIT_FILE\x00 ok"}]
    ids, spans = splice(qwen05.target, msgs, "", {"\x00SPECEDIT_FILE\x00": "x = 1\n"})
    ((s, e, label),) = spans
    assert label == "file"
    assert qwen05.target.detokenize(ids[s:e]).decode() == "x = 1\n"


def test_fixed_k_and_plain_share_the_loop(qwen05):
    t = qwen05.target
    text = _head("heapq.py", 20)
    prompt = t.tokenize(text + text[:200])
    plain = generate(t, prompt, GenConfig(max_tokens=40, speculate=False))
    spec = generate(
        t,
        prompt,
        GenConfig(max_tokens=40, policy=PolicyConfig(fixed_k=4), exact_block=qwen05.exact_block),
        LookupDrafter(prompt_len=len(prompt)),
    )
    assert spec.tokens == plain.tokens
    assert spec.metrics.accepted_tokens > 0
    if qwen05.exact_block > 1:  # exact sub-blocks of 1 token are one call each
        assert spec.metrics.target_calls < plain.metrics.target_calls


# ---- offload: what runs where (this machine's build is CPU only) ----------------------


def test_loaded_target_reports_cpu_placement(qwen05):
    t = qwen05.target
    assert t.device_name == "CPU" and t.n_gpu_layers == 0
    assert t.n_layers == 25 and t.gpu_layers == "0/25"  # 24 blocks + the output layer
    d = t.describe()
    assert d == {
        "device": "CPU",
        "gpu_layers": "0/25",
        "threads": t.threads,
        "llama_cpp": d["llama_cpp"],
    }
    assert d["llama_cpp"].startswith("llama-cpp-python ") and t.threads >= 1
    s = qwen05.describe()  # the loaded model's description carries the target's
    assert (s["device"], s["gpu_layers"], s["backend"]) == ("CPU", "0/25", "llama.cpp")


def test_cpu_build_auto_offloads_nothing_and_explicit_offload_is_refused(qwen05_path):
    from specedit.engine.backend import ModelError
    from specedit.models.llama_build import gguf_layer_count
    from specedit.models.llama_cpp_backend import llama_build, resolve_gpu_layers

    build = llama_build()
    if build.gpu_offload:
        pytest.skip("needs the CPU-only build CI and our machines get")
    n = gguf_layer_count(qwen05_path)
    assert n == 25
    layers, why = resolve_gpu_layers("auto", build, n)
    assert layers == 0
    assert why == f"auto: CPU, llama-cpp-python {build.version} (CPU) has no GPU backend"
    with pytest.raises(ModelError, match=r"^--gpu-layers all needs a GPU build of llama\.cpp"):
        resolve_gpu_layers("all", build, n)


def test_model_loads_with_offload_asked_and_reports_the_cpu(qwen05_path):
    from specedit.models.llama_cpp_backend import LlamaTarget, llama_build

    if llama_build().gpu_offload:
        pytest.skip("needs the CPU-only build CI and our machines get")
    # -1 (all layers) is passed to llama.cpp as is; a CPU build keeps them on the CPU
    t = LlamaTarget(qwen05_path, n_ctx=256, n_threads=1, n_gpu_layers=-1)
    try:
        assert (t.device_name, t.gpu_layers, t.threads) == ("CPU", "0/25", 1)
        ids = t.tokenize("x = 1\n")
        assert t.eval(ids, 0, [len(ids) - 1]).shape == (1, t.n_vocab)
    finally:
        t.close()


def test_layer_count_of_a_broken_file_is_a_model_error(tmp_path):
    from specedit.engine.backend import ModelError
    from specedit.models.llama_build import gguf_layer_count

    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 8)
    with pytest.raises(ModelError, match="cannot read its GGUF header"):
        gguf_layer_count(bad)
