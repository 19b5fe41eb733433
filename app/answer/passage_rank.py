"""Find the passage first: the lines of a file most likely to state an answer.

Contract (pure and deterministic; text only, no model):
  * ``relevant_lines(text, query, top=TOP, span=SPAN) -> list[int]``: every window of ``span``
    lines (one starting at each line) scored by the words it shares with ``query``, each weighted
    by its rarity among the file's lines (IDF); the 0-based line numbers of the best ``top``
    windows that do not overlap (each with the line before it), in file order. A query that shares
    no word with the file gives [] (the caller decides what that means).
  * ``best_window(text, query) -> (score, line) | None``: the best window's score and first line
    (or where its sentence starts, up to ``span - 1`` lines before); None on a tie with a window
    that does not overlap it (``first_of_ties``: the first); ``corpus`` counts rarity over several
    texts; ``about`` (the question) counts only windows sharing one of its words.
Words are compared by a light stem (lower case, common English endings cut, the first six
letters; a code name such as ``maxBytes`` whole), without English function words and question
words. Why each rule: ``docs/notes.md``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

TOP = 4
"""Windows kept: the passage that states an answer is nearly always among the first few."""

SPAN = 3
"""Lines per window: a sentence that states a fact wraps over one to three lines."""

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*|\d+(?:\.\d+)*")
_NAME = re.compile(r"_|[A-Za-z]\d|[a-z][A-Z]")
"""A word that is a name of code: an underscore, a digit after a letter, or camelCase."""
_SUFFIXES = ("ations", "ation", "ings", "ing", "able", "edly", "ed", "es", "ly", "s", "e")
_STOP = frozenset(
    """a an the and or but if then else of to in on at by for from with without into onto
    as is are was were be been being it its this that these those there here which who whom
    whose what when where why how do does did done can could should would will shall may
    might must not no yes any all some each every other than so such only also just about
    over under up down out i you he she we they me my your our their them his her us one
    per via use used using get gets many much more most very same own""".split()
)


def stem(word: str) -> str:
    """``word``, lower case, a common ending cut (never below three letters), six letters;
    a name of code (``SPECEDIT_MODELS_DIR``, ``maxBytes``, ``utf8``) whole, lower case: it
    is one token, not an English word, and its first six letters are another name's."""
    if _NAME.search(word):
        return word.lower()
    w = word.lower()
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    return w[:6]


def terms(text: str) -> list[str]:
    """The stems of ``text``'s words that are not function words."""
    return [stem(w) for w in _WORD.findall(text) if w.lower() not in _STOP]


def relevant_lines(text: str, query: str, top: int = TOP, span: int = SPAN) -> list[int]:
    """The lines of the best ``top`` windows for ``query`` (module docstring)."""
    lines = text.split("\n")
    n = len(lines)
    keep: set[int] = set()
    chosen: list[int] = []
    for _, i in _windows(text, query, span):  # the best windows that do not overlap one kept
        if len(chosen) == top:
            break
        if all(abs(i - j) >= span for j in chosen):
            chosen.append(i)
            keep.update(range(max(0, i - 1), min(n, i + span)))  # and where its sentence starts
    return sorted(keep)


def best_window(
    text: str,
    query: str,
    span: int = SPAN,
    first_of_ties: bool = False,
    corpus: list[str] | None = None,
    about: str = "",
) -> tuple[float, int] | None:
    """(score, first line) of the best window for ``query`` (module docstring), its first
    line one with words; None when the query shares no word with the file, or when a window
    that does not overlap it scores the same (the ranking cannot tell them apart), unless
    ``first_of_ties``: then the first of them in the file (a docstring repeated in ``dump``
    and ``dumps``). ``corpus``: the texts whose lines say how rare a word is (every file
    the caller compares windows across, so that their scores compare), else ``text``.
    ``about``: the words one of which a window must hold (None when none does)."""
    lines = text.split("\n")
    got = _windows(text, query, span, corpus, set(terms(about)))
    if not got:
        return None
    score, i = got[0]
    if any(s == score and abs(j - i) >= span for s, j in got[1:]):
        if not first_of_ties:
            return None
        want, per_line = set(terms(query)), _line_terms(text)

        def words_at(j: int) -> int:  # a window's first line that shares a word
            return next((k for k in range(j, min(len(lines), j + span)) if want & per_line[k]), j)

        i = min(words_at(j) for s, j in got if s == score)
    while i < len(lines) - 1 and not _WORD.search(lines[i]):  # a blank line, a rule (-----)
        i += 1
    for _ in range(span - 1):  # where the sentence it continues starts
        if not _continues(lines[i - 1] if i else "", lines[i]):
            break
        i -= 1
    return score, i


def _continues(before: str, line: str) -> bool:
    """``line`` goes on with the sentence ``before`` began: it starts with a lower-case word
    (``  of UTF-8 JSON.`` under ``* **Framing:** … followed by N bytes``) and ``before`` has
    words and ends no sentence."""
    return bool(
        re.match(r"\s*[a-z]", line)
        and _WORD.search(before)
        and not before.rstrip().endswith((".", ":", "!", "?", "```"))
    )


def _windows(
    text: str,
    query: str,
    span: int,
    corpus: list[str] | None = None,
    must: set[str] | None = None,
) -> list[tuple[float, int]]:
    """(score, first line) of every window of ``span`` lines of ``text`` that shares a word
    with ``query`` (and one of ``must``, where given), the best first (of equals, the one
    that starts latest: at the words); a word's weight is its rarity among ``corpus``'s
    lines (else ``text``'s)."""
    per_line = _line_terms(text)
    df, n = _rarity(tuple(corpus) if corpus is not None else (text,))
    want = set(terms(query)) & {t for ts in per_line for t in ts}
    if not want:
        return []
    idf = {t: math.log(1 + n / df[t]) for t in want}
    scored = []
    for i in range(len(per_line)):
        seen = set().union(*per_line[i : i + span]) & want
        if seen and (not must or must & seen):
            scored.append((-sum(idf[t] for t in seen), -i))
    scored.sort()
    return [(-neg_score, -neg_i) for neg_score, neg_i in scored]


@lru_cache(maxsize=64)
def _line_terms(text: str) -> tuple[frozenset[str], ...]:
    """Each line's ``terms``, once per text (a question over the same files asks again)."""
    return tuple(frozenset(terms(line)) for line in text.split("\n"))


@lru_cache(maxsize=16)
def _rarity(texts: tuple[str, ...]) -> tuple[Counter, int]:
    """(in how many lines of ``texts`` each term is, how many lines they have)."""
    every = [ts for t in texts for ts in _line_terms(t)]
    return Counter(t for ts in every for t in ts), len(every)
