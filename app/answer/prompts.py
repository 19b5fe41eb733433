"""The prompts of a question answered from context files.

Contract: ``answer_prompt(target, question, context_files, style=)`` returns a ``Prompt``
(``app.runtime.prompt``) whose spans are the files (the lookup drafts from them) and whose prefix,
through the last file, is shared by every question about those files. ``quote`` style: the answer
quotes passages under ``[FILE]`` citations (``SYSTEM_QUOTE``, with one example turn;
``app.answer.quotes`` reads them); ``free``: the earlier prompt (``SYSTEM_ANSWER``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...engine.backend import TargetModel
from ..options import ANSWER_STYLES
from ..runtime.prompt import CTX_MARK, Prompt, chat_of, shown_paths, splice
from ..runtime.stream import fence_for

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


def _document(path: str, mark: str, text: str) -> str:
    """A file shown to answer from: its name, then ``mark`` (its text) in a fence."""
    fence = fence_for(text)
    return f"Document {path}:\n{fence}\n{mark}{_nl(text)}{fence}\n"


def _ask(question: str) -> str:
    return f"Question: {question}\n{QUOTE_ASK}"


def _nl(text: str) -> str:
    return "" if not text or text.endswith("\n") else "\n"
