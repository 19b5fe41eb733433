"""The Triton verification kernel against the numpy reference (``engine.rejection.verify``).

With explicit uniforms and Exp(1) noise both compute a pure function of the same inputs, so
``num_accepted`` and the tokens must be equal, not close. With position-keyed Philox numbers
(the engine's mode) the kernel, the numpy reference and the torch twin draw the same bits, so
they must agree too. On a machine without CUDA the kernel runs in Triton's interpreter
(TRITON_INTERPRET=1, set here before triton is imported); with CUDA the same cases run on the
GPU and the CPU cases are skipped.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() and "triton" not in sys.modules:
    os.environ.setdefault("TRITON_INTERPRET", "1")
pytest.importorskip("triton")

from specedit.engine.rejection import verify  # noqa: E402
from specedit.engine.sampling import SamplingParams  # noqa: E402
from specedit.kernels import verify_launcher as vl  # noqa: E402
from specedit.kernels.verify_torch import verify_torch  # noqa: E402

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
if not torch.cuda.is_available() and not vl._interpreting():
    pytest.skip(
        "triton was imported before TRITON_INTERPRET=1 could be set", allow_module_level=True
    )

DEVICES = [
    pytest.param("cpu", marks=pytest.mark.skipif(not INTERPRET, reason="needs TRITON_INTERPRET=1")),
    pytest.param(
        "cuda",
        marks=[
            pytest.mark.cuda,
            pytest.mark.skipif(INTERPRET or not torch.cuda.is_available(), reason="needs CUDA"),
        ],
    ),
]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
PLAIN = SamplingParams(temperature=0.8)
FILTERED = SamplingParams(temperature=0.7, top_k=40, top_p=0.83)


def make_case(v, n, dtype, *, probs=False, seed=0, scale=3.0, device="cpu"):
    """Random logits, ~70% of the drafts set to their row's argmax so that runs get accepted."""
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(n + 1, v, generator=g) * scale).to(dtype)
    draft = torch.randint(0, v, (n,), generator=g)
    likely = torch.rand(n, generator=g) < 0.7
    draft = torch.where(likely, logits[:n].float().argmax(-1), draft)
    q = None
    if probs:
        # a draft distribution that puts some mass on the drafted token
        q = torch.softmax(torch.randn(n, v, generator=g) * scale, -1)
        q[torch.arange(n), draft] += 0.5
        q /= q.sum(-1, keepdim=True)
    u = torch.rand(n, generator=g)
    e = torch.empty(n + 1, v).exponential_(generator=g)
    to = lambda t: None if t is None else t.to(device)  # noqa: E731
    return to(logits), to(draft), to(q), to(u), to(e)


def verify_reference(logits, draft, params, q=None, *, uniforms=None, noise=None, position=None):
    """The numpy reference on torch tensors (copied to the CPU): (num_accepted, tokens)."""

    def host(t):
        return None if t is None else t.detach().float().cpu().numpy()

    res = verify(
        host(logits),
        draft.detach().cpu().numpy(),
        params,
        host(q),
        uniforms=host(uniforms),
        noise=host(noise),
        position=position,
    )
    return res.num_accepted, torch.tensor(res.tokens, dtype=torch.int64)


def check(logits, draft, params, q=None, u=None, e=None, **kw):
    """Kernel == reference in explicit-randomness mode; returns (num_accepted, tokens)."""
    j, toks = vl.verify_triton(logits, draft, params, q, uniforms=u, noise=e, **kw)
    rj, rtoks = verify_reference(logits, draft, params, q, uniforms=u, noise=e)
    assert (j, toks.cpu().tolist()) == (rj, rtoks.tolist())
    return j, toks.cpu().tolist()


def split_out(out):
    """The kernel's ``out [n+2]`` as (num_accepted, tokens[:num_accepted + 1])."""
    out = out.cpu()
    j = int(out[0])
    return j, out[1 : j + 2].tolist()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("probs", [False, True], ids=["lookup", "probs"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", [1, 4, 16])
@pytest.mark.parametrize("v", [111, 4096])
def test_matches_reference(device, v, n, dtype, probs):
    for seed in range(2):
        logits, draft, q, u, e = make_case(v, n, dtype, probs=probs, seed=seed, device=device)
        check(logits, draft, PLAIN, q, u, e)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("v", "n", "dtype", "probs"),
    [
        (111, 1, torch.float32, False),
        (111, 4, torch.float16, True),
        (111, 16, torch.bfloat16, False),
        (111, 16, torch.float32, True),
        (4096, 4, torch.bfloat16, True),
        (4096, 16, torch.float16, False),
    ],
)
def test_matches_reference_top_k_top_p(device, v, n, dtype, probs):
    logits, draft, q, u, e = make_case(v, n, dtype, probs=probs, seed=1, device=device)
    for params in (
        FILTERED,
        SamplingParams(temperature=1.3, top_k=7),
        SamplingParams(temperature=0.9, top_p=0.61),
    ):
        check(logits, draft, params, q, u, e)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("n", "dtype", "params", "probs"),
    [
        (16, torch.float32, SamplingParams(), False),
        (4, torch.bfloat16, PLAIN, True),
        (16, torch.float16, PLAIN, False),
        (1, torch.bfloat16, SamplingParams(temperature=0.7, top_k=50, top_p=0.9), False),
    ],
    ids=["greedy", "plain-probs", "plain", "top-k-top-p"],
)
def test_full_vocabulary(device, n, dtype, params, probs):
    logits, draft, q, u, e = make_case(151936, n, dtype, probs=probs, seed=3, device=device)
    check(logits, draft, params, q, u, e)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("probs", [False, True], ids=["lookup", "probs"])
def test_all_accepted_gives_bonus(device, probs):
    logits, _, q, _, e = make_case(4096, 8, torch.float32, probs=probs, seed=4, device=device)
    draft = logits[:8].argmax(-1)
    if q is None:  # a lookup draft is kept iff it is the row's own draw argmax(p / E)
        draft = (torch.softmax(logits[:8] / PLAIN.temperature, -1) / e[:8]).argmax(-1)
    u = torch.zeros(8, device=device)
    if q is not None:
        q[torch.arange(8), draft] = 1e-3  # p(x) / q(x) > 1: accepted whatever u is
    j, toks = check(logits, draft, PLAIN, q, u, e)
    assert j == 8 and len(toks) == 9


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("probs", [False, True], ids=["lookup", "probs"])
def test_first_rejected(device, probs):
    logits, _, q, u, e = make_case(111, 5, torch.float16, probs=probs, seed=5, device=device)
    draft = logits[:5].argmin(-1)  # p(x) ~ 0
    j, toks = check(logits, draft, FILTERED, q, u, e)  # x is outside the top-k: p(x) = 0
    assert j == 0 and toks[0] != draft[0]
    u = torch.full((5,), 0.999, device=device)
    assert check(logits, draft, PLAIN, q, u, e)[0] == 0
    if q is not None:
        q[0, draft[0]] = 0.0  # q(x) = 0 rejects even with u = 0
        assert check(logits, draft, PLAIN, q, u * 0, e)[0] == 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_greedy(device, dtype):
    logits, draft, q, _, _ = make_case(4096, 16, dtype, probs=True, seed=6, device=device)
    # ties at the maximum: the first index wins, as np.argmax
    logits[3, 7] = logits[3, 3000] = logits[3].max() + 1  # in different slices below
    draft[:3] = logits[:3].float().argmax(-1)
    for params in (SamplingParams(), SamplingParams(temperature=0.9, top_k=1)):
        j, toks = check(logits, draft, params, q)
        assert j >= 3
    draft[3] = 3000
    j, toks = check(logits, draft, SamplingParams(), splits=4, block=512)
    assert j == 3 and toks[3] == 7


@pytest.mark.parametrize("device", DEVICES)
def test_temperature_to_zero_is_argmax(device):
    logits, draft, q, u, e = make_case(4096, 6, torch.float32, probs=True, seed=7, device=device)
    draft[:] = logits[:6].argmax(-1)
    draft[4] = (draft[4] + 1) % 4096
    for qq in (None, q):
        j, toks = check(logits, draft, SamplingParams(temperature=1e-4), qq, u, e)
        assert toks == logits[: j + 1].argmax(-1).tolist()
        if qq is None:
            assert j == 4


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_ties_at_the_top_p_and_top_k_boundaries(device, dtype):
    """Integer logits: big tie groups, kept in index order like the reference's stable sort."""
    g = torch.Generator().manual_seed(8)
    for v in (111, 2000):
        logits = torch.randint(0, 6, (5, v), generator=g).to(dtype).to(device)
        draft = torch.randint(0, v, (4,), generator=g).to(device)
        u = torch.rand(4, generator=g).to(device)
        e = torch.empty(5, v).exponential_(generator=g).to(device)
        for params in (
            SamplingParams(temperature=1.0, top_p=0.377),
            SamplingParams(temperature=0.5, top_k=v // 3, top_p=0.713),
            SamplingParams(temperature=2.0, top_k=v // 7),
        ):
            check(logits, draft, params, None, u, e)


@pytest.mark.parametrize("device", DEVICES)
def test_slices_do_not_change_results(device):
    logits, draft, q, u, e = make_case(1000, 3, torch.bfloat16, probs=True, seed=9, device=device)
    runs = [check(logits, draft, PLAIN, q, u, e, splits=s, block=128) for s in (1, 3, 8)]
    assert runs[0] == runs[1] == runs[2]
    seeded = [
        vl.verify_triton(logits, draft, PLAIN, q, seed=5, position=99, splits=s, block=128)
        for s in (1, 5)
    ]
    assert seeded[0][0] == seeded[1][0] and seeded[0][1].tolist() == seeded[1][1].tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_seeded_is_reproducible(device):
    logits, draft, q, _, _ = make_case(111, 4, torch.float32, probs=True, seed=10, device=device)
    a = vl.verify_triton(logits, draft, FILTERED, q, seed=1, position=0)
    b = vl.verify_triton(logits, draft, FILTERED, q, seed=1, position=0)
    assert a[0] == b[0] and a[1].tolist() == b[1].tolist()
    outs = {
        tuple(vl.verify_triton(logits, draft, PLAIN, seed=1, position=t)[1].tolist())
        for t in range(0, 30, 5)
    }
    assert len(outs) > 1


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("probs", [False, True], ids=["lookup", "probs"])
@pytest.mark.parametrize(
    "params",
    [SamplingParams(), PLAIN, FILTERED, SamplingParams(temperature=1.3, top_k=7)],
    ids=["greedy", "plain", "filtered", "top-k"],
)
def test_position_keyed_matches_numpy_and_torch(device, params, probs):
    """The engine's mode: kernel, numpy reference and torch twin give the same tokens."""
    for seed in range(4):
        logits, draft, q, _, _ = make_case(
            111, 6, torch.float32, probs=probs, seed=seed, device=device
        )
        p = SamplingParams(params.temperature, params.top_k, params.top_p, seed=1000 + seed)
        pos = 17 * seed
        got = vl.verify_triton(logits, draft, p, q, position=pos)
        ref = verify_reference(logits, draft, p, q, position=pos)
        twin = split_out(verify_torch(logits, draft, p, q, position=pos))
        assert (got[0], got[1].tolist()) == (ref[0], ref[1].tolist()) == twin


@pytest.mark.parametrize("device", DEVICES)
def test_kernel_philox_bits_match_numpy_and_torch(device):
    """tl.randint4x, engine.sampling.philox4x32 and kernels.verify_torch.philox4x32: one stream."""
    import triton
    import triton.language as tl

    from specedit.engine.sampling import philox4x32 as np_philox
    from specedit.kernels.verify_torch import philox4x32 as torch_philox

    @triton.jit
    def bits_kernel(out_ptr, ctr_ptr, seed, N: tl.constexpr):
        i = tl.arange(0, N)
        r0, r1, r2, r3 = tl.randint4x(seed, tl.load(ctr_ptr + i))
        tl.store(out_ptr + i, r0)
        tl.store(out_ptr + N + i, r1)
        tl.store(out_ptr + 2 * N + i, r2)
        tl.store(out_ptr + 3 * N + i, r3)

    ctr = torch.tensor(
        [0, 1, 2, (5 << 32) + 3, (123456 << 32) | 77, (2**31 - 1) << 32] + list(range(10))
    )
    for seed in (0, 7, 2**40 + 5, 2**63 - 1):
        out = torch.zeros(4 * 16, dtype=torch.int32, device=device)
        bits_kernel[(1,)](out, ctr.to(device), seed, N=16)
        got = out.cpu().numpy().view(np.uint32).reshape(4, 16)
        assert np.array_equal(got, np_philox(seed, ctr.numpy()))
        assert np.array_equal(got, torch_philox(seed, ctr).numpy().astype(np.uint32))


@pytest.mark.parametrize("device", DEVICES)
def test_async_outputs_and_counter_reset(device):
    logits, draft, q, u, e = make_case(111, 6, torch.float32, seed=11, device=device)
    for _ in range(2):  # the arrival counter is reset by the last program
        out = vl.verify_triton_async(logits, draft, PLAIN, uniforms=u, noise=e)
        j, ref = verify_reference(logits, draft, PLAIN, uniforms=u, noise=e)
        assert out.dtype == torch.int64 and out.shape == (8,) and int(out[0]) == j
        assert out[1:].tolist() == ref.tolist() + [-1] * (6 - j)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("params", [SamplingParams(), FILTERED], ids=["greedy", "filtered"])
def test_no_draft_samples_one_token(device, params):
    logits, draft, _, u, e = make_case(111, 0, torch.float32, seed=12, device=device)
    j, toks = check(logits, draft, params, None, u, e)
    assert j == 0 and len(toks) == 1


@pytest.mark.parametrize("device", DEVICES)
def test_rejects_bad_inputs(device):
    logits, draft, q, u, e = make_case(111, 4, torch.float32, probs=True, device=device)
    with pytest.raises(AssertionError):
        vl.verify_triton(logits[:4], draft, PLAIN, seed=0)
    with pytest.raises(AssertionError):
        vl.verify_triton(logits.t().contiguous().t(), draft, PLAIN, seed=0)
    with pytest.raises(AssertionError):
        vl.verify_triton(logits, draft, PLAIN, q[:, :50], seed=0)
    with pytest.raises(AssertionError):
        vl.verify_triton(logits, draft, PLAIN, uniforms=u)


def chi_square(counts: np.ndarray, p: np.ndarray) -> tuple[float, int]:
    """Pearson's statistic over the support of p, bins with expectation < 5 pooled."""
    expected = counts.sum() * p
    small = expected < 5
    obs = np.append(counts[~small], counts[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    keep = exp > 0
    stat = float(((obs[keep] - exp[keep]) ** 2 / exp[keep]).sum())
    return stat, int(keep.sum()) - 1


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("probs", [False, True], ids=["lookup", "probs"])
def test_in_kernel_rng_preserves_target_distribution(device, probs):
    """The first output token of seeded calls is distributed as p_0, whatever the draft."""
    from specedit.engine.sampling import probs as target_probs

    v, draws = 7, 200  # each a kernel launch in the interpreter on CI
    logits = torch.tensor([[1.0, 2.0, 0.5, -1.0, 1.5, 0.0, -3.0]] * 2, device=device)
    p = target_probs(logits[0].cpu().numpy(), PLAIN)
    draft = torch.tensor([1], device=device)  # p(x) ~ 0.4: both branches are exercised
    q, q_np = None, np.zeros(v)
    q_np[1] = 1.0
    if probs:  # then the draft must be a draw from q for the output to follow p
        q_np = np.array([0.05, 0.6, 0.05, 0.2, 0.05, 0.04, 0.01])
        q = torch.tensor(q_np[None, :], dtype=torch.float32, device=device)
    rng = np.random.default_rng(7)
    counts = np.zeros(v, dtype=np.int64)
    accepted = 0
    for i in range(draws):
        if probs:
            draft[0] = int(rng.choice(v, p=q_np))
        j, toks = vl.verify_triton(logits, draft, PLAIN, q, seed=2024, position=i)
        counts[int(toks[0])] += 1
        accepted += j
    stat, df = chi_square(counts, p)
    # generous: the 0.999 quantile of chi2(df <= 6) is below 23
    assert stat < 30.0, (stat, df, counts, p * draws)
    rate = float(np.minimum(p, q_np).sum())  # P(accept) = sum_x min(p(x), q(x))
    assert abs(accepted / draws - rate) < 4 * np.sqrt(rate * (1 - rate) / draws)


@pytest.mark.parametrize(
    "params", [SamplingParams(), PLAIN, FILTERED], ids=["greedy", "plain", "filtered"]
)
@pytest.mark.parametrize("probs", [False, True], ids=["lookup", "probs"])
def test_torch_twin_matches_reference(params, probs):
    """The torch twin (fallback and baseline) is the same function (CPU torch, no triton)."""
    for seed in range(3):
        logits, draft, q, u, e = make_case(111, 6, torch.float32, probs=probs, seed=seed)
        out = verify_torch(logits, draft, params, q, uniforms=u, noise=e)
        rj, rtoks = verify_reference(logits, draft, params, q, uniforms=u, noise=e)
        assert int(out[0]) == rj and out[1 : rj + 2].tolist() == rtoks.tolist()
        assert (out[rj + 2 :] == -1).all()


@pytest.mark.parametrize("device", DEVICES)
def test_bench_runs(device):
    from specedit.bench.kernel_bench import run

    if device == "cpu":
        kw = {"vocab": 64, "n": 2, "reps": 1, "cases": ("greedy", "sample-probs"), "splits": (1,)}
    else:
        kw = {"vocab": 4096, "n": 8, "reps": 3, "splits": (1, 4)}
    record = run(device=device, **kw)
    assert all(r["agree"] and r["agree_seeded"] for r in record["results"]), record


@pytest.mark.skipif(not INTERPRET, reason="the CUDA cases already compile the kernel")
def test_kernel_compiles_for_sm90():
    """No GPU here: compile the kernel's variants for sm_90 in a process without the interpreter."""
    import json
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    cmd = [sys.executable, "-m", "specedit.bench.kernel_bench", "--compile-only", "--quick"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 and "GPUTarget" in proc.stderr + proc.stdout:
        pytest.skip("this triton build cannot compile for CUDA without a GPU")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout)
    assert len(record["variants"]) == 3
