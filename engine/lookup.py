"""Prompt-lookup drafter with a copy cursor and an n-gram index.

Contract: ``LookupDrafter.propose(context, k)`` returns up to ``k`` tokens copied from earlier in
``context`` (the prompt holds the file being rewritten and any context files; the output so far is
searched too), or an empty draft.
How it drafts, cheapest first (each method's docstring gives its rule): the **copy cursor**
(``_follow_cursor``, O(k) per step while the accepted tokens follow the source); **re-anchoring**
(``_anchor``: the last ``key_len`` tokens in an incremental n-gram index, longest match capped at
``max_match``, ties to the previous cursor); **byte**, **near** and **line resync** and the **text
anchor** (``_byte_resync``, ``_near_resync``, ``_line_resync``, ``_text_anchor``) re-join a copy
whose tokens no longer match but whose bytes or lines do; the **span end** (``_span_end``) stops
a draft a few tokens past the end of its span.

Positions are labelled by ``spans`` ("file", "context", ...; at or after ``prompt_len``:
"output"). Labels only feed the statistics.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

import numpy as np

from .draft import Draft, span_label


class LookupDrafter:
    """Deterministic drafter that copies from the context (see module docstring)."""

    def __init__(
        self,
        *,
        spans: Sequence[tuple[int, int, str]] = (),
        prompt_len: int | None = None,
        key_len: int = 2,
        max_match: int = 64,
        max_candidates: int = 64,
        newline_ids: Sequence[int] = (),
        piece: Callable[[int], bytes] | None = None,
        encode: Callable[[bytes], Sequence[int]] | None = None,
        span_tail: int = 4,
        text_min: int = 10,
    ) -> None:
        self.spans = sorted(spans)
        self.prompt_len = prompt_len
        self.key_len = key_len
        self.max_match = max_match
        self.max_candidates = max_candidates
        self.newline_ids = frozenset(newline_ids)
        self._piece_fn = piece
        self._pieces: dict[int, bytes] = {}
        self._encode = encode
        self.span_tail = span_tail
        self.text_min = text_min
        self.reset()

    def reset(self) -> None:
        self._buf = np.zeros(1024, dtype=np.int64)
        self._n = 0
        self._index: dict[tuple[int, ...], list[int]] = {}
        self._line_starts: list[int] = []  # positions that follow a newline token
        self._cursor: int | None = None
        self._cursor_ctx = 0  # context length when the cursor was last valid
        self._last_good: int | None = None  # cursor of the last copy that matched
        self._prefix: list[int] = []  # tokens drafted before the cursor's (byte resync)
        self._text: _SpanText | None = None  # the spans' text, built at the first anchor
        self.last_match_len = 0

    # ---- index -------------------------------------------------------------
    def _sync(self, context: Sequence[int]) -> None:
        n = len(context)
        if n < self._n:  # a new, shorter context: start over
            self.reset()
        if n == self._n:
            return
        if n > len(self._buf):
            cap = max(n, 2 * len(self._buf))
            self._buf = np.concatenate([self._buf, np.zeros(cap - len(self._buf), np.int64)])
        new = np.asarray(context[self._n : n], dtype=np.int64)
        self._buf[self._n : n] = new
        kl = self.key_len
        buf = self._buf
        for i in range(max(self._n, kl), n):
            # key = the kl tokens before position i; value = i (the token that follows)
            key = tuple(int(t) for t in buf[i - kl : i])
            self._index.setdefault(key, []).append(i)
        if self.newline_ids:
            for i in range(max(self._n, 1), n):
                if int(buf[i - 1]) in self.newline_ids:
                    self._line_starts.append(i)
        self._n = n

    def _span_from(self, pos: int) -> tuple[int, int, str] | None:
        """The last labelled prompt span starting at or before ``pos`` (None in the output)."""
        if self.prompt_len is not None and pos >= self.prompt_len:
            return None
        i = bisect.bisect_right(self.spans, (pos, float("inf"), "")) - 1
        return self.spans[i] if i >= 0 else None

    def label(self, pos: int) -> str:
        return span_label(self.spans, self.prompt_len, pos)

    # ---- drafting ------------------------------------------------------------
    def propose(self, context: Sequence[int], k: int) -> Draft:
        self._sync(context)
        n = self._n
        if k <= 0 or n <= self.key_len:
            return Draft()
        cur = self._follow_cursor(n)
        if cur is None:
            cur = self._byte_resync(n)
        if cur is None:
            self._prefix = []
            cur = self._anchor(n)
        if cur is None:
            cur = self._text_anchor(n)
        if cur is not None:
            self._last_good = cur
        else:
            cur = self._near_resync(n)
        if cur is None:
            cur = self._line_resync(n)
        if cur is None or (cur >= n and not self._prefix):
            self._cursor = None
            self._prefix = []
            self.last_match_len = 0
            return Draft()
        self._cursor, self._cursor_ctx = cur, n
        pre = self._prefix[:k]
        end = min(cur + k - len(pre), n, self._span_end(cur))
        tokens = self._buf[cur:end]
        if pre:
            tokens = np.concatenate([np.asarray(pre, np.int64), tokens])
        return Draft(
            tokens=tokens.copy(),
            source=self.label(cur),
            match_len=self.last_match_len,
            anchored=True,
        )

    def _span_end(self, pos: int) -> int:
        """Where a draft from ``pos`` stops: a few tokens past the end of its span.

        A cursor already in that tail (a copy that ran to the span's end, then
        re-synchronised on bytes) is still bound by it: what follows is prompt
        boilerplate, and drafting it past the closing fence wasted whole blocks.
        """
        span = self._span_from(pos)
        if span is not None and pos < span[1] + self.span_tail:
            return span[1] + self.span_tail
        return self._n

    def _follow_cursor(self, n: int) -> int | None:
        """After a draft from position ``c``, if the tokens accepted since then equal
        ``context[c : c + delta]``, the cursor advances by ``delta``: the next draft
        continues from there with no search."""
        c = self._cursor
        if c is None:
            return None
        delta = n - self._cursor_ctx
        if delta <= 0:
            return None
        got = self._buf[self._cursor_ctx : n]
        pre = self._prefix
        if delta <= len(pre):  # still inside the re-encoded prefix
            if got.tolist() != pre[:delta]:
                return None
            self._prefix = pre[delta:]
            self.last_match_len += delta
            return c
        rest = delta - len(pre)
        if c + rest > n or got[: len(pre)].tolist() != pre:
            return None
        if np.array_equal(self._buf[c : c + rest], got[len(pre) :]):
            self._prefix = []
            self.last_match_len += delta
            return c + rest
        return None

    def _piece(self, t: int) -> bytes:
        b = self._pieces.get(t)
        if b is None:
            b = self._pieces[t] = self._piece_fn(t)
        return b

    def _byte_resync(self, n: int) -> int | None:
        """Continue the copy when the output's bytes still follow the source's.

        The tokens accepted since the last draft diverged from the draft, but if
        their bytes are a prefix of the bytes the copy expected, only a token
        boundary moved (``".\n"`` for ``"."`` + ``"\n"``, or the reverse): resume at the
        source token where those bytes end (and re-encode, with ``encode``, the rest of a
        source token the output ended inside). An output that stops inside a run of
        newlines (``"\n\n"`` for ``"\n\n\n"``) dropped a blank line: the copy resumes after
        the run.
        """
        c = self._cursor
        if c is None or self._piece_fn is None:
            return None
        got = self._buf[self._cursor_ctx : n].tolist()
        if not got:
            return None
        out = b"".join(self._piece(t) for t in got)
        limit = min(n, self._span_end(c), c + 4 * len(got) + 8)
        expected = self._prefix + self._buf[c:limit].tolist()
        acc = b""
        for i, t in enumerate(expected):
            acc += self._piece(t)
            if len(acc) < len(out):
                continue
            if not acc.startswith(out):
                return None
            np_ = len(self._prefix)
            cur = c + max(0, i + 1 - np_)
            tail = self._prefix[i + 1 :]
            rest = acc[len(out) :]
            # the output stopped inside token i. If that token is a run of newlines, the
            # output dropped a blank line (a model writes "\n\n\n" as one token, not
            # "\n\n" + "\n"): resume after it. Otherwise re-encode the rest of the token.
            if rest and self._piece(t).strip(b"\n"):
                if self._encode is None:
                    return None
                head = list(self._encode(rest))
                if not head:
                    return None
                tail = head + tail
            self._prefix = tail
            self.last_match_len += len(got)
            return cur
        return None

    def _match_len(self, p: int, n: int) -> int:
        """Length of the common suffix of context[:p] and context[:n]."""
        m = min(self.max_match, p)
        a = self._buf[p - m : p][::-1]
        b = self._buf[n - m : n][::-1]
        diff = np.flatnonzero(a != b)
        return int(diff[0]) if diff.size else m

    def _anchor(self, n: int) -> int | None:
        """Look the last ``key_len`` tokens up in the n-gram index, extend each candidate
        backwards to measure the match (capped at ``max_match``), keep the longest and break
        ties by distance to the previous cursor: a repeated line such as ``}`` or ``return
        x`` then resolves to the occurrence next to where the copy was."""
        key = tuple(int(t) for t in self._buf[n - self.key_len : n])
        cands = self._index.get(key)
        if not cands:
            return None
        # candidates nearest the previous cursor first (positions are sorted)
        ref = self._cursor if self._cursor is not None else n
        j = bisect.bisect_left(cands, ref)
        lo, hi = j - 1, j
        best, best_len, best_dist, seen = None, 0, 0, 0
        while seen < self.max_candidates and (lo >= 0 or hi < len(cands)):
            pick_lo = hi >= len(cands) or (lo >= 0 and ref - cands[lo] <= cands[hi] - ref)
            if pick_lo:
                p = cands[lo]
                lo -= 1
            else:
                p = cands[hi]
                hi += 1
            seen += 1
            if p >= n:  # the key at the very end has no continuation yet
                continue
            ln = self._match_len(p, n)
            dist = abs(p - ref)
            if ln > best_len or (ln == best_len and best is not None and dist < best_dist):
                best, best_len, best_dist = p, ln, dist
        self.last_match_len = best_len
        return best

    def _text_anchor(self, n: int) -> int | None:
        """Anchor on the output's last bytes in the spans' text, when no n-gram matches.

        With runs of whitespace collapsed, the longest suffix of at least ``text_min``
        bytes found in the text of the prompt's spans, where it occurs once or next to the
        previous cursor. A quote that starts mid-line, follows a quotation mark or joins
        lines the source wraps shares no token n-gram with its source, only bytes: it
        re-anchors at its first distinctive word (the rest of a source token the output
        stopped inside re-encoded as in a byte resync).
        """
        if self._piece_fn is None or not self.spans or self.prompt_len is None:
            return None
        if n <= self.prompt_len or self._encode is None:
            return None
        last = self._piece(int(self._buf[n - 1]))
        if not last.strip() or last[-1:].isspace():
            return None  # at a line start the line resync knows better
        if self._text is None:
            self._text = _SpanText(
                [(s, e) for s, e, _ in self.spans if e <= self.prompt_len], self._buf, self._piece
            )
        tail = b"".join(self._piece(int(t)) for t in self._buf[max(0, n - 24) : n])
        ref = self._cursor if self._cursor is not None else n
        hit = self._text.find_tail(_squash(tail), self.text_min, ref)
        if hit is None:
            return None
        tok, used, length = hit
        rest = self._piece(int(self._buf[tok]))[used:]
        head: list[int] = []
        if rest:
            head = list(self._encode(rest))
            if not head:
                return None
        self._prefix = head
        # the anchor's strength: the output's last tokens whose bytes the match covers
        covered, size = 0, 0
        while covered < n - self.prompt_len:
            size += len(self._piece(int(self._buf[n - 1 - covered])))
            if size > length:
                break
            covered += 1
        self.last_match_len = max(1, covered)
        return tok + 1

    def _near_resync(self, n: int, window: int = 48) -> int | None:
        """After a splice, find the last token just ahead of the old copy position.

        An edit often changes token boundaries (``TextWrapper`` -> ``Wrapper``), so no
        2-gram matches yet; the last token alone, searched only in a short window
        after where the copy was, re-synchronises one step earlier.
        """
        g = self._last_good
        if g is None:
            return None
        end = min(g + window, n - 1, self.prompt_len or n)
        if end <= g:
            return None
        hits = np.flatnonzero(self._buf[g:end] == self._buf[n - 1])
        if not hits.size:
            return None
        self.last_match_len = 1
        return g + int(hits[0]) + 1

    def _line_resync(self, n: int) -> int | None:
        """At a line start with no n-gram match, continue at the start of the source line
        that follows the most recent matching line (a copy resumes right after an edited
        hunk)."""
        if not self.newline_ids or self._last_good is None:
            return None
        if int(self._buf[n - 1]) not in self.newline_ids:
            return None
        # the first line start after the old cursor: the line after the edited one
        j = bisect.bisect_right(self._line_starts, self._last_good)
        if j >= len(self._line_starts):
            return None
        p = self._line_starts[j]
        if p >= (self.prompt_len or n):
            return None
        self.last_match_len = 0
        return p


def _squash(text: bytes) -> bytes:
    """``text`` with its runs of whitespace made one space, and stripped."""
    return b" ".join(text.split())


class _SpanText:
    """The prompt spans' text, whitespace runs squashed, mapped back to token positions."""

    def __init__(self, spans, buf: np.ndarray, piece: Callable[[int], bytes]) -> None:
        out = bytearray()
        self.tok: list[int] = []  # per byte of ``text``: the token it ends in
        self.used: list[int] = []  # per byte: how many of that token's bytes it ends at
        for s, e in spans:
            for pos in range(s, e):
                for j, ch in enumerate(piece(int(buf[pos]))):
                    if ch in _SPACE:
                        if not out or out[-1] == 0:
                            continue  # a span's leading whitespace
                        if out[-1] == 32:  # a run goes on: its space now ends here
                            self.tok[-1], self.used[-1] = pos, j + 1
                            continue
                        ch = 32
                    out.append(ch)
                    self.tok.append(pos)
                    self.used.append(j + 1)
            out.append(0)  # no match runs from one span into the next
            self.tok.append(-1)
            self.used.append(0)
        self.text = bytes(out)

    def find_tail(
        self, tail: bytes, least: int, ref: int, near: int = 64
    ) -> tuple[int, int, int] | None:
        """The longest suffix of ``tail`` (at least ``least`` bytes) found in the text:
        ``(token, bytes of it used, suffix length)`` at its only occurrence, or at the one
        within ``near`` tokens of ``ref`` (None when it is found in several places, far
        from ``ref``)."""
        if len(tail) < least or tail[-least:] not in self.text:
            return None
        lo, hi = least, len(tail)  # the longest length whose suffix occurs (monotone)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if tail[-mid:] in self.text:
                lo = mid
            else:
                hi = mid - 1
        needle, ends = tail[-lo:], []
        at = self.text.find(needle)
        while at >= 0 and len(ends) < 32:
            ends.append(at + lo - 1)
            at = self.text.find(needle, at + 1)
        end = min(ends, key=lambda e: abs(self.tok[e] - ref))
        if len(ends) > 1 and abs(self.tok[end] - ref) > near:
            return None  # a guess among far occurrences: the next token will tell
        return self.tok[end], self.used[end], lo


_SPACE = frozenset(b" \t\n\r\f\v")
