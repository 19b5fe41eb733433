"""Prompts: token ids, the spans the drafter copies from, the fence; built once per request.

Contract: a frozen ``Prompt`` holds the token ids, the spans the lookup drafter copies from
(``file``, ``whole``, ``context``, ``outline``, ``previous``, ``shown``, ``format``), the closing
``fence``, ``prefix_end`` (the end of the prefix every prompt about the file shares: system text,
context files, the whole file; ``warm_end``: a blocks prompt's, through its format text), the ``part`` rewritten, ``edit`` and ``chat`` (the messages, for a
chat-only engine). ``splice(target, messages, prefix, pieces)`` renders chat messages with the
model's template and tokenizes each piece (a file's text) on its own at its mark, never parsed
for special tokens. ``shown_paths(paths)``: the names files go by in a prompt (relative to the
working directory, else the shortest unique tail), never a tmp or home path. The builders live
with their jobs: ``app.edit.prompts`` (a rewrite, a big file's outline, a review) and
``app.answer.prompts`` (a question about context files).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from ...engine.backend import TargetModel

FILE_MARK = "\x00SPECEDIT_FILE\x00"
FULL_MARK = "\x00SPECEDIT_FULL\x00"
CTX_MARK = "\x00SPECEDIT_CTX{}\x00"
PREV_MARK = "\x00SPECEDIT_PREV\x00"
OUTLINE_MARK = "\x00SPECEDIT_OUTLINE\x00"
WINDOW_MARK = "\x00SPECEDIT_WINDOW{}\x00"
SHOWN_MARK = "\x00SPECEDIT_SHOWN\x00"
FORMAT_MARK = "\x00SPECEDIT_FORMAT\x00"
_WINDOW = WINDOW_MARK.split("{")[0]
_LABELS = {
    FILE_MARK: "file",
    FULL_MARK: "whole",
    PREV_MARK: "previous",
    OUTLINE_MARK: "outline",
    SHOWN_MARK: "shown",
    FORMAT_MARK: "format",
}


Span = tuple[int, int, str]
"""``(start, end, label)``: token positions ``[start, end)`` of a spliced piece."""


FIT_MARGIN = 8
"""Tokens kept free beyond a prompt and its answer (the closing fence, an end token)."""


@dataclass(frozen=True)
class Chat:
    """A prompt as chat messages, for an engine that takes nothing else (a chat-only API:
    ``app.runtime.remote_engine``): the messages with their marks filled, and the ``opening`` the
    token prompt pre-fills in the assistant turn (there the model writes it itself)."""

    messages: tuple[tuple[str, str], ...]
    """(role, content) in order."""
    opening: str = ""


def chat_of(messages: Sequence[dict[str, str]], opening: str, pieces: dict[str, str]) -> Chat:
    """``messages`` with each mark replaced by its piece, and the assistant ``opening``."""
    filled = []
    for m in messages:
        content = m["content"]
        for mark, body in pieces.items():
            content = content.replace(mark, body)
        filled.append((m["role"], content))
    return Chat(tuple(filled), opening)


@dataclass(frozen=True)
class Prompt:
    """A prompt ready for the engine (see the module docstring)."""

    ids: tuple[int, ...]
    spans: tuple[Span, ...]
    fence: str | None = None
    """The closing fence of the block the model writes; None for free text."""
    prefix_end: int = 0
    """End of the prefix every rewrite of the same file shares (0: none)."""
    part: str = ""
    """The text the model rewrites: the region, or the whole text."""
    region: tuple[int, int] | None = None
    """0-based ``[start, end)`` lines of ``part`` in the file; None for the whole file."""
    edit: str = "whole"
    """What the model writes in its block: ``whole`` (the new ``part``) or ``blocks``
    (search/replace blocks, ``app.edit.edits``, opened by ``edits.PREFILL``)."""
    chat: Chat | None = None
    """The same prompt as messages (None where it has no chat form: a raw completion)."""

    def __len__(self) -> int:
        return len(self.ids)

    def room(self, n_ctx: int) -> int:
        """Output tokens the context has left after this prompt (one slot kept back)."""
        return n_ctx - len(self.ids) - 1

    def fits(self, n_ctx: int, out: int | None = None) -> bool:
        """Whether this prompt and ``out`` output tokens (default: a copy of ``part``, what
        a whole rewrite writes) fit an ``n_ctx`` context, with ``FIT_MARGIN`` to spare."""
        want = self.part_tokens if out is None else out
        return len(self.ids) + want + FIT_MARGIN <= n_ctx

    @property
    def part_tokens(self) -> int:
        """Tokens of the text being rewritten (what the model copies)."""
        return sum(e - s for s, e, lab in self.spans if lab == "file")

    @property
    def part_end(self) -> int:
        """Where the text being rewritten ends in the prompt (a warm-up of a region stops
        there, so the rewrite of that region prefills only its instruction)."""
        return max((e for _, e, lab in self.spans if lab == "file"), default=0)

    @property
    def warm_end(self) -> int:
        """Where a warm-up of this prompt stops: ``prefix_end``, or past the format's text when
        it comes before the instruction (``RewriteOptions.first`` ``early``): every blocks
        prompt of the file shares it."""
        return max([self.prefix_end, *(e for _, e, lab in self.spans if lab == "format")])

    @property
    def marks(self) -> tuple[int, ...]:
        """Where prompts of one file part ways (``engine.prefill`` evaluates the prompt in
        batches counted from each): after the prefix every rewrite of the file shares, after
        a blocks prompt's format text when it comes first (``warm_end``) and, in a region
        rewrite, after the region's lines (where a warm-up of the region stops). Every front
        end derives them from the prompt alone."""
        return tuple(sorted({self.prefix_end, self.warm_end, self.part_end} - {0}))


def splice(
    target: TargetModel, messages: list[dict[str, str]], prefix: str, pieces: dict[str, str]
) -> tuple[list[int], list[Span]]:
    """Render ``messages`` (+ ``prefix``), splice tokenized ``pieces`` at their marks."""
    rendered = target.chat_prompt(messages) + prefix
    ids: list[int] = []
    spans: list[Span] = []
    rest = rendered
    while rest:
        hits = [(rest.find(mark), mark) for mark in pieces if mark in rest]
        if not hits:
            ids += target.tokenize(rest, special=True)
            break
        at, mark = min(hits)
        if at:
            ids += target.tokenize(rest[:at], special=True)
        body = pieces[mark]
        start = len(ids)
        # the user's text is never parsed for special tokens
        ids += target.tokenize(body, special=False) if body else []
        label = _LABELS.get(mark) or ("whole" if mark.startswith(_WINDOW) else "context")
        spans.append((start, len(ids), label))
        rest = rest[at + len(mark) :]
    return ids, spans


def context_pieces(context_files: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The context files' texts by their marks (``CTX_MARK``), for ``splice``."""
    return {CTX_MARK.format(i): with_nl(ctext) for i, (_, ctext) in enumerate(context_files)}


def with_nl(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


def shown_paths(paths: Sequence[str | None]) -> list[str | None]:
    """The name each of ``paths`` goes by in a prompt (None stays None): the path relative
    to the working directory when the file is inside it, else its shortest tail (the file's
    name, then its folder and name, ...) that no other of ``paths`` ends with."""
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was removed
        cwd = None
    out: list[str | None] = []
    for p in paths:
        if p is None:
            out.append(None)
            continue
        full = os.path.abspath(p)
        rel = os.path.relpath(full, cwd) if cwd else os.pardir
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            out.append(PurePath(rel).as_posix())
            continue
        parts = PurePath(full).parts[1:] or (full,)
        others = [PurePath(os.path.abspath(o)).parts for o in paths if o is not None and o != p]
        n = 1
        while n < len(parts) and any(o[-n:] == parts[-n:] for o in others):
            n += 1
        out.append("/".join(parts[-n:]))
    return out
