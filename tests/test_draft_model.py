"""Draft-model proposer and the combined proposer: exactness, cache sync, vocab check.

Toy numpy models and tiny random torch models keep these fast; two real checks use the
catalog models on llama.cpp (0.5B drafting for itself; a 135M draft with another vocabulary).
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from toy import ToyModel

from specedit.engine.backend import ModelError, shared_prefix
from specedit.engine.combined import CombinedDrafter
from specedit.engine.decode import GenConfig, generate
from specedit.engine.draft_model import ModelDrafter, check_vocab, measure_draft
from specedit.engine.lookup import LookupDrafter
from specedit.engine.policy import AdaptivePolicy, PolicyConfig
from specedit.engine.sampling import SamplingParams


def _named(model, name):
    model.name = name
    return model


PROMPT = [int(x) for x in np.random.default_rng(3).integers(0, 64, 40)] * 2


def test_vocab_mismatch_names_both_models():
    with pytest.raises(ModelError, match=r"draft model small .*64 tokens.*target big has 80"):
        check_vocab(_named(ToyModel(64), "small"), _named(ToyModel(80), "big"))
    with pytest.raises(ModelError, match="small"):
        ModelDrafter(_named(ToyModel(64), "small"), SamplingParams(), target=ToyModel(80))


def test_same_model_drafts_are_all_accepted_and_greedy_equals_plain():
    target = ToyModel(64, seed=1)
    plain = generate(target, PROMPT, GenConfig(max_tokens=50, speculate=False))
    drafter = ModelDrafter(ToyModel(64, seed=1), SamplingParams(), target=target)
    target.rollback(0)
    cfg = GenConfig(max_tokens=50, policy=PolicyConfig(fixed_k=4))
    spec = generate(target, PROMPT, cfg, drafter)
    assert spec.tokens == plain.tokens
    m = spec.metrics
    assert m.drafted_tokens > 0 and m.acceptance == 1.0
    assert set(m.snapshot()["acceptance_by_source"]) == {"model"}
    assert m.target_calls < plain.metrics.target_calls


def test_other_draft_model_keeps_greedy_output():
    target = ToyModel(64, seed=1)
    plain = generate(target, PROMPT, GenConfig(max_tokens=50, speculate=False))
    drafter = ModelDrafter(ToyModel(64, seed=2, copy_bonus=3.0), SamplingParams())
    target.rollback(0)
    spec = generate(target, PROMPT, GenConfig(max_tokens=50), drafter, policy=AdaptivePolicy())
    assert spec.tokens == plain.tokens
    assert spec.metrics.acceptance < 1.0


def test_cache_follows_the_accepted_prefix():
    draft = ToyModel(64, seed=2)
    d = ModelDrafter(draft, SamplingParams())
    ctx = PROMPT[:30]
    p1 = d.propose(ctx, 4)
    assert len(p1) == 4 and p1.probs is None and p1.source == "model"
    assert draft.toks == ctx + [int(t) for t in p1.tokens[:3]]  # the last draft is not evaluated
    assert draft.calls == [30, 1, 1, 1]
    # the target kept one draft token and recovered another: the draft rolls back, then
    # evaluates only the recovered token
    recovered = (int(p1.tokens[1]) + 1) % 64
    ctx2 = ctx + [int(p1.tokens[0]), recovered]
    p2 = d.propose(ctx2, 3)
    assert draft.calls[4] == 1 and draft.toks[: len(ctx2)] == ctx2
    assert d.tracker.steps[-1] == (4, 1)
    # another proposer advanced the context by many tokens: one catch-up block
    ctx3 = ctx2 + [int(p2.tokens[0])] + PROMPT[33:45]
    d.propose(ctx3, 2)
    assert draft.calls[7] == 12 and draft.toks[: len(ctx3)] == ctx3
    # a new, unrelated prompt: starts over from the common prefix (none)
    d.propose([9, 9, 9], 2)
    assert draft.toks[:3] == [9, 9, 9]


def test_sampled_drafts_carry_q_and_runs_are_reproducible():
    sp = SamplingParams(temperature=0.8, top_p=0.95, seed=7)

    def run(seed):
        target = ToyModel(64, seed=1)
        s = SamplingParams(temperature=0.8, top_p=0.95, seed=seed)
        drafter = ModelDrafter(ToyModel(64, seed=2), s)
        cfg = GenConfig(max_tokens=40, sampling=s, policy=PolicyConfig(fixed_k=3))
        return generate(target, PROMPT, cfg, drafter)

    d = ModelDrafter(ToyModel(64, seed=2), sp).propose(PROMPT, 3)
    assert d.probs.shape == (3, 64)
    np.testing.assert_allclose(d.probs.sum(axis=1), 1.0)
    assert all(d.probs[i, t] > 0 for i, t in enumerate(d.tokens))
    a, b, c = run(7), run(7), run(8)
    assert a.tokens == b.tokens and len(a.tokens) == 40
    assert a.metrics.drafted_tokens > 0 and 0 < a.metrics.acceptance <= 1
    assert c.tokens != a.tokens


def test_adaptive_k_turns_off_a_useless_draft_model():
    target = ToyModel(64, seed=1)
    # a memory-bound target: a 9-token block costs 1.5 one-token steps
    pol = AdaptivePolicy(PolicyConfig(), costs={1: 0.01, 2: 0.011, 4: 0.012, 8: 0.015})
    d = ModelDrafter(ToyModel(64, seed=5), SamplingParams(), policy=pol)
    d.step_s = d.sync_s = 0.01  # as expensive as the target, and always wrong
    for _ in range(8):
        d.tracker.steps.append((4, 0))
    assert d.plan(8)[0] == 0 and d.off_reason
    d.tracker.steps.clear()
    for _ in range(8):
        d.tracker.steps.append((4, 4))
    d.step_s = d.sync_s = 0.0005  # cheap and accurate: draft long...
    k_prior = d.plan(8)[0]
    assert 2 <= k_prior <= 4  # ...but no longer than the policy keeps at its prior alpha
    for _ in range(8):
        pol.observe(5, 0.0125, 4, 4, 5)
    assert d.plan(8)[0] > k_prior
    pol.off_reason = "the guard is on"
    assert d.plan(8)[0] == 0  # the policy would drop the draft: do not make it
    generate(target, PROMPT, GenConfig(max_tokens=10), d, policy=pol)  # runs end to end


def test_measured_costs_skip_a_blind_first_draft():
    step, per_token = measure_draft(ToyModel(64))
    assert step > 0 and per_token > 0
    pol = AdaptivePolicy(PolicyConfig(), costs={1: 0.01, 2: 0.02, 4: 0.04, 8: 0.08})
    draft = ToyModel(64, seed=2)
    d = ModelDrafter(draft, SamplingParams(), policy=pol, costs=(0.01, 0.002))
    assert len(d.propose(PROMPT, 8)) == 0  # a CPU-like cost curve: drafting cannot pay
    assert draft.calls == [] and d.off_reason  # not even the prompt was evaluated


def test_catch_up_is_priced_and_failed_probes_back_off():
    pol = AdaptivePolicy(PolicyConfig(), costs={1: 0.01, 2: 0.011, 4: 0.012, 8: 0.015})
    for _ in range(8):
        pol.observe(5, 0.0125, 4, 4, 5)
    d = ModelDrafter(ToyModel(64, seed=5), SamplingParams(), policy=pol)
    d.step_s = d.sync_s = 0.0005
    d.prefill_tok_s = 0.001
    d.tracker.steps.extend([(4, 4)] * 8)
    assert d.plan(8, gap=2)[0] > 0
    assert d.plan(8, gap=500)[0] == 0  # 0.5 s of catch-up for one step: not worth it
    d.tracker.steps.clear()
    d.tracker.steps.extend([(4, 0)] * 32)  # a useless draft model
    probes = [i for i in range(200) if d.plan(8)[0] > 0]
    assert probes == [30, 94]  # after 32 idle steps (the gap=500 call was one), then 64
    assert [i for i in range(300) if d.plan(8, explore=False)[0] > 0] == []
    d.step_s = d.sync_s = 0.05  # five target steps per draft token: even 90% cannot pay
    assert [i for i in range(600) if d.plan(8)[0] > 0] == []


def test_realized_rate_guard_and_no_wake_up_for_one_lookup_miss():
    pol = AdaptivePolicy(PolicyConfig(), costs={1: 0.01, 2: 0.011, 4: 0.012, 8: 0.015, 64: 0.2})
    for _ in range(8):
        pol.observe(5, 0.0125, 4, 4, 5)
    d = ModelDrafter(ToyModel(1000, seed=5), SamplingParams(), policy=pol)
    d.step_s = d.sync_s = 0.0005
    d.tracker.steps.extend([(4, 4)] * 8)
    assert d.plan(8)[0] > 0
    d.meter.samples["model"] = deque([(3, 1.0)] * 3)  # measured: 3 tok/s with the model
    d.meter.samples["plain"] = deque([(1, 0.1)] * 3)  # and 10 tok/s without
    assert d.plan(8)[0] == 0 and d.realized_loss()
    # a fresh draft model, 300 tokens behind: one lookup miss does not wake it
    model = ModelDrafter(ToyModel(1000, seed=5), SamplingParams(), policy=pol)
    comb = CombinedDrafter(LookupDrafter(), model, pol)
    ctx = [int(x) for x in np.random.default_rng(0).permutation(1000)[:300]]
    assert len(comb.propose(ctx, 8)) == 0 and model.cached == []
    misses = 1
    while not len(comb.propose(ctx, 8)):  # ...a long streak of misses does
        misses += 1
    assert 10 < misses < 100 and model.cached[:300] == ctx


def test_combined_uses_lookup_on_copies_and_the_model_elsewhere():
    target = ToyModel(64, seed=1)
    text = list(range(1, 40))
    prompt = [50, 51] + text + [52] + text[:5]  # the output copies ``text``
    lookup = LookupDrafter(prompt_len=len(prompt))
    pol = AdaptivePolicy(PolicyConfig())
    model = ModelDrafter(ToyModel(64, seed=1), SamplingParams(), policy=pol)
    comb = CombinedDrafter(lookup, model, pol)
    plain = generate(target, prompt, GenConfig(max_tokens=60, speculate=False))
    target.rollback(0)
    res = generate(target, prompt, GenConfig(max_tokens=60), comb, policy=pol)
    assert res.tokens == plain.tokens
    by_source = res.metrics.snapshot()["drafted_by_source"]
    snap = res.metrics.snapshot()
    assert snap["steps_by_source"].get("prompt", 0) > 0 and by_source.get("prompt", 0) > 0
    assert set(snap["acceptance_by_source"]) <= {"prompt", "output", "model"}
    # with no match at all, the model drafts
    d = comb.propose([60, 61, 62, 63], 8)
    assert d.source == "model"


def test_shared_prefix():
    assert shared_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert shared_prefix([], [1]) == 0
    assert shared_prefix([1, 2], [1, 2, 3]) == 2


def test_tiny_torch_draft_for_itself(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from torch_tiny import tiny_dir

    from specedit.models.torch_backend import TorchTarget

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        d = tiny_dir(tmp_path / "m")
        target = TorchTarget.from_gguf_or_dir(d, n_ctx=1024, name="tiny")
        draft = TorchTarget.from_gguf_or_dir(d, n_ctx=1024, name="tiny-draft")
        prompt = target.tokenize("def add(a, b):\n    return a + b\n" * 2)
        plain = generate(target, prompt, GenConfig(max_tokens=40, speculate=False))
        drafter = ModelDrafter(draft, SamplingParams(), target=target)
        target.rollback(0)
        cfg = GenConfig(max_tokens=40, policy=PolicyConfig(fixed_k=4))
        spec = generate(target, prompt, cfg, drafter)
        assert spec.tokens == plain.tokens
        assert spec.metrics.acceptance >= 0.9
    finally:
        torch.set_num_threads(threads)


@pytest.mark.model
def test_real_vocab_mismatch(qwen05, smollm_path):
    from specedit.models.llama_cpp_backend import LlamaTarget

    small = LlamaTarget(smollm_path, n_ctx=512, n_threads=2)
    try:
        with pytest.raises(ModelError, match=r"49152.*151936") as e:
            ModelDrafter(small, SamplingParams(), target=qwen05.target)
        assert small.name in str(e.value) and qwen05.target.name in str(e.value)
    finally:
        small.close()


@pytest.mark.model
def test_real_05b_drafting_for_itself(qwen05, qwen05_path):
    """The same weights as draft, in an exact run: greedy output equals plain decoding and
    the drafts are used. How many are accepted depends on the CPU's batched numerics (the
    draft reads the prompt in one batch, the target in canonical ones): a figure for
    ``specedit bench draft``, not an assertion."""
    from specedit.models.llama_cpp_backend import LlamaTarget

    target = qwen05.target
    draft = LlamaTarget(qwen05_path, n_ctx=1024, n_threads=1, name="draft")
    try:
        msgs = [{"role": "user", "content": "Write a Python function that reverses a list."}]
        prompt = target.tokenize(target.chat_prompt(msgs), special=True)
        drafter = ModelDrafter(draft, SamplingParams(), target=target)
        target.rollback(0)
        plain = generate(target, prompt, GenConfig(max_tokens=16, speculate=False))
        target.rollback(0)
        cfg = GenConfig(
            max_tokens=16, policy=PolicyConfig(fixed_k=4), exact_block=qwen05.exact_block
        )
        spec = generate(target, prompt, cfg, drafter)
        assert spec.tokens == plain.tokens and len(spec.tokens) == 16
        m = spec.metrics
        assert m.drafted_tokens > 0 and m.accepted_tokens > 0
        assert set(m.snapshot()["acceptance_by_source"]) == {"model"}
    finally:
        draft.close()
        target.rollback(0)
        qwen05.prefix = []


def test_cli_rejects_a_bad_draft_spec(capsys):
    from specedit.app.cli.main import main

    with pytest.raises(SystemExit) as e:
        main(["generate", "--context", "x", "-p", "q", "--draft", "modle:x"])
    assert e.value.code == 2 and "model:NAME|PATH" in capsys.readouterr().err


@pytest.mark.model
def test_cli_draft_with_another_vocabulary_fails_clearly(
    qwen05_path, smollm_path, tmp_path, capsys, monkeypatch
):
    from specedit.app.cli.main import main

    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    argv = ["rewrite", str(f), "-i", "rename x to y", "--model", str(qwen05_path)]
    assert main([*argv, "--draft", f"model:{smollm_path}", "--ctx", "512"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "49152" in err and "151936" in err and "tokenizer" in err
    assert f.read_text() == "x = 1\n"


def test_rewrite_path_builds_each_proposer():
    from pathlib import Path

    from specedit.app.edit.rewrite import rewrite
    from specedit.app.options import RewriteOptions
    from specedit.app.runtime.loaded_model import LoadedModel

    def loaded(draft):
        return LoadedModel(
            target=ToyModel(256, seed=1),
            model_name="toy",
            model_path=Path("toy"),
            exact_block=1,
            exact_deltas={},
            costs={1: 0.01, 2: 0.011, 4: 0.012, 8: 0.014},
            load_s=0.0,
            draft=draft,
        )

    text = "def f(x):\n    return x + 1\n" * 4
    with pytest.raises(ModelError, match="draft model"):
        rewrite(loaded(None), text, RewriteOptions(instruction="copy", draft="model"))
    for mode, src in (("model", {"model"}), ("auto", {"model", "file", "output", "prompt"})):
        opts = RewriteOptions(instruction="copy", draft=mode, k=3, max_tokens=24)
        res = rewrite(loaded(ToyModel(256, seed=1)), text, opts)
        used = set(res.metrics.snapshot()["drafted_by_source"])
        assert used and used <= src and (mode != "model" or used == {"model"})
