"""The lookup drafter's text anchor: a quote re-anchors on its source by bytes, not tokens.

A word-level vocabulary, as a real BPE has: ``" cache"`` (with its space) and ``"cache"``
are different tokens, so a quote that starts mid-line, after a quotation mark, or joins
lines the source wraps shares no token n-gram with its source, only bytes.
"""

from __future__ import annotations

from specedit.engine.lookup import LookupDrafter

WORDS = [
    "Models", " Models", " live", " in", " the", " user", " cache", " dir", "cache", " A",
    " catalog", "\n", "model", "'s", " sha", "256", " is", " checked", " at", " first", " use",
    ".", "```", "[", "]", "README", ".md", "\"", " cac", "he", "h", "e", " its", " and",
    " model",
]  # fmt: skip
PIECES = {i + 1: w.encode() for i, w in enumerate(WORDS)}
INV = {v: k for k, v in PIECES.items()}


def encode(b: bytes) -> list[int]:
    """Greedy longest match over the vocabulary ([] when some byte has no token)."""
    out, i = [], 0
    while i < len(b):
        for j in range(len(b), i, -1):
            if b[i:j] in INV:
                out.append(INV[b[i:j]])
                i = j
                break
        else:
            return []
    return out


def ids(*words: str) -> list[int]:
    return [INV[w.encode()] for w in words]


SOURCE = ids(
    " Models", " live", " in", " the", " user", " cache", " dir", ".", " A", " catalog", "\n",
    "model", "'s", " sha", "256", " is", " checked", " at", " its", " first", " use", ".",
)  # fmt: skip
HEAD = ids("[", "README", ".md", "]", "\n")


def drafter(text_min: int = 10) -> tuple[LookupDrafter, list[int]]:
    prompt = [*HEAD, *SOURCE, *ids("\n", "```")]
    spans = [(len(HEAD), len(HEAD) + len(SOURCE), "README.md")]
    d = LookupDrafter(
        spans=spans,
        prompt_len=len(prompt),
        piece=PIECES.__getitem__,
        encode=encode,
        text_min=text_min,
    )
    return d, prompt


def words(tokens) -> list[str]:
    return [PIECES[int(t)].decode() for t in tokens]


def test_a_quote_that_starts_mid_line_without_its_space_re_anchors():
    # the source has " Models"; the quote opens a block with "Models"
    d, prompt = drafter()
    ctx = [*prompt, *ids("\n", "Models", " live")]
    draft = d.propose(ctx, 4)
    assert words(draft.tokens) == [" in", " the", " user", " cache"]
    assert draft.source == "README.md" and draft.match_len >= 2
    # without the text anchor (a match needs more bytes than the output has) no copy
    d, prompt = drafter(text_min=1000)
    assert len(d.propose([*prompt, *ids("\n", "Models", " live")], 4).tokens) == 0


def test_a_quote_that_joins_wrapped_lines_follows_the_source():
    # the source wraps after " catalog" ("\n", "model"); the quote writes " model" on the
    # same line: no token n-gram of the output is in the source
    d, prompt = drafter()
    ctx = [*prompt, *ids('"', " A", " catalog", " model")]
    draft = d.propose(ctx, 3)
    assert words(draft.tokens) == ["'s", " sha", "256"]


def test_an_output_stopped_inside_a_source_token_gets_its_rest_re_encoded():
    # the output wrote " cac" where the source has " cache": the draft starts with "he"
    d, prompt = drafter()
    ctx = [*prompt, *ids("Models", " live", " in", " the", " user", " cac")]
    draft = d.propose(ctx, 3)
    assert words(draft.tokens) == ["he", " dir", "."]


def test_a_short_tail_does_not_anchor():
    d, prompt = drafter()
    # "cache" alone: fewer bytes than text_min, and no token n-gram
    assert len(d.propose([*prompt, *ids("\n", "cache")], 4).tokens) == 0
