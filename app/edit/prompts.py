"""The prompts of a rewrite: the file and the instruction, a big file's outline, a review.

Contract: every builder returns a ``Prompt`` (``app.runtime.prompt``) whose prefix, up to the end
of the file, is the same for every prompt about that file (``prefix_end``), so the KV cache and
the prompt cache reuse it. User text is never parsed for special tokens.
  * ``rewrite_prompt(target, text, instruction, ...)``: the assistant turn opens with the fence
    (``rewrite_fence``), so the output starts with the text's first line (``edit="blocks"``:
    search/replace blocks, ``app.edit.edits.FORMAT``, opened by ``edits.PREFILL``).
  * ``outline_prompt(...)``: a file too long to show whole, as its outline and windows of its lines
    (``app.code.outline``), asking where the change goes (``ask="locate"``), for blocks, or a region.
  * ``review_prompt(...)``: asks whether a diff does what the instruction asks (``app.edit.review``).
  * ``plan_prompt(...)``: asks what must change, in words, before any code (``app.edit.plan_note``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...engine.backend import TargetModel
from ..code.syntax import language_name
from ..runtime.prompt import (
    CTX_MARK,
    FILE_MARK,
    FORMAT_MARK,
    FULL_MARK,
    OUTLINE_MARK,
    PREV_MARK,
    SHOWN_MARK,
    WINDOW_MARK,
    Prompt,
    chat_of,
    context_pieces,
    shown_paths,
    splice,
    with_nl,
)
from ..runtime.stream import fence_for
from ..store.files import FileError
from . import edits

LOCATE = (
    "Where in the file does this change go? Copy the outline lines of the definitions "
    "(or statements) that must change, one per line, in one code block, and nothing else."
)

SYSTEM_REWRITE = (
    "You are a precise code editor. Apply the user's instruction to the text and output "
    "the complete result in one fenced code block and nothing else. Change only what the "
    "instruction requires; copy every other line exactly as it is."
)


def rewrite_fence(text: str) -> str:
    """The fence of every rewrite of ``text``, whole or a region (longer than any backtick
    run in the file, so none of its lines can close the block)."""
    return fence_for(text)


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
    shown: Sequence[tuple[str, int, int]] = (),
    format_first: bool = False,
) -> Prompt:
    """The prompt of a rewrite of ``text`` (or of its lines ``region``); ``lines`` are
    ``text``'s lines when the caller has them (``app.code.diff.split_lines``); ``feedback`` is
    (the previous output, the user's note on it). ``edit="blocks"`` asks for
    search/replace blocks instead (``app.edit.edits.FORMAT`` after the instruction, the
    assistant turn opened with ``edits.PREFILL``): the prefix up to the end of the file is
    the same either way. ``shown``: ``(name, start, end)`` of definitions shown again after
    the instruction, their 0-based lines ``[start, end)`` numbered (``numbered``)."""
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
    names = [name for name, _, _ in shown]
    messages, prefix = rewrite_messages(
        part,
        instruction,
        path,
        list(context_files),
        full,
        feedback_note(feedback),
        edit,
        names,
        format_first,
    )
    pieces = {FILE_MARK: with_nl(part)}
    if format_first and edit == "blocks":
        pieces[FORMAT_MARK] = edits.FORMAT
    if shown:
        if lines is None:
            from ..code.diff import split_lines

            lines = split_lines(text)
        pieces[SHOWN_MARK] = "".join(numbered(lines, a, b) for _, a, b in shown)
    if feedback is not None:
        pieces[PREV_MARK] = with_nl(feedback[0])
    if full is not None:
        pieces[FULL_MARK] = with_nl(full)
    pieces.update(context_pieces(context_files))
    ids, spans = splice(target, messages, prefix, pieces)
    whole = [end for _, end, lab in spans if lab == "whole"]
    part_end = max(
        (end for _, end, lab in spans if lab not in ("previous", "shown", "format")), default=0
    )
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
    pieces = {OUTLINE_MARK: with_nl(outline)}
    for i, (a, b) in enumerate(windows):
        parts.append(
            f"Lines {a + 1}-{b} of {name}:\n{fence}{lang}\n{WINDOW_MARK.format(i)}{fence}\n"
        )
        pieces[WINDOW_MARK.format(i)] = with_nl("".join(lines[a:b]))
    part = ""
    if ask == "whole":
        assert region is not None
        a, b = region
        part = "".join(lines[a:b])
        parts.append(
            f"Rewrite only lines {a + 1}-{b} and output only the rewritten lines:\n"
            f"{fence}{lang}\n{FILE_MARK}{fence}\n"
        )
        pieces[FILE_MARK] = with_nl(part)
    parts.append(f"Instruction: {instruction}")
    opening = f"{fence}{lang}\n"
    if ask == "locate":
        parts.append(LOCATE)
        opening = f"{fence}\n"
    elif ask == "blocks":
        parts.append(edits.FORMAT)
        opening += edits.PREFILL
    pieces.update(context_pieces(context_files))
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


def numbered(lines: Sequence[str], start: int, end: int) -> str:
    """Lines ``[start, end)`` (0-based) of a file, each after its 1-based number and ": "
    (the way a file viewer shows them), for a prompt that shows a definition again."""
    return "".join(f"{n + 1}: {with_nl(lines[n])}" for n in range(start, end))


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
    ask = REVIEW_ASK.format(fence=fence_for(diff), diff=with_nl(diff))
    return _question_prompt(target, text, instruction, ask, path, context_files)


PLAN_ASK = (
    "Before any code is written: say in one or two sentences exactly what must change in "
    "the file to do this (which function or lines, and what the new code must do). Do not "
    "write code."
)


def plan_prompt(
    target: TargetModel,
    text: str,
    instruction: str,
    *,
    path: str | None = None,
    context_files: Sequence[tuple[str, str]] = (),
) -> Prompt:
    """The prompt that asks the model what must change in ``text`` to do ``instruction``, in
    words (``PLAN_ASK``): the prefix every rewrite of the file shares, then the instruction
    and the question; the assistant turn opens empty and its answer is free text."""
    return _question_prompt(target, text, instruction, PLAN_ASK, path, context_files)


def _question_prompt(
    target: TargetModel,
    text: str,
    instruction: str,
    question: str,
    path: str | None,
    context_files: Sequence[tuple[str, str]],
) -> Prompt:
    """The prefix every rewrite of ``text`` shares (system text, context files, the file),
    then the instruction and ``question``, the assistant turn open and empty: a question
    about the change asked on the file's warm prefix (``review_prompt``, ``plan_prompt``)."""
    messages, _ = rewrite_messages(text, instruction, path, list(context_files))
    user = messages[1]["content"] + "\n" + question
    messages = [messages[0], {"role": "user", "content": user}]
    pieces = {FILE_MARK: with_nl(text), **context_pieces(context_files)}
    ids, spans = splice(target, messages, "", pieces)
    prefix_end = max((end for _, end, lab in spans if lab == "file"), default=0)
    chat = chat_of(messages, "", pieces)
    return Prompt(tuple(ids), tuple(spans), None, prefix_end, text, chat=chat)


def rewrite_messages(
    text: str,
    instruction: str,
    path: str | None = None,
    context_files: list[tuple[str, str]] = (),
    full_text: str | None = None,
    feedback: str | None = None,
    edit: str = "whole",
    named: Sequence[str] = (),
    format_first: bool = False,
) -> tuple[list[dict[str, str]], str]:
    """Messages for a rewrite of ``text`` and the assistant prefix (the opening fence, and
    with ``edit="blocks"`` the opening of the first search/replace block).

    ``full_text`` is the whole file when ``text`` is only a region of it; it is
    shown for reference and the model is told to output the region alone.
    The text to rewrite appears as ``FILE_MARK`` and the whole file, in a region
    rewrite, as ``FULL_MARK``, for the caller to splice as pieces that end in a newline
    (the user's text is tokenized on its own and never parsed for special tokens).
    With ``feedback`` (the user's note on the previous output) the previous output follows
    the file as ``PREV_MARK`` and the note follows the instruction. With ``named`` (the names
    of definitions), the instruction is followed by those definitions' lines with their
    numbers, ``SHOWN_MARK`` (``numbered``). With ``format_first`` a blocks prompt has the
    format's text (``FORMAT_MARK``, for the caller to splice as ``edits.FORMAT``) before the
    instruction, not after it.
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
    early = format_first and edit == "blocks"
    if early:
        parts.append(FORMAT_MARK)
    parts.append(f"Instruction: {instruction}")
    if named:
        what = ", ".join(f"`{n}`" for n in named)
        parts.append(
            f"The lines of {what} in {name}, each after its line number (the numbers are "
            f"not part of the file):\n{fence}{lang}\n{SHOWN_MARK}{fence}"
        )
    if feedback is not None:
        parts.append(
            f"Feedback on your previous rewrite: {feedback}\n"
            "Rewrite the original again, following the instruction and this feedback."
        )
    opening = f"{fence}{lang}\n"
    if edit == "blocks":
        if not early:
            parts.append(edits.FORMAT)
        opening += edits.PREFILL
    elif edit != "whole":
        raise ValueError(f"unknown edit format {edit!r}")
    messages = [
        {"role": "system", "content": SYSTEM_REWRITE},
        {"role": "user", "content": "\n".join(parts)},
    ]
    return messages, opening
