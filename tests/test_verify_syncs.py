"""Host syncs of the device verifier, counted on the CPU.

``bench/gpu_check_syncs.SyncCounter`` sees every ``.item()`` (``aten._local_scalar_dense``),
data-dependent shape and blocking device-to-host copy through a dispatch mode, on any device,
plus the explicit sync calls; here the step's read-back (``TorchTarget.readback``, a copy on
the CPU, the one sync on CUDA) is counted as the explicit sync it is on CUDA. The torch
fallback verifier must make none of its own, so a device step makes exactly one.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from torch_tiny import tiny_model, tiny_tokenizer  # noqa: E402

from specedit.bench.gpu_check_syncs import (  # noqa: E402
    CountingVerifier,
    SyncCounter,
    syncs_per_step,
)
from specedit.engine.decode import GenConfig, generate  # noqa: E402
from specedit.engine.lookup import LookupDrafter  # noqa: E402
from specedit.engine.policy import PolicyConfig  # noqa: E402
from specedit.engine.sampling import SamplingParams  # noqa: E402
from specedit.engine.verifier import DeviceVerifier  # noqa: E402
from specedit.kernels.verify_torch import verify_torch  # noqa: E402
from specedit.models.torch_backend import TorchTarget  # noqa: E402

TEXT = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n" * 3


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_the_counter_sees_an_index_by_a_device_scalar():
    x = torch.arange(10.0)
    with SyncCounter() as sc:
        j = x.argmax()  # a 0-dim tensor
        _ = x[j]  # what verify_torch used to do with the first rejection: an .item()
    assert sc.total == 1 and sc.by_op == {"aten::_local_scalar_dense": 1}
    with SyncCounter() as sc:
        _ = torch.where(torch.arange(10) == j, x, -1.0)  # elementwise: no sync
        _ = (x > 3).nonzero()  # a data-dependent shape: a sync
    assert sc.total == 1 and "aten::nonzero" in sc.by_op


@pytest.mark.parametrize(
    "params, probs",
    [
        (SamplingParams(), False),
        (SamplingParams(temperature=0.8), False),
        (SamplingParams(temperature=0.7, top_k=20, top_p=0.9), True),
    ],
    ids=["greedy", "sampled", "filtered-probs"],
)
def test_the_torch_fallback_verifier_never_syncs(params, probs):
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 300, generator=g) * 3
    draft = logits[:5].argmax(-1)
    draft[3] = 7  # a rejection in the middle
    q = torch.softmax(torch.randn(5, 300, generator=g), -1) if probs else None
    with SyncCounter() as sc:
        out = verify_torch(logits, draft, params, q, position=11)
    assert sc.total == 0, sc.record()
    assert out.shape == (7,) and 0 <= int(out[0]) <= 5


def test_a_device_step_syncs_once():
    """A long fixed-k run with the torch verifier: exactly one sync per step, the prefill's
    (the first token's read-back) charged apart."""
    target = TorchTarget(tiny_model(0), tiny_tokenizer(), n_ctx=1024, static=True)
    prompt = target.tokenize(TEXT)
    counter = SyncCounter(extra=((TorchTarget, "readback"),))
    verifier = CountingVerifier(DeviceVerifier("torch"), counter)
    cfg = GenConfig(max_tokens=48, policy=PolicyConfig(fixed_k=7))
    with counter:
        r = generate(target, prompt, cfg, LookupDrafter(prompt_len=len(prompt)), verifier=verifier)
    rec = syncs_per_step(counter, verifier)
    assert rec["steps"] == r.metrics.target_calls >= 10
    assert rec["per_step"] == 1.0, rec
    assert rec["by_phase"] == {"prefill": 1, "step": rec["steps"]}, rec
    assert TorchTarget.readback.__name__ == "readback"  # the patch is undone
