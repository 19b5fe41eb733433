"""Suffix-tree drafter (SuffixDecoding, arXiv 2411.04975): frequent continuations of the context.

Contract: ``SuffixDrafter.propose(context, k)`` returns up to ``k`` token ids that followed the
context's suffix earlier in ``context`` (prompt and output alike), or an empty draft. Token ids
only; the tree grows by the tokens appended since the last call, ``O(max_depth)`` work per token
(a shorter or different context starts over). The tree counts every substring of up to
``max_depth`` tokens (a suffix trie: per node its count and its latest occurrence). Drafting:
  * from each suffix of the context it holds, walk the most frequent child while the path's
    estimated probability (product of child count / parent's continuations) is >= ``min_token_prob``;
    past the trie's depth, copy on from the path's latest occurrence;
  * drafts are capped at ``max_spec_factor * match + max_spec_offset`` tokens, ``match`` being the
    context's suffix matched at that occurrence (up to ``max_match``); the draft with the highest
    score (sum of its tokens' probabilities; ties to the longer match) wins.
``SwitchDrafter(a, b)`` drafts with ``a`` unless ``a`` has nothing or its acceptance is under 0.5
while ``b``'s is higher (the seed's rule), both measured on the output, whichever drafted.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np

from .draft import Draft, span_label

_STRIDE = 1 << 32  # edge key: parent * _STRIDE + token (token ids are below 2**32)


class SuffixDrafter:
    """Deterministic drafter over a depth-limited suffix trie of the context (module docstring)."""

    def __init__(
        self,
        *,
        max_depth: int = 24,
        max_spec_factor: float = 1.0,
        max_spec_offset: float = 0.0,
        min_token_prob: float = 0.1,
        max_match: int = 256,
        spans: Sequence[tuple[int, int, str]] = (),
        prompt_len: int | None = None,
    ) -> None:
        if max_depth < 1:
            raise ValueError("max_depth must be at least 1")
        self.max_depth = max_depth
        self.max_spec_factor = max_spec_factor
        self.max_spec_offset = max_spec_offset
        self.min_token_prob = min_token_prob
        self.max_match = max_match
        self.spans = sorted(spans)
        self.prompt_len = prompt_len
        self.reset()

    def reset(self) -> None:
        self.seq: list[int] = []
        # node 0 is the root; per node: the token on its edge, depth, count (occurrences),
        # continuations (occurrences followed by a token), most frequent child, and the
        # ends (position after the last token) of its latest and previous occurrences
        self._kid: dict[int, int] = {}
        self._tok = [-1]
        self._depth = [0]
        self._count = [0]
        self._cont = [0]
        self._best = [-1]
        self._end = [-1]
        self._prev = [-1]
        self._open: list[int] = [0]  # nodes of the suffixes of length 0..max_depth-1
        self._tail: list[int] = []  # nodes of the suffixes of length 1..max_depth

    # ---- the tree ----------------------------------------------------------------
    def extend(self, tokens: Sequence[int]) -> None:
        """Append ``tokens`` to the sequence: each updates at most ``max_depth`` nodes."""
        kid, tok, depth, count, cont = self._kid, self._tok, self._depth, self._count, self._cont
        best, end, prev, top = self._best, self._end, self._prev, self.max_depth
        seq = self.seq
        for t in tokens:
            t = int(t)
            seq.append(t)
            i = len(seq)  # the end of every suffix that t closes
            tail = []
            for a in self._open:
                key = a * _STRIDE + t
                c = kid.get(key)
                if c is None:
                    c = kid[key] = len(tok)
                    tok.append(t)
                    depth.append(depth[a] + 1)
                    count.append(0)
                    cont.append(0)
                    best.append(-1)
                    end.append(-1)
                    prev.append(-1)
                count[c] += 1
                cont[a] += 1
                prev[c], end[c] = end[c], i
                b = best[a]
                if b != c and (b < 0 or count[c] >= count[b]):  # ties: the latest
                    best[a] = c
                tail.append(c)
            self._tail = tail
            self._open = [0, *(c for c in tail if depth[c] < top)]

    def _sync(self, context: Sequence[int]) -> None:
        n, m = len(context), len(self.seq)
        if n < m or (m and int(context[m - 1]) != self.seq[m - 1]):
            self.reset()  # a new context: start over
            m = 0
        if n > m:
            self.extend(context[m:n])

    def node(self, path: Sequence[int]) -> int | None:
        """The node of ``path`` (None when it never occurred or is deeper than the tree)."""
        a = 0
        for t in path:
            a = self._kid.get(a * _STRIDE + int(t))
            if a is None:
                return None
        return a

    def count(self, path: Sequence[int]) -> int:
        """How often ``path`` occurs in the sequence (0 past ``max_depth`` tokens)."""
        a = self.node(path)
        return 0 if a is None else self._count[a]

    # ---- drafting ----------------------------------------------------------------
    def propose(self, context: Sequence[int], k: int) -> Draft:
        self._sync(context)
        n = len(self.seq)
        if k <= 0 or n < 2:
            return Draft()
        best: tuple[float, int, list[int], int] | None = None
        for p in self._tail:  # suffixes of length 1..max_depth, shortest first
            if self._count[p] < 2:
                break  # it never occurred before: no longer suffix did either
            found = self._walk(p, k, n)
            if found is None:
                continue
            score, match, toks, ref = found
            if best is None or score >= best[0]:
                best = (score, match, toks, ref)
        if best is None:
            return Draft()
        _, match, toks, ref = best
        return Draft(
            tokens=np.asarray(toks, dtype=np.int64),
            source=self.label(ref),
            match_len=match,
            anchored=True,
        )

    def _walk(self, p: int, k: int, n: int) -> tuple[float, int, list[int], int] | None:
        """The draft from node ``p`` (a suffix of the context): ``(score, match, tokens,
        position of its first token)``, or None when nothing follows ``p``."""
        count, cont, best, tok, end, seq = (
            self._count,
            self._cont,
            self._best,
            self._tok,
            self._end,
            self.seq,
        )
        first = self._ref(p, n)  # where the first drafted token sits in its occurrence
        if self._cont[p]:
            first = end[best[p]] - 1
        if first < 0:
            return None
        match = self._match_len(first, n)
        cap = min(k, int(self.max_spec_factor * match + self.max_spec_offset + 1e-6))
        if cap <= 0:
            return None
        toks: list[int] = []
        prob, score, a = 1.0, 0.0, p
        while len(toks) < cap:
            if cont[a]:
                c = best[a]
                prob *= count[c] / cont[a]
                if prob < self.min_token_prob:
                    break
                toks.append(tok[c])
                score += prob
                a = c
                continue
            r = self._ref(a, n)  # past the trie's depth: copy on from the path's occurrence
            if r < 0:
                break
            more = seq[r : min(n, r + cap - len(toks))]
            toks += more
            score += prob * len(more)
            break
        return (score, match, toks, first) if toks else None

    def _ref(self, a: int, n: int) -> int:
        """The end of node ``a``'s latest occurrence that something followed (-1: none)."""
        e = self._end[a]
        return e if 0 <= e < n else self._prev[a]

    def _match_len(self, p: int, n: int) -> int:
        """Length of the common suffix of ``seq[:p]`` and ``seq[:n]`` (at most ``max_match``)."""
        seq, top = self.seq, min(self.max_match, p)
        lo = 0
        step = 16
        while lo < top:  # doubling, compared a slice at a time
            m = min(top, lo + step)
            if seq[p - m : p - lo] != seq[n - m : n - lo]:
                break
            lo, step = m, 2 * step
        else:
            return lo
        while lo < top and seq[p - lo - 1] == seq[n - lo - 1]:
            lo += 1
        return lo

    def label(self, pos: int) -> str:
        """Where position ``pos`` is (``engine.draft.span_label``)."""
        return span_label(self.spans, self.prompt_len, pos)


class SwitchDrafter:
    """Two drafters; each step drafts with ``first`` unless its measured acceptance is below
    ``threshold`` and ``second``'s is higher, or ``first`` has nothing. Both propose every step,
    so each one's acceptance is measured on what the output did, whichever drafted."""

    def __init__(self, first, second, *, threshold: float = 0.5, window: int = 16) -> None:
        self.drafters = (first, second)
        self.threshold = threshold
        self._steps = (deque(maxlen=window), deque(maxlen=window))
        self._last: tuple[int, list[np.ndarray]] | None = None

    def alpha(self, i: int) -> float:
        """Drafter ``i``'s per-token acceptance over recent steps (0.5 before any)."""
        acc = sum(a for a, _ in self._steps[i])
        rej = sum(r for _, r in self._steps[i])
        return (acc + 1.0) / (acc + rej + 2.0)

    def _observe(self, context: Sequence[int]) -> None:
        if self._last is None:
            return
        n, drafts = self._last
        got = [int(t) for t in context[n:]]
        for i, d in enumerate(drafts):
            seen = min(len(d), len(got))  # only what the output shows can be judged
            if not seen:
                continue
            j = 0
            while j < seen and int(d[j]) == got[j]:
                j += 1
            self._steps[i].append((j, int(j < seen)))

    def propose(self, context: Sequence[int], k: int) -> Draft:
        self._observe(context)
        drafts = [d.propose(context, k) for d in self.drafters]
        self._last = (len(context), [d.tokens for d in drafts])
        a, b = drafts
        if not len(a) or (len(b) and self.alpha(0) < self.threshold < self.alpha(1)):
            return b
        return a
