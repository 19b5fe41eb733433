"""The verification seam end to end: the Triton verifier (interpreted on CPU tensors) and the
torch twin write the numpy path's text token for token, with lookup drafts, draft-model drafts
(drafted on the device) and the combined proposer, greedy and sampled, exact mode included;
the device path never brings logits to the host; ``choose_verifier`` and its override.

Tiny random Qwen2 models (``torch_tiny``) keep this fast; on a CUDA machine the same tests run
on the GPU with the compiled kernel.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
CUDA = torch.cuda.is_available()
if not CUDA and "triton" not in sys.modules:
    os.environ.setdefault("TRITON_INTERPRET", "1")
pytest.importorskip("triton")

from torch_tiny import tiny_model, tiny_tokenizer  # noqa: E402

from specedit.engine.backend import DeviceTarget  # noqa: E402
from specedit.engine.combined import CombinedDrafter  # noqa: E402
from specedit.engine.decode import GenConfig, generate  # noqa: E402
from specedit.engine.draft_model import ModelDrafter  # noqa: E402
from specedit.engine.lookup import LookupDrafter  # noqa: E402
from specedit.engine.policy import AdaptivePolicy, PolicyConfig  # noqa: E402
from specedit.engine.sampling import SamplingParams  # noqa: E402
from specedit.engine.verifier import (  # noqa: E402
    DeviceVerifier,
    HostVerifier,
    calibration_target,
    choose_verifier,
)
from specedit.models.torch_backend import TorchTarget  # noqa: E402

DEVICE = "cuda" if CUDA else "cpu"
if not CUDA and os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip(
        "triton was imported before TRITON_INTERPRET=1 could be set", allow_module_level=True
    )

TEXT = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n" * 3
GREEDY = SamplingParams()
SAMPLED = SamplingParams(temperature=0.9, top_p=0.95, seed=5)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _target(seed: int = 0, **kw) -> TorchTarget:
    model = tiny_model(seed).to(DEVICE)
    return TorchTarget(model, tiny_tokenizer(), n_ctx=1024, name=f"tiny{seed}", **kw)


class NoHostLogits(TorchTarget):
    """A target whose host ``eval`` raises: the device path must never need it."""

    def eval(self, tokens, pos, want):
        raise AssertionError("the device path called the host eval")


def _drafter(kind: str, target, prompt, sampling, policy, device: bool):
    if kind == "lookup":
        return LookupDrafter(prompt_len=len(prompt))
    draft = _target(1, static=device)
    model = ModelDrafter(draft, sampling, target=target, policy=policy, device=device)
    if kind == "model":
        return model
    return CombinedDrafter(LookupDrafter(prompt_len=len(prompt)), model, policy)


def _run(verifier, kind: str, sampling, *, exact: int | None = None, k: int = 5, cls=TorchTarget):
    device = verifier.name != "numpy"
    target = cls(tiny_model(0).to(DEVICE), tiny_tokenizer(), n_ctx=1024, static=device)
    prompt = target.tokenize(TEXT)
    policy = AdaptivePolicy(PolicyConfig(fixed_k=k))
    drafter = _drafter(kind, target, prompt, sampling, policy, device)
    cfg = GenConfig(max_tokens=36, sampling=sampling, policy=policy.cfg, exact_block=exact)
    return generate(target, prompt, cfg, drafter, policy=policy, verifier=verifier)


@pytest.mark.parametrize("sampling", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
@pytest.mark.parametrize("kind", ["lookup", "model", "combined"])
def test_triton_verifier_writes_the_numpy_text(kind, sampling):
    ref = _run(HostVerifier(), kind, sampling)
    got = _run(DeviceVerifier("triton"), kind, sampling, cls=NoHostLogits)
    assert got.tokens == ref.tokens
    assert got.metrics.verifier == "triton" and ref.metrics.verifier == "numpy"
    assert ref.metrics.drafted_tokens > 0 and ref.metrics.accepted_tokens > 0
    if kind != "combined":  # the combined drafter chooses by measured costs: by the clock
        assert got.metrics.accepted_tokens == ref.metrics.accepted_tokens


@pytest.mark.parametrize("sampling", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
@pytest.mark.parametrize("kind", ["lookup", "model"])
def test_exact_mode_on_the_device(kind, sampling):
    """Sub-blocks of 2 evaluated one by one, their rows verified in one launch."""
    ref = _run(HostVerifier(), kind, sampling, exact=2)
    got = _run(DeviceVerifier("triton"), kind, sampling, exact=2, cls=NoHostLogits)
    assert got.tokens == ref.tokens and got.metrics.exact
    plain = _run(HostVerifier(), "lookup", sampling, k=0)
    if kind == "lookup":  # lookup drafts keep plain sampling's text, whatever the blocks
        assert got.tokens == plain.tokens


@pytest.mark.parametrize("sampling", [GREEDY, SAMPLED], ids=["greedy", "sampled"])
def test_torch_twin_writes_the_numpy_text(sampling):
    ref = _run(HostVerifier(), "combined", sampling)
    got = _run(DeviceVerifier("torch"), "combined", sampling, cls=NoHostLogits)
    assert got.tokens == ref.tokens and got.metrics.verifier == "torch"


def test_sampled_lookup_output_is_plain_sampling():
    """The coupled rule on the device: speculative text == plain text for the same seed."""
    plain = _run(HostVerifier(), "lookup", SAMPLED, k=0)
    spec = _run(DeviceVerifier("triton"), "lookup", SAMPLED, k=7, cls=NoHostLogits)
    assert spec.tokens == plain.tokens and spec.metrics.accepted_tokens > 0
    assert spec.metrics.target_calls < plain.metrics.target_calls


def test_device_draft_keeps_q_on_the_device_and_matches_the_host_drafter():
    target = _target(0)
    prompt = target.tokenize(TEXT)
    host = ModelDrafter(_target(1), SAMPLED, device=False).draft_tokens(prompt, 4)
    dev = ModelDrafter(_target(1, static=True), SAMPLED, device=True).draft_tokens(prompt, 4)
    assert isinstance(dev.probs, torch.Tensor) and dev.probs.device.type == DEVICE
    assert dev.tokens.tolist() == host.tokens.tolist()
    np.testing.assert_allclose(dev.probs.cpu().numpy(), host.probs, atol=1e-5)


def test_calibration_times_the_device_step_not_a_host_copy():
    target = NoHostLogits(tiny_model(0), tiny_tokenizer(), n_ctx=1024, static=True)
    view = calibration_target(target, DeviceVerifier("triton"))
    pol = AdaptivePolicy(PolicyConfig())
    pol.calibrate(view, target.tokenize(TEXT), 0, sizes=(1, 4, 8), repeats=1)
    assert set(pol._cost) == {1, 4, 8} and all(c > 0 for c in pol._cost.values())
    assert calibration_target(target, HostVerifier()) is target


def test_choose_verifier():
    from toy import ToyModel

    cpu = _target(0) if not CUDA else None
    if cpu is not None:  # logits on the CPU: the numpy path
        assert choose_verifier(cpu).name == "numpy"
    assert choose_verifier(ToyModel()).name == "numpy"
    assert isinstance(_target(0), DeviceTarget) and not isinstance(ToyModel(), DeviceTarget)
    for name in ("numpy", "triton", "torch"):
        assert choose_verifier(_target(0), name).name == name
        assert choose_verifier(_target(0, verifier=name)).name == name  # the load's choice
    with pytest.raises(ValueError, match="needs a target whose logits stay on a device"):
        choose_verifier(ToyModel(), "triton")
    with pytest.raises(ValueError, match="use one of numpy, triton, torch"):
        choose_verifier(_target(0), "cuda")


def test_load_config_takes_the_environment_switches_once():
    from specedit.app.options import LoadConfig, with_env

    env = {"SPECEDIT_VERIFIER": " Torch ", "SPECEDIT_TORCH_DEVICE": "cpu"}
    env["SPECEDIT_TORCH_CACHE"] = "0"
    cfg = with_env(LoadConfig(), env)
    assert (cfg.verifier, cfg.fallback_device, cfg.torch_cache) == ("torch", "cpu", False)
    given = LoadConfig(verifier="numpy", fallback_device="cuda:1")
    assert with_env(given, env).verifier == "numpy"  # a given field wins
    assert with_env(given, env).fallback_device == "cuda:1"
    assert with_env(LoadConfig(), {}) == LoadConfig()


def test_kernel_support_says_what_runs():
    from specedit.kernels.support import kernel_support

    ok, why = kernel_support(DEVICE)
    assert ok, why
    assert "Triton" in why
    if not CUDA:
        ok, why = kernel_support("cuda")
        assert not ok and "no CUDA device" in why


@pytest.mark.skipif(not CUDA, reason="sync counting needs CUDA")
def test_one_sync_per_step_on_cuda():
    """Every host sync of lookup-drafted steps counted (``bench/gpu_check_syncs``: explicit
    sync calls, ``.item()``-like ops, sync-debug warnings), the prefill's charged apart."""
    from specedit.bench.gpu_check_syncs import CountingVerifier, SyncCounter, syncs_per_step

    target = _target(0, static=True)
    prompt = target.tokenize(TEXT)
    cfg = GenConfig(max_tokens=40, policy=PolicyConfig(fixed_k=7))
    generate(target, prompt, cfg, LookupDrafter(prompt_len=len(prompt)))  # graphs captured
    target.rollback(0)
    counter = SyncCounter()
    verifier = CountingVerifier(choose_verifier(target), counter)
    with counter:
        generate(target, prompt, cfg, LookupDrafter(prompt_len=len(prompt)), verifier=verifier)
    rec = syncs_per_step(counter, verifier)
    assert rec["steps"] >= 4 and rec["per_step"] <= 1.0, rec
