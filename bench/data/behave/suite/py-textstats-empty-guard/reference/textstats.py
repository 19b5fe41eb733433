"""Readability statistics for plain-text documents.

Used by the docs linter to flag pages that are hard to read.  All functions
take the text as one string; words are runs of letters, digits and
apostrophes, sentences end with '.', '!' or '?'.
"""

import re
from collections import Counter

WORD_RE = re.compile(r"[A-Za-z0-9']+")
SENTENCE_END_RE = re.compile(r"[.!?]+(?:\s+|$)")
VOWEL_GROUP_RE = re.compile(r"[aeiouy]+")


def words(text):
    """The words of ``text``, in order."""
    return WORD_RE.findall(text)


def sentences(text):
    """The non-empty sentences of ``text``, stripped."""
    parts = SENTENCE_END_RE.split(text)
    return [p.strip() for p in parts if p.strip()]


def count_syllables(word):
    """A rough syllable count: vowel groups, minus a silent final 'e', at least 1."""
    word = word.lower()
    groups = VOWEL_GROUP_RE.findall(word)
    count = len(groups)
    if word.endswith("e") and not word.endswith("le") and count > 1:
        count -= 1
    return max(1, count)


def average_word_length(text):
    """The mean number of characters per word of ``text``."""
    ws = words(text)
    if not ws:
        return 0.0
    return sum(len(w) for w in ws) / len(ws)


def average_sentence_length(text):
    """The mean number of words per sentence, 0.0 when there is no sentence."""
    ss = sentences(text)
    if not ss:
        return 0.0
    return sum(len(words(s)) for s in ss) / len(ss)


def flesch_reading_ease(text):
    """The Flesch reading-ease score (higher is easier; 60-70 is plain English)."""
    ws = words(text)
    ss = sentences(text)
    if not ws or not ss:
        return 0.0
    syllables = sum(count_syllables(w) for w in ws)
    return 206.835 - 1.015 * (len(ws) / len(ss)) - 84.6 * (syllables / len(ws))


def top_words(text, n=10, stopwords=frozenset()):
    """The ``n`` most common lower-cased words that are not stop words."""
    counts = Counter(w.lower() for w in words(text) if w.lower() not in stopwords)
    return counts.most_common(n)


def summary(text):
    """A dict of the main statistics, for the linter's report."""
    return {
        "words": len(words(text)),
        "sentences": len(sentences(text)),
        "avg_word_length": round(average_word_length(text), 2),
        "avg_sentence_length": round(average_sentence_length(text), 2),
        "reading_ease": round(flesch_reading_ease(text), 1),
    }
