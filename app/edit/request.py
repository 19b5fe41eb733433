"""One rewrite request, read once: the file, what the instruction asks, whether it is broad.

Contract: ``read_request(opts, text, path) -> Request``: the file as one ``Source``
(``app.code.source``: tree-sitter parses it at most once), the instruction with the user's
feedback note (``asked``) read once into the ``Intent`` (``app.check.intent``) that every stage,
round and check of the rewrite reads, and ``broad``: why ``auto`` writes the whole file at once
("" when it does not). ``broad`` reads the instruction as the user gave it, the note aside; only
a re-run with a note reads it a second time for that. Nothing after this reads the words again.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..check.intent import Intent, read_intent
from ..code.names import whole_word
from ..code.source import Source
from ..options import RewriteOptions
from .prompts import feedback_note

BROAD_LINES = 10
"""A rename of a name that is on at least this many lines of the file is a broad edit."""


@dataclass(frozen=True)
class Request:
    """What a rewrite is asked, read once (module docstring)."""

    source: Source
    """The file (or text) to rewrite, with its language and definitions."""
    asked: str
    """The instruction, with the user's feedback note on a re-run."""
    intent: Intent
    """What ``asked`` asks of the file."""
    broad: str = ""
    """Why the change reaches across the file (``broad``; "" when it names a few places)."""


def read_request(opts: RewriteOptions, text: str, path: str | None) -> Request:
    """``opts``'s instruction on ``text`` (module docstring)."""
    source = Source(text, path)
    asked = " ".join(filter(None, (opts.instruction, feedback_note(opts.feedback))))
    intent = read_intent(asked, source)
    said = intent if asked == opts.instruction else read_intent(opts.instruction, source)
    return Request(source, asked, intent, broad(said, source))


def broad(intent: Intent, source: Source) -> str:
    """Why the change ``intent`` reads changes ``source`` across the file ("" when it names a
    few places): it says so (``everywhere``, ``throughout``, ``every …``, ``all the calls``,
    ``the whole file``); it renames a name that is on ``BROAD_LINES`` lines or more; or it asks
    for type hints or docstrings. The last two only when it names no definition of the file
    (besides the renamed name): ``In Repr.repr_dict, rename pieces to parts`` is local.
    Search/replace blocks for such a change repeat most of the file twice, so ``auto``
    writes the whole file at once instead."""
    if intent.everywhere:
        return f"the instruction asks for a change across the file ({intent.everywhere!r})"
    rename, across = intent.rename, intent.across
    if (not rename and not across) or intent.mentions:
        return ""
    if rename:
        old = rename[0]
        pattern = whole_word(old)
        n = sum(1 for line in source.text.splitlines() if pattern.search(line))
        if n >= BROAD_LINES:
            return f"the instruction renames {old!r}, which is on {n} lines of the file"
        return ""
    return f"the instruction asks for {across} and names no definition of the file"
