"""Constrained decoding in the loop (``engine.constraint``), on the toy model."""

from __future__ import annotations

import numpy as np
import pytest
from toy import ToyModel

from specedit.engine.constraint import ConstrainedDrafter
from specedit.engine.decode import GenConfig, generate
from specedit.engine.draft import Draft
from specedit.engine.lookup import LookupDrafter
from specedit.engine.policy import PolicyConfig
from specedit.engine.sampling import SamplingParams

VOCAB = 64


def _prompt(seed=1, n=200):
    rng = np.random.default_rng(seed)
    body = list(rng.integers(0, VOCAB, 60))
    return (body * (n // 60 + 1))[:n]


class Residues:
    """From the 10th output token on, a token's id must be ``sum(out) % 3`` mod 3: a rule
    of the whole output so far, which the copied prompt breaks at most steps. ``calls`` counts
    what was asked (the drafter and the rows both ask)."""

    def __init__(self, as_bool: bool = False) -> None:
        self.calls = 0
        self.as_bool = as_bool  # the other answer form: a boolean row over the vocabulary

    def allowed(self, out):
        self.calls += 1
        if len(out) < 10:
            return None
        ids = np.arange(VOCAB)
        return ids % 3 == sum(out) % 3 if self.as_bool else ids[ids % 3 == sum(out) % 3]


def _obeys(tokens) -> bool:
    return all(t % 3 == sum(tokens[:i]) % 3 for i, t in enumerate(tokens) if i >= 10)


@pytest.mark.parametrize("k,as_bool", [(None, False), (4, True), (16, False)])
def test_greedy_constrained_speculative_equals_constrained_plain(k, as_bool):
    prompt = _prompt()
    free = generate(ToyModel(), prompt, GenConfig(max_tokens=120, speculate=False))
    plain = generate(
        ToyModel(), prompt, GenConfig(max_tokens=120, speculate=False), constraint=Residues()
    )
    cfg = GenConfig(max_tokens=120, policy=PolicyConfig(fixed_k=k))
    rule = Residues(as_bool)
    spec = generate(ToyModel(), prompt, cfg, LookupDrafter(prompt_len=len(prompt)), constraint=rule)
    assert spec.tokens == plain.tokens
    assert _obeys(plain.tokens) and not _obeys(free.tokens)  # the rule bites, and holds
    assert plain.tokens[:10] == free.tokens[:10]  # no rule, no change


def test_sampled_constrained_text_is_the_same_whatever_k_and_obeys():
    prompt = _prompt(3)
    sampling = SamplingParams(temperature=1.0, seed=7)
    runs = []
    for k, speculate in ((None, False), (4, True), (16, True)):
        cfg = GenConfig(
            max_tokens=80, speculate=speculate, sampling=sampling, policy=PolicyConfig(fixed_k=k)
        )
        drafter = LookupDrafter(prompt_len=len(prompt)) if speculate else None
        runs.append(generate(ToyModel(), prompt, cfg, drafter, constraint=Residues()).tokens)
    assert runs[0] == runs[1] == runs[2]
    assert _obeys(runs[0])


def test_sampling_keeps_the_target_distribution_restricted_to_the_allowed_ids():
    """The first constrained token, drawn many times: its frequencies follow the target's
    softmax renormalised over the allowed ids (chi-square, p = 0.001), and none is outside."""
    prompt = _prompt(5, 40)
    rule = Residues()
    base = generate(ToyModel(), prompt, GenConfig(max_tokens=10, speculate=False))
    head = base.tokens
    allowed = rule.allowed(head)
    t = ToyModel()
    t.eval(prompt + head, 0, [])
    row = t._row(len(prompt) + len(head) - 1).astype(np.float64)
    p = np.exp(row[allowed] - row[allowed].max())
    p /= p.sum()
    counts = np.zeros(VOCAB)
    n = 600
    for seed in range(n):
        cfg = GenConfig(max_tokens=11, sampling=SamplingParams(temperature=1.0, seed=seed))
        prefix = prompt + head  # the first 10 output tokens given: the next is the rule's first
        out = generate(ToyModel(), prefix, cfg, constraint=_Shifted(rule, head))
        counts[out.tokens[0]] += 1
    assert counts[np.setdiff1d(np.arange(VOCAB), allowed)].sum() == 0
    top = np.argsort(-p)[:6]  # the likeliest ids, the rest pooled
    exp = np.append(p[top], 1 - p[top].sum()) * n
    obs = np.append(counts[allowed[top]], n - counts[allowed[top]].sum())
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    assert chi2 < 22.46  # 6 degrees of freedom, p = 0.001


class _Shifted:
    """``rule`` as if ``head`` had been generated already (it ends the prompt here)."""

    def __init__(self, rule, head) -> None:
        self.rule, self.head = rule, list(head)

    def allowed(self, out):
        return self.rule.allowed(self.head + list(out))


def test_a_draft_stops_before_its_first_disallowed_token():
    class Fixed:
        def propose(self, context, k):
            return Draft(np.array([0, 3, 4, 6], np.int64), source="file", match_len=5)

    class Multiples:
        def allowed(self, out):
            return None if not out else np.arange(0, VOCAB, 3)

    d = ConstrainedDrafter(Fixed(), 2, Multiples()).propose([9, 9], 4)
    # after [] anything; then 3 ok (a multiple of 3); 4 is not: the draft is [0, 3]
    assert d.tokens.tolist() == [0, 3] and d.source == "file" and d.match_len == 5
