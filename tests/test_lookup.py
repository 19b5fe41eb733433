"""Prompt-lookup drafter: copy cursor, nearest re-anchoring, index updates, resyncs, span ends."""

from __future__ import annotations

import numpy as np

from specedit.engine.lookup import LookupDrafter

# A small byte-level vocabulary, as a real BPE has: some tokens are merges of others.
PIECES = {
    1: b"<s>",
    2: b"[",
    3: b"]",
    10: b"a",
    11: b"b",
    12: b".",
    13: b"\n",
    14: b"c",
    15: b"d",
    16: b"e",
    17: b"f",
    20: b".\n",
    21: b"\n\n",
    22: b"\n\n\n",
    30: b"}",
}


def encode(b: bytes) -> list[int]:
    """Greedy longest-match tokenizer over PIECES (what a BPE's merges amount to here)."""
    inv = {v: k for k, v in PIECES.items()}
    out, i = [], 0
    while i < len(b):
        for j in range(len(b), i, -1):
            if b[i:j] in inv:
                out.append(inv[b[i:j]])
                i = j
                break
        else:
            return []
    return out


def drafter(prompt, spans=(), **kw) -> LookupDrafter:
    return LookupDrafter(spans=spans, prompt_len=len(prompt), **kw)


def toks(d) -> list[int]:
    return d.tokens.tolist()


def test_copy_cursor_follows_without_searching(monkeypatch):
    src = [10, 11, 12, 13, 14, 15, 16, 17, 10, 12, 14, 14]
    prompt = [1, 2, *src, 3]
    d = drafter(prompt)
    ctx = [*prompt, 10, 11]
    assert toks(d.propose(ctx, 4)) == [12, 13, 14, 15]
    # once anchored, accepted tokens move the cursor: no index lookup is needed
    monkeypatch.setattr(d, "_anchor", lambda n: (_ for _ in ()).throw(AssertionError("searched")))
    ctx += [12, 13, 14]
    draft = d.propose(ctx, 4)
    assert toks(draft) == [15, 16, 17, 10]
    assert draft.source == "prompt" and draft.match_len >= 5


def test_reanchor_prefers_the_match_nearest_the_old_cursor():
    # three lines end in the same two tokens ("7 90"); each continues differently
    line_a, line_b, line_c = [5, 6, 7, 90, 91], [8, 9, 7, 90, 92], [4, 3, 7, 90, 93]
    prompt = [1, *line_a, *line_b, *line_c, 3]
    d = drafter(prompt)
    ctx = [*prompt, 5, 6]
    assert toks(d.propose(ctx, 3)) == [7, 90, 91]  # copying line A
    # the output diverges (77), then writes "7 90" again: every line matches 2 tokens,
    # the one next to where the copy was (A) wins, not the last one (C)
    ctx += [77, 7, 90]
    assert toks(d.propose(ctx, 1)) == [91]
    # a fresh drafter has no cursor: the nearest to the end of the context wins
    assert toks(drafter(prompt).propose(ctx, 1)) == [93]
    # a longer match beats a nearer one
    assert toks(d.propose([*prompt, 8, 9, 7, 90], 1)) == [92]


def test_index_grows_with_the_output():
    prompt = [1, 2, 3]
    d = drafter(prompt)
    ctx = [*prompt, 40, 41, 42, 43]
    assert len(d.propose(ctx, 4)) == 0  # nothing repeats yet
    ctx += [40, 41]
    draft = d.propose(ctx, 4)
    assert toks(draft) == [42, 43, 40, 41] and draft.source == "output"


def test_near_resync_rejoins_after_a_changed_token_boundary():
    src = [10, 11, 12, 13, 14, 15, 16, 17]
    prompt = [1, *src, 3]
    d = drafter(prompt)
    ctx = [*prompt, 10, 11]
    assert toks(d.propose(ctx, 2)) == [12, 13]
    ctx += [55]  # an edit: no 2-gram ends in 55 and 55 is not in the source
    assert len(d.propose(ctx, 4)) == 0
    ctx += [14]  # the output is back on the source: the last token alone re-joins
    assert toks(d.propose(ctx, 3)) == [15, 16, 17]


def test_line_resync_jumps_to_the_next_source_line():
    lines = [[60, 61, 13], [62, 63, 13], [64, 65, 13]]
    prompt = [1, *sum(lines, []), 3]
    d = drafter(prompt, newline_ids=[13])
    ctx = [*prompt, 60, 61]
    assert toks(d.propose(ctx, 2)) == [13, 62]
    ctx += [70, 71, 72, 73, 13]  # line 2 was rewritten with tokens the source lacks
    d._near_resync = lambda n: None  # the near window would also find it; isolate the line rule
    assert toks(d.propose(ctx, 3)) == [62, 63, 13]


def test_byte_resync_when_the_output_merges_source_tokens():
    src = [10, 11, 12, 13, 14, 15, 16, 17]  # "ab.\ncdef"
    prompt = [1, 2, *src, 3]
    ctx = [*prompt, 10, 11]
    d = drafter(prompt, piece=PIECES.__getitem__, encode=encode)
    assert toks(d.propose(ctx, 4)) == [12, 13, 14, 15]
    ctx.append(20)  # the target wrote ".\n" as one token where the source has "." "\n"
    draft = d.propose(ctx, 4)
    assert toks(draft) == [14, 15, 16, 17]
    assert draft.match_len >= 3  # still the same copy, not a fresh short anchor
    # without the byte pieces the drafter has lost the copy
    plain = drafter(prompt)
    plain.propose([*prompt, 10, 11], 4)
    assert toks(plain.propose(ctx, 4)) != [14, 15, 16, 17]


def test_byte_resync_when_the_output_splits_a_source_token():
    src = [10, 11, 20, 14, 15, 16]  # "ab.\ncde" with ".\n" one token in the source
    prompt = [1, 2, *src, 3]
    ctx = [*prompt, 10, 11]
    d = drafter(prompt, piece=PIECES.__getitem__, encode=encode)
    assert toks(d.propose(ctx, 3)) == [20, 14, 15]
    ctx.append(12)  # the target wrote "." alone: the draft re-encodes the rest, "\n"
    assert toks(d.propose(ctx, 3)) == [13, 14, 15]
    ctx += [13, 14]  # and the cursor follows through the re-encoded prefix
    assert toks(d.propose(ctx, 2)) == [15, 16]


def test_byte_resync_skips_a_dropped_blank_line():
    """The source has "\n\n\n" (one token) and the target writes "\n\n": it dropped a
    blank line (it would have written the one token otherwise), so the copy goes on
    with the next source token, not with a re-encoded "\n" the target will not write."""
    src = [10, 11, 22, 14, 15, 16]  # "ab\n\n\ncde"
    prompt = [1, 2, *src, 3]
    ctx = [*prompt, 10, 11]
    d = drafter(prompt, piece=PIECES.__getitem__, encode=encode)
    assert toks(d.propose(ctx, 3)) == [22, 14, 15]
    ctx.append(21)
    draft = d.propose(ctx, 3)
    assert toks(draft) == [14, 15, 16]
    assert draft.match_len >= 3  # the same copy, not a fresh anchor


def test_byte_resync_gives_up_on_a_real_edit():
    src = [10, 11, 12, 13, 14, 15]
    prompt = [1, 2, *src, 3]
    ctx = [*prompt, 10, 11]
    d = drafter(prompt, piece=PIECES.__getitem__, encode=encode)
    d.propose(ctx, 4)
    ctx.append(30)  # "}": the bytes differ from the source's, so no resync
    d._sync(ctx)
    assert d._byte_resync(len(ctx)) is None
    assert len(d.propose(ctx, 4)) == 0


def test_drafts_stop_a_few_tokens_past_the_end_of_their_span():
    src = list(range(100, 120))
    boiler = list(range(200, 260))
    prompt = [1, 2, *src, *boiler]
    span = (2, 2 + len(src), "file")
    d = drafter(prompt, spans=[span], span_tail=3)
    ctx = [*prompt, 100, 101]
    draft = d.propose(ctx, 64)
    assert draft.source == "file"
    assert toks(draft) == src[2:] + boiler[:3]
    # a span-less drafter copies on into the boilerplate
    assert len(drafter(prompt).propose(ctx, 64)) == 64
    # the copy reached the span's end and the first tail token: a cursor now inside the
    # tail may draft only what is left of the tail, not the boilerplate after it
    ctx = [*prompt, *src, boiler[0]]
    d = drafter(prompt, spans=[span], span_tail=3)
    assert toks(d.propose(ctx, 64)) == boiler[1:3]


def test_short_context_and_zero_k_give_no_draft():
    d = drafter([1])
    assert len(d.propose([1], 4)) == 0
    assert len(d.propose([1, 2, 1, 2], 0)) == 0
    assert isinstance(d.propose([1, 2, 1, 2], 2).tokens, np.ndarray)
