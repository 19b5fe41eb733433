"""Prompts: the chat messages, their token ids and spans, and the fence, built once.

Contract: every builder returns a frozen ``Prompt``: token ids, the spans the lookup drafter copies
from (``file``, ``whole``, ``context``, ``outline``, ``previous``), the closing ``fence``,
``prefix_end`` (the end of the prefix every prompt about the file shares: system text, context
files, the whole file), the ``part`` rewritten, ``edit`` and ``chat`` (the messages:
``rewrite_messages``/``answer_messages``). User text is never parsed for special tokens.
  * ``rewrite_prompt(target, text, instruction, ...)``: the assistant turn opens with the fence
    (``fence_for``), so the output starts with the text's first line (``edit="blocks"``: blocks).
  * ``outline_prompt(...)``: a file too long to show whole, as its outline and windows of its lines
    (``app.code.outline``), asking where the change goes (``ask="locate"``), for blocks, or a region.
  * ``answer_prompt(target, question, context_files, style=)``: free text grounded in the files
    (``quote`` style: passages under ``[FILE]`` citations, ``app.answer.quotes``; ``free``).
  * ``shown_paths(paths)``: the names files go by (relative to the working directory, else the
    shortest unique tail), never a tmp or home path; ``splice`` is the general builder.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from ...engine.backend import TargetModel
from ..code.syntax import language_name
from ..edit import edits
from ..options import ANSWER_STYLES
from ..store.files import FileError
from .stream import fence_for

FILE_MARK = "\x00SPECEDIT_FILE\x00"
FULL_MARK = "\x00SPECEDIT_FULL\x00"
CTX_MARK = "\x00SPECEDIT_CTX{}\x00"
PREV_MARK = "\x00SPECEDIT_PREV\x00"
OUTLINE_MARK = "\x00SPECEDIT_OUTLINE\x00"
WINDOW_MARK = "\x00SPECEDIT_WINDOW{}\x00"
_WINDOW = WINDOW_MARK.split("{")[0]
_LABELS = {FILE_MARK: "file", FULL_MARK: "whole", PREV_MARK: "previous", OUTLINE_MARK: "outline"}

LOCATE = (
    "Where in the file does this change go? Copy the outline lines of the definitions "
    "(or statements) that must change, one per line, in one code block, and nothing else."
)

SYSTEM_REWRITE = (
    "You are a precise code editor. Apply the user's instruction to the text and output "
    "the complete result in one fenced code block and nothing else. Change only what the "
    "instruction requires; copy every other line exactly as it is."
)
SYSTEM_QUOTE = (
    "You answer questions from the documents you are given, by quoting them. Reply in this "
    "form: first a short answer of one or two sentences; then the evidence. For each passage "
    "you rely on, write the name of its document in square brackets on a line of its own, "
    "[FILE], and under it the passage copied exactly, character for character, in a ``` "
    "block. Copy whole lines or the exact words you need; never reword a quote. If the "
    "documents do not answer the question, say so and quote nothing."
)
"""The ``quote`` style's system text: the answer format ``app.answer.quotes`` reads."""
QUOTE_EXAMPLE = (
    "garden.md",
    "# Garden\n\nWater the tomatoes every second evening; in a heat wave, every evening.\n"
    "The shed key hangs by the back door.\n",
    "How often are the tomatoes watered?",
    "Every second evening, and every evening in a heat wave.\n\n"
    "[garden.md]\n```\nWater the tomatoes every second evening; in a heat wave, every evening.\n```",
)
"""``(file, text, question, answer)``: one exchange in the format, shown as a first turn
(small models follow a turn they see far better than a format they are told). Its
subject is far from any the user's files may have: the 1.5B quoted an earlier example
about a server's port and logs when asked where a plugin's server logs go."""
QUOTE_ASK = "Answer briefly, then quote the lines that show it, each under its [file] citation."
"""Follows the question: the format again, next to where the answer starts."""
SYSTEM_ANSWER = (
    "You answer questions using the given documents. Quote them exactly where that helps; "
    "do not invent facts that are not in them."
)
"""The ``free`` style: the prompt before answers quoted (kept to measure against)."""

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
    def marks(self) -> tuple[int, ...]:
        """Where prompts of one file part ways (``engine.prefill`` evaluates the prompt in
        batches counted from each): after the prefix every rewrite of the file shares and,
        in a region rewrite, after the region's lines (where a warm-up of the region stops).
        Every front end derives them from the prompt alone."""
        return tuple(sorted({self.prefix_end, self.part_end} - {0}))


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


def rewrite_fence(text: str) -> str:
    """The fence of every rewrite of ``text``, whole or a region (longer than any backtick
    run in the file, so none of its lines can close the block)."""
    return fence_for(text)


def _context_pieces(context_files: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The context files' texts by their marks (``CTX_MARK``), for ``splice``."""
    return {CTX_MARK.format(i): _with_nl(ctext) for i, (_, ctext) in enumerate(context_files)}


def _with_nl(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


def rewrite_prompt(
    target: TargetModel,
    text: str,
    instruction: str,
    *,
    lines: Sequence[str] | None = None,
    path: str | None = None,
    context_files: Sequence[tuple[str, str]] = (),
    region: tuple[int, int] | None = None,
    feedback: tuple[str, str] | None = None,
    edit: str = "whole",
) -> Prompt:
    """The prompt of a rewrite of ``text`` (or of its lines ``region``); ``lines`` are
    ``text``'s lines when the caller has them (``app.code.diff.split_lines``); ``feedback`` is
    (the previous output, the user's note on it). ``edit="blocks"`` asks for
    search/replace blocks instead (``app.edit.edits.FORMAT`` after the instruction, the
    assistant turn opened with ``edits.PREFILL``): the prefix up to the end of the file is
    the same either way."""
    if region is not None:
        if lines is None:
            from ..code.diff import split_lines

            lines = split_lines(text)
        a, b = region
        if not (0 <= a < b <= max(len(lines), 1)):
            raise FileError(f"region {a + 1}:{b} is outside the text's {len(lines)} lines")
        part, full = "".join(lines[a:b]), text
    else:
        part, full = text, None
    messages, prefix = rewrite_messages(
        part, instruction, path, list(context_files), full, feedback_note(feedback), edit
    )
    pieces = {FILE_MARK: _with_nl(part)}
    if feedback is not None:
        pieces[PREV_MARK] = _with_nl(feedback[0])
    if full is not None:
        pieces[FULL_MARK] = _with_nl(full)
    pieces.update(_context_pieces(context_files))
    ids, spans = splice(target, messages, prefix, pieces)
    whole = [end for _, end, lab in spans if lab == "whole"]
    part_end = max((end for _, end, lab in spans if lab != "previous"), default=0)
    prefix_end = whole[0] if whole else part_end  # the previous output comes after it
    fence = rewrite_fence(text)
    chat = chat_of(messages, prefix, pieces)
    return Prompt(tuple(ids), tuple(spans), fence, prefix_end, part, region, edit, chat)


def outline_prompt(
    target: TargetModel,
    text: str,
    instruction: str,
    outline: str,
    *,
    lines: Sequence[str],
    path: str | None = None,
    context_files: Sequence[tuple[str, str]] = (),
    windows: Sequence[tuple[int, int]] = (),
    region: tuple[int, int] | None = None,
    ask: str = "locate",
) -> Prompt:
    """The prompt for a file too long to show whole (``app.code.outline``): its ``outline``,
    then the ``windows`` of its lines shown in full, then (``ask="whole"``) the ``region``
    to rewrite, the instruction, and what to write: ``locate`` (the outline lines of
    where the change goes, in a plain fenced block), ``blocks`` (search/replace blocks,
    placed inside the windows) or ``whole`` (the region, rewritten). Every such prompt of a
    file shares the prefix through the outline (``prefix_end``)."""
    fence = rewrite_fence(text)
    lang = language_name(path)
    shown, *cpaths = shown_paths([path, *(c for c, _ in context_files)])
    name = shown or "the text"
    parts = [
        f"Context file {cpath}:\n{fence}\n{CTX_MARK.format(i)}{fence}\n"
        for i, cpath in enumerate(cpaths)
    ]
    parts.append(
        f"File {name} has {len(lines):,} lines, too many to show whole. Its outline (line "
        f"numbers, then the line):\n{fence}\n{OUTLINE_MARK}{fence}\n"
    )
    pieces = {OUTLINE_MARK: _with_nl(outline)}
    for i, (a, b) in enumerate(windows):
        parts.append(
            f"Lines {a + 1}-{b} of {name}:\n{fence}{lang}\n{WINDOW_MARK.format(i)}{fence}\n"
        )
        pieces[WINDOW_MARK.format(i)] = _with_nl("".join(lines[a:b]))
    part = ""
    if ask == "whole":
        assert region is not None
        a, b = region
        part = "".join(lines[a:b])
        parts.append(
            f"Rewrite only lines {a + 1}-{b} and output only the rewritten lines:\n"
            f"{fence}{lang}\n{FILE_MARK}{fence}\n"
        )
        pieces[FILE_MARK] = _with_nl(part)
    parts.append(f"Instruction: {instruction}")
    opening = f"{fence}{lang}\n"
    if ask == "locate":
        parts.append(LOCATE)
        opening = f"{fence}\n"
    elif ask == "blocks":
        parts.append(edits.FORMAT)
        opening += edits.PREFILL
    pieces.update(_context_pieces(context_files))
    messages = [
        {"role": "system", "content": SYSTEM_REWRITE},
        {"role": "user", "content": "\n".join(parts)},
    ]
    ids, spans = splice(target, messages, opening, pieces)
    prefix_end = next(e for _, e, lab in spans if lab == "outline")
    edit = "blocks" if ask == "blocks" else "whole"
    region = region if ask == "whole" else None
    chat = chat_of(messages, opening, pieces)
    return Prompt(tuple(ids), tuple(spans), fence, prefix_end, part, region, edit, chat)


def feedback_note(feedback: tuple[str, str] | None) -> str | None:
    """The user's note of a ``(previous output, note)`` pair (None without feedback)."""
    return None if feedback is None else feedback[1].strip() or "try again"


REVIEW_ASK = (
    "A proposed change to it, as a unified diff:\n{fence}diff\n{diff}{fence}\n"
    "Does this change do what the instruction asks, correctly and completely? "
    "Answer yes or no."
)


def review_prompt(
    target: TargetModel,
    text: str,
    instruction: str,
    diff: str,
    *,
    path: str | None = None,
    context_files: Sequence[tuple[str, str]] = (),
) -> Prompt:
    """The prompt that asks the model whether ``diff`` does what ``instruction`` asks of
    ``text`` (``app.edit.review``): the prefix every rewrite of the file shares (system text,
    context files, the file), then the instruction, the diff and ``REVIEW_ASK``; the
    assistant turn opens empty, so its first token is the answer."""
    messages, _ = rewrite_messages(text, instruction, path, list(context_files))
    user = (
        messages[1]["content"]
        + "\n"
        + REVIEW_ASK.format(fence=fence_for(diff), diff=_with_nl(diff))
    )
    messages = [messages[0], {"role": "user", "content": user}]
    pieces = {FILE_MARK: _with_nl(text), **_context_pieces(context_files)}
    ids, spans = splice(target, messages, "", pieces)
    prefix_end = max((end for _, end, lab in spans if lab == "file"), default=0)
    return Prompt(tuple(ids), tuple(spans), None, prefix_end, text)


def answer_prompt(
    target: TargetModel,
    question: str,
    context_files: Sequence[tuple[str, str]],
    style: str = "quote",
) -> Prompt:
    """The prompt of a question answered from ``context`` files (their spans are drafted);
    ``prefix_end`` is the end of the last file, so a prompt cache keeps the system text and
    the files for the next question about them."""
    pieces = {CTX_MARK.format(i): c for i, (_, c) in enumerate(context_files)}
    messages = answer_messages(question, list(context_files), style)
    ids, spans = splice(target, messages, "", pieces)
    prefix_end = max((e for _, e, _ in spans), default=0)
    return Prompt(
        tuple(ids), tuple(spans), prefix_end=prefix_end, chat=chat_of(messages, "", pieces)
    )


def rewrite_messages(
    text: str,
    instruction: str,
    path: str | None = None,
    context_files: list[tuple[str, str]] = (),
    full_text: str | None = None,
    feedback: str | None = None,
    edit: str = "whole",
) -> tuple[list[dict[str, str]], str]:
    """Messages for a rewrite of ``text`` and the assistant prefix (the opening fence, and
    with ``edit="blocks"`` the opening of the first search/replace block).

    ``full_text`` is the whole file when ``text`` is only a region of it; it is
    shown for reference and the model is told to output the region alone.
    The text to rewrite appears as ``FILE_MARK`` and the whole file, in a region
    rewrite, as ``FULL_MARK``, for the caller to splice as pieces that end in a newline
    (the user's text is tokenized on its own and never parsed for special tokens).
    With ``feedback`` (the user's note on the previous output) the previous output follows
    the file as ``PREV_MARK`` and the note follows the instruction.
    """
    fence = rewrite_fence(full_text if full_text is not None else text)
    lang = language_name(path)
    shown, *cpaths = shown_paths([path, *(c for c, _ in context_files)])
    name = shown or "the text"
    parts = []
    for i, cpath in enumerate(cpaths):
        parts.append(f"Context file {cpath}:\n{fence}\n{CTX_MARK.format(i)}{fence}\n")
    # the whole file comes first either way, so a region rewrite and a whole-file one
    # share the prompt's prefix up to the end of the file (``Prompt.prefix_end``)
    whole = FILE_MARK if full_text is None else FULL_MARK
    parts.append(f"File {name}:\n")
    parts.append(f"{fence}{lang}\n{whole}{fence}\n")
    if full_text is not None:
        parts.append(
            "Rewrite only this part of it and output only the rewritten part:\n"
            f"{fence}{lang}\n{FILE_MARK}{fence}\n"
        )
    if feedback is not None:
        parts.append(f"Your previous rewrite of it:\n{fence}{lang}\n{PREV_MARK}{fence}\n")
    parts.append(f"Instruction: {instruction}")
    if feedback is not None:
        parts.append(
            f"Feedback on your previous rewrite: {feedback}\n"
            "Rewrite the original again, following the instruction and this feedback."
        )
    opening = f"{fence}{lang}\n"
    if edit == "blocks":
        parts.append(edits.FORMAT)
        opening += edits.PREFILL
    elif edit != "whole":
        raise ValueError(f"unknown edit format {edit!r}")
    messages = [
        {"role": "system", "content": SYSTEM_REWRITE},
        {"role": "user", "content": "\n".join(parts)},
    ]
    return messages, opening


def answer_messages(
    question: str, context_files: list[tuple[str, str]], style: str = "quote"
) -> list[dict[str, str]]:
    """The messages of a question about ``context`` files, which appear as ``CTX_MARK``s.

    ``quote`` (the product): the answer quotes the files verbatim under ``[FILE]``
    citations (``SYSTEM_QUOTE``; ``app.answer.quotes`` reads and checks them). ``free``: the
    earlier prompt, which asked for quotes "where that helps" (``SYSTEM_ANSWER``). Either
    way the files come first and the question last, so questions about the same files
    share the prompt's prefix."""
    if style not in ANSWER_STYLES:
        raise ValueError(f"unknown answer style {style!r}; one of {', '.join(ANSWER_STYLES)}")
    names = shown_paths([path for path, _ in context_files])
    parts = [
        _document(name, CTX_MARK.format(i), text)
        for i, (name, (_, text)) in enumerate(zip(names, context_files, strict=True))
    ]
    if style == "free":
        return [
            {"role": "system", "content": SYSTEM_ANSWER},
            {"role": "user", "content": "\n".join([*parts, question])},
        ]
    ex_file, ex_text, ex_question, ex_answer = QUOTE_EXAMPLE
    return [
        {"role": "system", "content": SYSTEM_QUOTE},
        {"role": "user", "content": f"{_document(ex_file, ex_text, ex_text)}\n{_ask(ex_question)}"},
        {"role": "assistant", "content": ex_answer},
        {"role": "user", "content": "\n".join([*parts, _ask(question)])},
    ]


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


def _document(path: str, mark: str, text: str) -> str:
    """A file shown to answer from: its name, then ``mark`` (its text) in a fence."""
    fence = fence_for(text)
    return f"Document {path}:\n{fence}\n{mark}{_nl(text)}{fence}\n"


def _ask(question: str) -> str:
    return f"Question: {question}\n{QUOTE_ASK}"


def _nl(text: str) -> str:
    return "" if not text or text.endswith("\n") else "\n"
