"""Suffix-tree drafter: proposals, incremental growth, the length cap, frequency scoring, exactness."""

from __future__ import annotations

import numpy as np
import pytest
from toy import ToyModel

from specedit.engine.decode import GenConfig, generate
from specedit.engine.draft import Draft
from specedit.engine.lookup import LookupDrafter
from specedit.engine.policy import PolicyConfig
from specedit.engine.suffix import SuffixDrafter, SwitchDrafter


def toks(d: Draft) -> list[int]:
    return d.tokens.tolist()


def state(d: SuffixDrafter) -> tuple:
    """Everything the tree holds, node numbering included."""
    return (
        d.seq,
        d._kid,
        d._tok,
        d._count,
        d._cont,
        d._best,
        d._end,
        d._prev,
        d._open,
        d._tail,
    )


def test_a_repeated_span_is_drafted_from_its_earlier_occurrence():
    ctx = [5, 6, 7, 8, 9, 10, 11, 1, 2, 5, 6, 7]
    d = SuffixDrafter(max_spec_offset=8)
    got = d.propose(ctx, 4)
    assert toks(got) == [8, 9, 10, 11]
    assert got.match_len == 3 and got.anchored and got.probs is None
    # never seen: nothing to propose
    assert len(SuffixDrafter().propose([1, 2, 3, 4], 4)) == 0
    assert len(d.propose([*ctx, 42], 4)) == 0
    assert len(d.propose(ctx, 0)) == 0


def test_incremental_growth_equals_a_fresh_build():
    rng = np.random.default_rng(3)
    body = rng.integers(0, 12, 300).tolist()  # a small alphabet: many repeats, deep nodes
    ends = np.cumsum([20, *rng.integers(1, 6, 120)])  # each step accepts 1..5 tokens
    ends = [int(n) for n in ends if n <= len(body)]
    inc = SuffixDrafter(max_depth=8)
    for n in ends:
        fresh = SuffixDrafter(max_depth=8)
        assert toks(inc.propose(body[:n], 16)) == toks(fresh.propose(body[:n], 16)), n
    assert state(inc) == state(fresh)


def test_counts_are_substring_occurrences_up_to_the_depth():
    seq = [1, 2, 1, 2, 1, 3, 1, 2]
    d = SuffixDrafter(max_depth=3)
    d.extend(seq)
    assert d.count([1]) == 4 and d.count([1, 2]) == 3 and d.count([2, 1]) == 2
    assert d.count([1, 2, 1]) == 2 and d.count([1, 3]) == 1 and d.count([3, 3]) == 0
    assert d.count([1, 2, 1, 2]) == 0  # deeper than the tree


def test_work_per_step_is_bounded_by_the_new_tokens():
    d = SuffixDrafter(max_depth=6)
    rng = np.random.default_rng(0)
    ctx = rng.integers(0, 50, 400).tolist()
    d.propose(ctx, 8)
    before = len(d._tok)
    ctx += [7, 8, 9]
    d.propose(ctx, 8)
    assert len(d._tok) - before <= 3 * 6  # at most max_depth new nodes per token
    # a different context of the same length starts over instead of growing
    other = [*ctx[:-1], 99]
    d.propose(other, 8)
    fresh = SuffixDrafter(max_depth=6)
    fresh.propose(other, 8)
    assert state(d) == state(fresh)


def test_draft_length_is_capped_by_the_match_length():
    src = list(range(10, 60))  # 50 distinct tokens, then the first 4 again
    ctx = [*src, 1, *src[:4]]
    assert len(SuffixDrafter().propose(ctx, 64)) == 4  # factor 1: as long as the match
    assert len(SuffixDrafter(max_spec_factor=2.0).propose(ctx, 64)) == 8
    assert len(SuffixDrafter(max_spec_offset=3).propose(ctx, 64)) == 7
    assert len(SuffixDrafter(max_spec_factor=100.0).propose(ctx, 20)) == 20  # and by k
    # past the tree's depth the draft copies on from the occurrence, and its match length
    # is measured there, beyond the depth
    ctx = [*src, 1, *src[:30]]
    d = SuffixDrafter(max_depth=8, max_spec_factor=1.0)
    got = d.propose(ctx, 64)
    assert got.match_len == 30 and toks(got) == src[30:50] + [1] + src[:9]


def test_the_most_frequent_continuation_wins_and_ties_go_to_the_latest():
    # after [1, 2]: 3 three times, 4 once (the latest); frequency beats recency
    ctx = [1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 4, 0, 1, 2]
    assert toks(SuffixDrafter(max_spec_offset=1).propose(ctx, 1)) == [3]
    # a prompt-lookup drafter copies the latest or nearest occurrence instead
    assert toks(LookupDrafter().propose(ctx, 1)) == [4]
    # equal counts: the latest continuation
    ctx = [1, 2, 3, 0, 1, 2, 4, 0, 1, 2]
    assert toks(SuffixDrafter(max_spec_offset=1).propose(ctx, 1)) == [4]


def test_a_draft_stops_where_its_estimated_probability_falls_too_low():
    # after [7, 8] always 9, then 5 or 6 equally: p(9) = 1, p(9, x) = 0.5
    ctx = [3, 7, 8, 9, 5, 4, 7, 8, 9, 6, 2, 7, 8]
    d = SuffixDrafter(max_spec_offset=8, min_token_prob=0.6)
    assert toks(d.propose(ctx, 8)) == [9]
    d = SuffixDrafter(max_spec_offset=8, min_token_prob=0.4)
    assert toks(d.propose(ctx, 8))[:2] == [9, 6]


def test_drafts_name_the_span_they_came_from():
    prompt = [1, 20, 21, 22, 23, 2]
    d = SuffixDrafter(spans=[(1, 5, "file")], prompt_len=len(prompt), max_spec_offset=4)
    assert d.propose([*prompt, 20, 21], 4).source == "file"
    out = [30, 31, 32, 33, 34]
    assert d.propose([*prompt, 20, 21, *out, 30, 31], 2).source == "output"


def _prompt(seed=1, n=200, vocab=64):
    rng = np.random.default_rng(seed)
    body = list(rng.integers(0, vocab, 60))
    return (body * (n // 60 + 1))[:n]


@pytest.mark.parametrize("k", [None, 1, 4, 16])
@pytest.mark.parametrize("kind", ["suffix", "switch"])
def test_greedy_speculative_equals_plain(k, kind):
    prompt = _prompt()
    plain = generate(ToyModel(), prompt, GenConfig(max_tokens=150, speculate=False))
    drafter = SuffixDrafter(prompt_len=len(prompt), max_spec_offset=4)
    if kind == "switch":
        drafter = SwitchDrafter(LookupDrafter(prompt_len=len(prompt)), drafter)
    m = ToyModel()
    cfg = GenConfig(max_tokens=150, policy=PolicyConfig(fixed_k=k))
    spec = generate(m, prompt, cfg, drafter)
    assert spec.tokens == plain.tokens
    assert len(spec.tokens) == 150
    if k != 1:
        assert len(m.calls) < 150  # it drafted, and drafts were accepted


def test_switch_drafts_with_the_second_when_the_first_keeps_missing():
    class Fixed:
        def __init__(self, tok):
            self.tok = tok

        def propose(self, context, k):
            return Draft(np.full(k, self.tok, dtype=np.int64), anchored=True)

    s = SwitchDrafter(Fixed(1), Fixed(2), window=4)
    ctx = [0]
    for _ in range(3):  # the output goes on with 2s: the first drafter's 1s miss
        assert s.propose(ctx, 2).tokens[0] == 1 or s.alpha(0) < 0.5
        ctx += [2, 2]
    assert s.alpha(0) < 0.5 < s.alpha(1)
    assert s.propose(ctx, 2).tokens.tolist() == [2, 2]


def test_the_replay_bench_runs_every_drafter_on_a_recorded_copy():
    """``bench replay --drafter``: each drafter re-emits the recorded output, beats plain
    decoding on a copy and stays under the oracle; the lookup drafter's columns keep the
    policy's name."""
    from specedit.bench.replay_bench import drafter_makers, replay

    rng = np.random.default_rng(5)
    file = rng.integers(3, 60, 300).tolist()
    prompt = [1, *file, 2]
    output = [*file[:120], 61, 62, *file[122:], 2]  # a copy with one change
    cost = {str(b): 0.02 + 0.001 * b for b in (1, 2, 4, 8, 16, 32, 64, 128)}
    record = {
        "session_costs": cost,
        "cost_table": {"500": cost},
        "tasks": [
            {
                "kind": "copy",
                "name": "t",
                "prompt": prompt,
                "spans": [[1, 301, "file"]],
                "output": output,
            }
        ],
    }
    specs = ["lookup", "suffix", "suffix:max_spec_factor=2.0", "switch"]
    res = replay(record, {"default": PolicyConfig()}, drafter_makers(ToyModel(), specs))
    row = res["tasks"][0]
    for col in (
        "default",
        "suffix/default",
        "suffix:max_spec_factor=2.0/default",
        "switch/default",
    ):
        assert 2.0 < row[col]["ratio_to_plain"], col
        assert row[col]["fraction_of_oracle"] <= 1.0 + 1e-9, col
    assert set(res["summary"]["copy"]) >= {"default", "switch/default"}


def test_draft_suffix_selects_the_suffix_drafter():
    """``RewriteOptions(draft="suffix")`` (``--draft suffix``) drafts with the suffix tree over
    the prompt's spans; the default stays prompt lookup."""
    from toy_server import toy_loaded

    from specedit.app.cli.flags import _draft
    from specedit.app.options import RewriteOptions
    from specedit.app.runtime.local_runner import proposers
    from specedit.app.runtime.prompt import Prompt
    from specedit.engine.policy import AdaptivePolicy

    loaded = toy_loaded()
    prompt = Prompt((1, 2, 3, 4), ((1, 3, "file"),))
    d = proposers(loaded, RewriteOptions(draft="suffix"), prompt, AdaptivePolicy())
    assert isinstance(d, SuffixDrafter)
    assert d.prompt_len == 4 and d.spans == [(1, 3, "file")]
    assert isinstance(proposers(loaded, RewriteOptions(), prompt, AdaptivePolicy()), LookupDrafter)
    assert _draft("suffix") == "suffix"
