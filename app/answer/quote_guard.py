"""Quotes that cannot be misquoted: inside a quoted passage, the decoder may only copy.

Contract: ``QuoteGuard(target, context_files, question='')`` is an ``engine.constraint.Constraint``
for answers in the ``quote`` format (``app.answer.prompts.SYSTEM_QUOTE``): a citation line ``[FILE]``, then
a fenced passage. Inside a passage ``allowed(out)`` admits only tokens whose bytes continue it as a
copy of the cited file (of any context file when the citation names none), starting at a word or
line start (on the lines ``app.answer.passage_rank`` finds for the question, when given); a newline or
the closing fence once it has a whole line or three words; only the closing fence past the
passage's paragraph (or ``MAX_LINES``). After a passage: another citation, blank lines, or the
end. A citation line is a context file's shown name (``app.runtime.prompt.shown_paths``), ``]`` and the
opening fence. Anything else is free: the prose and which passage stay the model's.
``completed(text)``: the answer the program completes once its first passage is chosen or pinned
(``app.answer.quote_insert``). With ``own_blocks`` an uncited block is the model's own, and free. Tokens
are matched by their bytes (``app.runtime.copy_guard.pieces``), so any tokenization of the copy is
allowed; pieces over ``MAX_PIECE`` bytes are not offered inside a quote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..runtime.copy_guard import MAX_PIECE, pieces, remembered
from ..runtime.prompt import shown_paths
from ..runtime.stream import fence_for
from .passage_rank import best_window, relevant_lines
from .quotes import CITE_RE, _resolve, prose

MAX_LINES = 8
"""The most lines a passage may quote: evidence, not the file (a passage the model ran on
took the answer to its token limit)."""

_WORDY = re.compile(rb"\w")
_OPENERS = frozenset(bytes([c]) for c in b"`'\"([{*_<")
_MID_LINE_WORDS = 3
"""A passage may stop mid-line once it holds this many words (a word alone is no evidence)."""
_FENCE_LINE = re.compile(rb"(?m)^[ \t]*`{3,}[ \t]*$")
_FENCE_OPEN = re.compile(rb"^(`{3,})[\w+-]*[ \t]*$")
_CITE_LINE = re.compile(r"^\s*" + CITE_RE.pattern + r"\s*:?\s*$")
_LEAD_IN = re.compile(rb"[ \t]*[^\n`]*\w[^\n`]*[:?][ \t]*(?=(?P<gap>\n[ \t]*\n)[ \t]*[^\s`])")
"""A line that leads into the next paragraph (a heading or a question ending in ``:`` or
``?``, then one blank line): a passage that starts on it goes on into that paragraph."""


def _starts(data: bytes) -> list[int]:
    """Where a quote of ``data`` may begin: the start of a line (its indent included), of a
    run of non-space bytes after a space, or of a word right after opening marks (``default``
    in ````default(obj)````: the model writes the name, not the markup), but not a fence line
    of the file's own (a passage is a fenced block: a fence inside it would end it)."""
    return [
        i
        for i in range(len(data))
        if (
            i == 0
            or data[i - 1 : i] == b"\n"
            or (data[i - 1 : i].isspace() and not data[i : i + 1].isspace())
            or (data[i - 1 : i] in _OPENERS and _WORDY.match(data, i) and _after_space(data, i))
        )
        and not ((i == 0 or data[i - 1] == 10) and data.startswith(b"```", i))
    ]


def _after_space(data: bytes, i: int) -> bool:
    """The opening marks before ``i`` follow a space or a line's start."""
    j = i
    while j > 0 and data[j - 1 : j] in _OPENERS:
        j -= 1
    return j == 0 or data[j - 1 : j].isspace()


class QuoteGuard:
    """The ``Constraint`` of quoted passages (module docstring)."""

    def __init__(
        self,
        target,
        context_files: Sequence[tuple[str, str]],
        question: str = "",
        own_blocks: bool = False,
    ) -> None:
        self.table, self.index = pieces(target)
        self.question = question
        self.own_blocks = own_blocks
        self._own = False  # the text read last ends inside a block of the model's own
        self._focus_memo: dict[tuple[int, bytes], set[int] | None] = {}
        self._pend: dict[tuple[int, int], int] = {}
        self._chosen_memo: dict[tuple[tuple[int, ...], bytes, bool], tuple[int, int] | None] = {}
        self.n_vocab = target.n_vocab
        self.labels = [label for label, _ in context_files]
        self.shown = shown_paths(self.labels)  # each file's name as the prompt shows it
        names = [n for n in self.shown if n]
        self._cites = [f"[{n}]\n".encode() for n in names]
        self.data = [text.encode() for _, text in context_files]
        self._starts: dict[int, list[int]] = {}
        self._start_set: dict[int, set[int]] = {}
        self._memo: dict[tuple[int, ...], np.ndarray | None] = {}
        self._toks: list[int] = []
        self._ends_at: list[int] = []
        self._text = bytearray()
        self._lines: list[tuple[int, tuple]] = []  # (offset after a line, the state there)
        self._parsed = b""
        self._close = self._ids([b"`", b"``", b"```", b"```\n"])
        # outside a passage: no token may start a citation that names no file ("[" at a
        # line's start, or after a newline inside the token); the rest is free
        wrong_start, wrong_after_nl, cite_starts, newlines = [], [], [], []
        for i, b in enumerate(self.table):  # one pass over the vocabulary
            if b.startswith(b"["):
                (cite_starts if self._cite_ok(b) else wrong_start).append(i)
            elif b and not b.strip(b"\n"):
                newlines.append(i)
            cut = b.rfind(b"\n")
            if cut >= 0 and b[cut + 1 : cut + 2] == b"[" and not self._cite_ok(b[cut + 1 :]):
                wrong_after_nl.append(i)
        eos = sorted(target.eos_ids)
        self._after = np.array(sorted({*eos, *newlines, *cite_starts}), np.int64)
        self._done = np.array(sorted({*eos, *newlines}), np.int64)
        self._closed = False
        free = np.ones(self.n_vocab, np.bool_)
        free[wrong_after_nl] = False
        self._free_mid = None if free.all() else free
        free = free.copy()
        free[wrong_start] = False
        self._free_start = None if free.all() else free
        self._newline = self._ids([b"\n", b"\n`", b"\n``", b"\n```", b"\n```\n"])

    def _ids(self, strings: Sequence[bytes]) -> list[int]:
        return [i for s in strings for i in self.index.get(s, ())]

    def allowed(self, out: Sequence[int]) -> np.ndarray | None:
        key = tuple(out)
        return remembered(self._memo, key, lambda: self._allowed(self._text_of(key)))

    def _text_of(self, out: tuple[int, ...]) -> bytes:
        """The bytes of ``out``, from the last call's where they share a prefix (the loop asks
        along one output that grows, with drafts that differ only at its tail)."""
        toks, ends = self._toks, self._ends_at
        n = 0
        for a, b in zip(toks, out, strict=False):
            if a != b:
                break
            n += 1
        del toks[n:], ends[n:]
        del self._text[ends[-1] if ends else 0 :]
        for t in out[n:]:
            toks.append(t)
            self._text += self.table[t]
            ends.append(len(self._text))
        return bytes(self._text)

    def _allowed(self, text: bytes) -> np.ndarray | None:
        quote = self._open_quote(text)
        if quote is None and self._own:
            return None  # the model's own block: its words, free
        if quote is None:
            line = text[text.rfind(b"\n") + 1 :]
            if line.startswith(b"["):
                return self._cite_allowed(line)
            before = text[: len(text) - len(line)]
            if any(before.endswith(c) for c in self._cites) and b"```\n".startswith(line):
                return self._cite_allowed(before[before.rfind(b"\n", 0, -1) + 1 :] + line)
            if self._closed and not line:  # after the evidence: more of it, or the end
                return self._after
            return self._free_start if not line else self._free_mid
        files, q, before = quote
        last = q.rsplit(b"\n", 1)[-1]
        if last and not last.strip(b"`") and len(q) > len(last):  # a closing fence under way
            if len(last) >= 3:
                return self._done  # the fence is closed: its line ends, or the answer does
            return np.array(self._fence_rest(last), np.int64)
        ids: set[int] = set()
        found = at_end = False
        for f in files:
            data = self.data[f]
            for end in self._ends(f, q, self._focus(f, before)):
                found = True
                limit = min(MAX_PIECE, self._passage_end(f, end - len(q)) - end)
                at_end |= limit <= 0
                for n in range(1, limit + 1):
                    ids.update(self.index.get(data[end : end + n], ()))
        if at_end and not ids:  # the passage has reached its paragraph's end: it closes
            return np.array(self._close if q.endswith(b"\n") else self._newline, np.int64)
        if q:
            if q.endswith(b"\n"):  # a line ends: the passage may close
                ids.update(self._close)
            elif found and (b"\n" in q or len(q.split()) >= _MID_LINE_WORDS):
                ids.update(self._newline)  # the passage may stop mid-line, after a few words
        return np.array(sorted(ids), np.int64) if ids else None

    def completed(self, text: bytes) -> bytes | None:
        """The answer ``text`` completed by the program once its first passage is chosen: the
        answer up to the passage, then the passage as whole lines of its file, from the start
        of the line it starts on to the end of its paragraph (``_passage_end``), and the
        closing fence (the program writes it: text that is not generated cannot be misquoted
        and costs no target call). Chosen: by the program as soon as the passage opens
        (``_chosen``: the best window for the question and the answer's words), else by the
        model's first words of it, once every place in the cited file(s) they copy (where
        the guard lets a passage start) gives the same passage. Once a passage has closed
        unchosen, the answer ends there as the model closed it. None while the answer is
        not there yet.

        A pure function of ``text`` whose answer, once not None, is the same for every longer
        text the guard allows (a copy that pins a passage pins it however far it goes), so the
        answer does not depend on where a block of accepted tokens happened to end."""
        first = self._first_passage(text)
        if first is None:
            return None
        files, body, close = first
        chosen = self._chosen(files, text[:body])
        if chosen is not None:
            f, start = chosen
            passage = self.data[f][start : self._passage_end(f, start)]
            return text[:body] + passage + (b"" if passage.endswith(b"\n") else b"\n") + b"```"
        q = text[body : len(text) if close is None else close]
        last = q.rsplit(b"\n", 1)[-1]
        if close is None and last and not last.strip(b"`") and len(q) > len(last):
            q = q[: len(q) - len(last)]  # a closing fence under way
        if close is not None or len(q) > len(q.rstrip(b"\n")):
            q = q[:-1] if q.endswith(b"\n") else q  # the copy, without the line end added
        passages = set()
        for f in files:
            data = self.data[f]
            for end in self._ends(f, q, self._focus(f, text[:body])) if q else ():
                start = end - len(q)
                passages.add(data[data.rfind(b"\n", 0, start) + 1 : self._passage_end(f, start)])
        if len(passages) == 1:
            (passage,) = passages
            return text[:body] + passage + (b"" if passage.endswith(b"\n") else b"\n") + b"```"
        if close is None:
            return None
        fence_end = text.find(b"\n", close)
        return text if fence_end < 0 else text[:fence_end]

    def evidence(self, answer: bytes) -> bytes | None:
        """The evidence the program adds to ``answer``, an answer that ended with no passage:
        a blank line, the citation ``[FILE]`` and the paragraph (``_passage_end``) that starts
        with the first line with words of the best window for the question and the answer's
        words (``_chosen``, over every context file), fenced (longer than any backtick run
        it holds: a Markdown passage with a code block of its own); None where that cannot choose
        (no question, no shared word, or two windows that score the same)."""
        chosen = self._chosen(list(range(len(self.data))), answer, first_of_ties=True)
        if chosen is None:
            return None
        f, start = chosen
        name = self.shown[f]
        passage = self.data[f][start : self._passage_end(f, start)]
        if not name or not passage.strip():
            return None
        tail = b"" if passage.endswith(b"\n") else b"\n"
        fence = fence_for(passage.decode("utf-8", "replace")).encode()  # ``` in the passage
        return b"\n\n[" + name.encode() + b"]\n" + fence + b"\n" + passage + tail + fence

    def _chosen(
        self, files: list[int], before: bytes, first_of_ties: bool = False
    ) -> tuple[int, int] | None:
        """(file, offset) where the passage after the answer ``before`` starts, chosen by the
        program: the first line with words of the best window ``app.answer.passage_rank`` finds for
        the question and the answer's words, in the best of ``files``, among the windows that
        hold a word of the question where any does (``about``); None without a
        question, when it shares no word with them, or when two windows score the same (the
        model's first words of the passage choose), unless ``first_of_ties``: then the first
        of the equal windows, in the first file that has one."""
        key = (tuple(files), before, first_of_ties)
        if key not in self._chosen_memo:
            best = None
            if self.question:
                query = self.question + "\n" + prose(before.decode("utf-8", "replace"), self.labels)
                texts = [self.data[f].decode("utf-8", "replace") for f in files]
                for about in (self.question, ""):  # a window about the question, if any is
                    scored = [
                        (got[0], f, got[1])
                        for f, text in zip(files, texts, strict=True)
                        if (
                            got := best_window(
                                text, query, first_of_ties=first_of_ties, corpus=texts, about=about
                            )
                        )
                    ]
                    if scored:
                        break
                scored.sort(key=lambda x: -x[0])  # stable: of equal files, the first
                if scored and (len(scored) == 1 or scored[1][0] < scored[0][0] or first_of_ties):
                    best = scored[0]
            if best is not None:
                _, f, line = best
                best = (f, sum(len(row) + 1 for row in self.data[f].split(b"\n")[:line]))
            if len(self._chosen_memo) > 64:
                self._chosen_memo.clear()
            self._chosen_memo[key] = best
        return self._chosen_memo[key]

    def passage_start(self, text: bytes) -> int | None:
        """Where the body of ``text``'s first passage starts (None: no passage yet)."""
        first = self._first_passage(text)
        return None if first is None else first[1]

    def _first_passage(self, text: bytes) -> tuple[list[int], int, int | None] | None:
        """(the files it may copy, where its body starts, where its closing fence line starts
        or None while it is open) of ``text``'s first passage, or None: the line-by-line
        reading of ``_open_quote``."""
        offset = 0
        while True:
            nl = text.find(b"\n", offset)
            got = self._open_quote(text if nl < 0 else text[: nl + 1])
            if got is not None:
                files, _, before = got
                body = len(before)
                m = _FENCE_LINE.search(text, body)
                return files, body, None if m is None else m.start()
            if nl < 0:
                return None
            offset = nl + 1

    def _passage_end(self, f: int, start: int) -> int:
        """Where a passage of file ``f`` that starts at ``start`` ends at the latest: after the
        last line of its paragraph (before a blank line, or a line of the file that starts
        with a fence), at most ``MAX_LINES`` lines, newline included. A passage that starts
        on a lead-in (``_LEAD_IN``: "General notes on the generator:", a FAQ's question)
        goes on over the one blank line into the paragraph it leads into."""
        key = (f, start)
        if key not in self._pend:
            data, i = self.data[f], start
            lead = _LEAD_IN.match(data, start)  # a lone heading or question: its point follows
            for n in range(MAX_LINES):
                nl = data.find(b"\n", i)
                if nl < 0:
                    i = len(data)
                    break
                i = nl + 1
                if n == 0 and lead:  # (it ends at this newline: it holds none)
                    i = nl + len(lead["gap"])
                    continue
                after = data.find(b"\n", i)
                line = data[i : after if after >= 0 else len(data)]
                if not line.strip() or line.startswith(b"```"):
                    break
            self._pend[key] = i
        return self._pend[key]

    def _cite_ok(self, tail: bytes) -> bool:
        """``tail`` (from a ``[`` at a line's start) may begin a citation of a context file."""
        return any(
            (c + b"```\n").startswith(tail) or tail.startswith(c + b"```\n") for c in self._cites
        )

    def _cite_allowed(self, line: bytes) -> np.ndarray | None:
        """A citation line under way (``[`` at a line's start): only a context file's name as
        the prompt shows it, then ``]``, the line's end and the opening fence."""
        ids: set[int] = set()
        for cite in self._cites:
            whole = cite + b"```\n"
            if whole.startswith(line):
                rest = whole[len(line) :]
                for n in range(1, len(rest) + 1):
                    ids.update(self.index.get(rest[:n], ()))
        return np.array(sorted(ids), np.int64) if ids else None

    def _fence_rest(self, begun: bytes) -> list[int]:
        """A begun closing fence goes on: one backtick or more of the rest (a vocabulary
        that writes them one at a time), or the rest and its newline at once."""
        need = 3 - len(begun)
        return self._ids([b"`" * n for n in range(1, need + 1)] + [b"`" * need + b"\n"])

    def _focus(self, f: int, before: bytes) -> set[int] | None:
        """Where in file ``f`` a passage may start after the answer ``before`` it: the starts
        on the lines ``app.answer.passage_rank`` finds for the question and the answer's own words so
        far (None: anywhere, when they share no word with the file or no question is
        known)."""
        key = (f, before)
        if key not in self._focus_memo:
            got = None
            if self.question:
                query = self.question + "\n" + prose(before.decode("utf-8", "replace"), self.labels)
                lines = set(relevant_lines(self.data[f].decode("utf-8", "replace"), query))
                if lines:
                    begin, on_lines = 0, set()
                    for n, row in enumerate(self.data[f].split(b"\n")):
                        if n in lines:
                            on_lines.update(range(begin, begin + len(row) + 1))
                        begin += len(row) + 1
                    got = {i for i in self._all_starts(f) if i in on_lines}
            if len(self._focus_memo) > 64:
                self._focus_memo.clear()
            self._focus_memo[key] = got
        return self._focus_memo[key]

    def _all_starts(self, f: int) -> list[int]:
        if f not in self._starts:
            self._starts[f] = _starts(self.data[f])
            self._start_set[f] = set(self._starts[f])
        return self._starts[f]

    def _ends(self, f: int, q: bytes, focus: set[int] | None = None) -> list[int]:
        """Where ``q`` ends in file ``f``, for each place it is a copy starting at a start
        (one in ``focus``, when given)."""
        data = self.data[f]
        starts = self._all_starts(f)
        if not q:
            return starts if focus is None else [i for i in starts if i in focus]
        ok = self._start_set[f] if focus is None else focus
        out, i = [], data.find(q)
        while i >= 0:
            if i in ok:
                out.append(i + len(q))
            i = data.find(q, i + 1)
        return out

    def _open_quote(self, text: bytes) -> tuple[list[int], bytes, bytes] | None:
        """(the files a quote may copy, the quote so far, the answer before it) when ``text`` ends inside a
        passage: a fenced block opened on the line after a citation line. The state after
        each complete line is kept, so a call parses only the lines after the last one both
        texts share."""
        saved = self._lines
        while saved and (
            saved[-1][0] > len(text) or self._parsed[: saved[-1][0]] != text[: saved[-1][0]]
        ):
            saved.pop()
        start = (0, ("out", "", 0, b"", False))
        offset, (state, cite, body_start, prev, closed) = saved[-1] if saved else start
        while (nl := text.find(b"\n", offset)) >= 0:
            line = text[offset:nl]
            offset = nl + 1
            if state != "out":
                bare = line.strip()
                if len(bare) >= 3 and not bare.strip(b"`"):
                    state, closed = "out", closed or state == "quote"
            elif _FENCE_OPEN.match(line.strip()):  # a passage, cited or not (own_blocks: cited)
                m = _CITE_LINE.match(prev.decode(errors="replace"))
                state = "quote" if m or not self.own_blocks else "own"
                cite, body_start = (m.group("file").strip() if m else ""), offset
            if line.strip():
                prev = line
            saved.append((offset, (state, cite, body_start, prev, closed)))
        self._parsed = text
        self._closed = closed
        self._own = state == "own"
        if state != "quote":
            return None
        f = _resolve(cite, self.labels)
        files = [self.labels.index(f)] if f is not None else list(range(len(self.labels)))
        return files, text[body_start:], text[:body_start]
