"""Prompts for rewrites and context-grounded answers, and fenced-block extraction.

Contract:
  * ``rewrite_messages(text, instruction, path, region)`` builds chat messages
    asking for the whole rewritten text in one fenced block; ``fence_for(text)``
    picks a fence longer than any backtick run in the text (CommonMark), and the
    assistant turn is pre-filled with the opening fence so the output starts
    with the first line of the file. ``FILE_MARK``/``CTX_MARK`` placeholders let
    the caller tokenize the file and context pieces separately and know their
    token spans (the lookup drafter labels its sources with them). The whole file
    comes before anything that depends on the instruction or the region, so every
    rewrite of one file shares the prompt's prefix up to the file's end (the part a
    prompt cache or a warm-up keeps).
  * ``closing_fence_at(text, fence)`` finds where the block ends, for the stop
    check while streaming.
  * ``extract_block(raw, fence)`` recovers the rewritten text from what the
    model produced: a closed or unclosed fence, a repeated opening fence with a
    language tag, trailing prose. It returns None when nothing usable is there.
"""

from __future__ import annotations

import re
from pathlib import PurePath

FILE_MARK = "\x00SPECEDIT_FILE\x00"
FULL_MARK = "\x00SPECEDIT_FULL\x00"
CTX_MARK = "\x00SPECEDIT_CTX{}\x00"

SYSTEM_REWRITE = (
    "You are a precise code editor. Apply the user's instruction to the text and output "
    "the complete result in one fenced code block and nothing else. Change only what the "
    "instruction requires; copy every other line exactly as it is."
)
SYSTEM_ANSWER = (
    "You answer questions using the given documents. Quote them exactly where that helps; "
    "do not invent facts that are not in them."
)

_LANGS = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".jsx": "jsx",
    ".rs": "rust",
    ".go": "go",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".java": "java",
    ".rb": "ruby",
    ".sh": "bash",
    ".lua": "lua",
    ".md": "markdown",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".html": "html",
    ".css": "css",
    ".sql": "sql",
    ".kt": "kotlin",
    ".swift": "swift",
}


def language_for(path: str | None) -> str:
    return _LANGS.get(PurePath(path).suffix.lower(), "") if path else ""


def fence_for(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=0)
    return "`" * max(3, longest + 1)


def rewrite_messages(
    text: str,
    instruction: str,
    path: str | None = None,
    context: list[tuple[str, str]] = (),
    full_text: str | None = None,
) -> tuple[list[dict[str, str]], str]:
    """Messages for a rewrite of ``text`` and the assistant prefix (the opening fence).

    ``full_text`` is the whole file when ``text`` is only a region of it; it is
    shown for reference and the model is told to output the region alone.
    The text to rewrite appears as ``FILE_MARK`` and the whole file, in a region
    rewrite, as ``FULL_MARK``, for the caller to splice as pieces that end in a newline
    (the user's text is tokenized on its own and never parsed for special tokens).
    """
    fence = fence_for(text + (full_text or ""))
    lang = language_for(path)
    name = path or "the text"
    parts = []
    for i, (cpath, _ctext) in enumerate(context):
        parts.append(f"Context file {cpath}:\n{fence}\n{CTX_MARK.format(i)}{fence}\n")
    # the whole file comes first either way, so a region rewrite and a whole-file one
    # share the prompt's prefix up to the end of the file (see ``file_prefix_end``)
    whole = FILE_MARK if full_text is None else FULL_MARK
    parts.append(f"File {name}:\n")
    parts.append(f"{fence}{lang}\n{whole}{fence}\n")
    if full_text is not None:
        parts.append(
            "Rewrite only this part of it and output only the rewritten part:\n"
            f"{fence}{lang}\n{FILE_MARK}{fence}\n"
        )
    parts.append(f"Instruction: {instruction}")
    messages = [
        {"role": "system", "content": SYSTEM_REWRITE},
        {"role": "user", "content": "\n".join(parts)},
    ]
    return messages, f"{fence}{lang}\n"


def answer_messages(question: str, context: list[tuple[str, str]]) -> list[dict[str, str]]:
    parts = []
    for i, (cpath, ctext) in enumerate(context):
        fence = fence_for(ctext)
        parts.append(f"Document {cpath}:\n{fence}\n{CTX_MARK.format(i)}{_nl(ctext)}{fence}\n")
    parts.append(question)
    return [
        {"role": "system", "content": SYSTEM_ANSWER},
        {"role": "user", "content": "\n".join(parts)},
    ]


def _nl(text: str) -> str:
    return "" if not text or text.endswith("\n") else "\n"


def closing_fence_at(text: str, fence: str) -> int:
    """Index in ``text`` where a line consisting of the closing fence starts, or -1."""
    if text.startswith(fence) and (len(text) == len(fence) or text[len(fence)] in "\r\n \t"):
        return 0
    m = re.search(r"\n" + re.escape(fence) + r"[ \t]*(?:\r?\n|$)", text)
    return m.start() + 1 if m else -1


def extract_block(raw: str, fence: str, prefilled: bool = True) -> str | None:
    """The rewritten text inside the fenced block of ``raw`` (see module docstring)."""
    body = raw
    if not prefilled:
        m = re.search(r"(?m)^(`{3,})[\w.+-]*[ \t]*\n", body)
        if m is None:
            return None
        fence = m.group(1)
        body = body[m.end() :]
    else:
        # the model sometimes repeats the opening fence with a language tag
        m = re.match(r"[ \t]*" + re.escape(fence) + r"[\w.+-]*[ \t]*\n", body)
        if m:
            body = body[m.end() :]
    end = closing_fence_at(body, fence)
    if end >= 0:
        body = body[:end]
    elif fence != "```":  # unclosed long fence; a ``` line may still end it
        end = closing_fence_at(body, "```")
        body = body[:end] if end >= 0 else body
    if not body.strip():
        return None
    return body
